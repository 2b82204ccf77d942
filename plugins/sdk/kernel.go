package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Kernel is the plugin's handle on the kernel: the methods it may call (each behind its
// capability) and what the handshake told it. Handlers receive it; it is safe for concurrent
// use.
type Kernel struct {
	s      *server
	paused atomic.Bool
}

// turnKey carries the turn a request belongs to.
type turnKey struct{}

// withTurn returns ctx carrying turn.
func withTurn(ctx context.Context, turn string) context.Context {
	return context.WithValue(ctx, turnKey{}, turn)
}

// TurnFrom returns the id of the turn ctx belongs to: set in the ctx of tool calls and hooks
// that run inside an agent turn.
func TurnFrom(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(turnKey{}).(string)
	return t, ok && t != ""
}

// sessionKey carries the session a tool call belongs to.
type sessionKey struct{}

// SessionFrom returns the id of the session a tool call's turn runs in (from tools/call's
// _meta): a tool keeping state per conversation keys it by this.
func SessionFrom(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(sessionKey{}).(string)
	return s, ok && s != ""
}

// Name returns the plugin's name in this installation (from the handshake; the Plugin's Name
// before it).
func (k *Kernel) Name() string {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if k.s.hello.Plugin != "" {
		return k.s.hello.Plugin
	}
	return k.s.p.Name
}

// Capabilities returns the capabilities the manifest declares, as the kernel reported them.
func (k *Kernel) Capabilities() []string {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	return slices.Clone(k.s.hello.Capabilities)
}

// Native reports whether the kernel offered the native extensions (an MCP client that is not
// HologramAgent does not).
func (k *Kernel) Native() bool {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	return k.s.native
}

// SharedMemory reports whether the plugin has a shared-memory region.
func (k *Kernel) SharedMemory() bool { return k.s.reg() != nil }

// Paused reports whether the kernel is paused (capability "lifecycle").
func (k *Kernel) Paused() bool { return k.paused.Load() }

// Logger returns the plugin's logger (JSON lines on stderr).
func (k *Kernel) Logger() *slog.Logger { return k.s.log }

// call makes a kernel call, mapping a capability refusal to a *CapabilityError.
func (k *Kernel) call(ctx context.Context, method string, params, result any) error {
	err := k.s.conn.Call(ctx, method, params, result)
	var rpc *protocol.Error
	if errors.As(err, &rpc) && rpc.Code == protocol.CodeCapability {
		var d struct {
			Capability string `json:"capability"`
		}
		_ = json.Unmarshal(rpc.Data, &d)
		return &CapabilityError{Method: method, Capability: d.Capability, Message: rpc.Message}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Input injects a message that arrived on one of the plugin's channels (capability
// "channels"): the kernel runs an agent turn in the session of the channel and partner and
// delivers the reply through that channel's Send. It returns once the kernel accepted the
// message (the turn runs on). Blocks with Data over 64 KiB travel through shared memory; the
// kernel acknowledges them (shm/release) whether it accepts the message or not.
func (k *Kernel) Input(ctx context.Context, m InMessage) (protocol.ChannelInputResult, error) {
	if strings.TrimSpace(m.Channel) == "" || strings.TrimSpace(m.Partner) == "" {
		return protocol.ChannelInputResult{}, errors.New("channel/input: channel and partner are required")
	}
	var refs []protocol.Ref
	blocks := slices.Clone(m.Blocks)
	for i := range blocks {
		if len(blocks[i].Data) <= protocol.InlineMax {
			continue
		}
		reg := k.s.reg()
		if reg == nil {
			return protocol.ChannelInputResult{}, fmt.Errorf("channel/input: block %d has %d bytes: %w (at most %d inline)",
				i+1, len(blocks[i].Data), ErrNoRegion, protocol.InlineMax)
		}
		ref, err := reg.Put(blocks[i].Data)
		if err != nil {
			k.s.release(contentRefs(refs))
			return protocol.ChannelInputResult{}, fmt.Errorf("channel/input: block %d through shared memory: %w", i+1, err)
		}
		refs = append(refs, ref)
		blocks[i].Data, blocks[i].Ref = nil, &ref
	}
	m.Blocks = blocks
	var res protocol.ChannelInputResult
	if err := k.call(ctx, protocol.MethodChannelInput, m, &res); err != nil {
		var ce *CapabilityError
		if errors.As(err, &ce) {
			k.s.release(contentRefs(refs)) // refused unread: the kernel sends no shm/release
		}
		return protocol.ChannelInputResult{}, err
	}
	return res, nil
}

// contentRefs wraps refs as content items for release.
func contentRefs(refs []protocol.Ref) []protocol.Content {
	out := make([]protocol.Content, len(refs))
	for i := range refs {
		out[i].Ref = &refs[i]
	}
	return out
}

// Recall searches memory (capability "memory") in the scope of the turn ctx belongs to (see
// [TurnFrom]): a plugin serving a group channel's turn sees only what that group may see.
// Outside a turn it sees public memory only. It returns the items and the scope searched.
func (k *Kernel) Recall(ctx context.Context, query string, n int) ([]protocol.MemoryItem, string, error) {
	turn, _ := TurnFrom(ctx)
	var res protocol.MemoryRecallResult
	if err := k.call(ctx, protocol.MethodMemoryRecall, protocol.MemoryRecallParams{Turn: turn, Query: query, K: n}, &res); err != nil {
		return nil, "", err
	}
	return res.Items, res.Scope, nil
}

// Commit stores text as a memory event (capability "memory"): in the channel, partner and
// scope of the turn ctx belongs to, or, outside a turn, owner-private on channel
// plugin:<name>.
func (k *Kernel) Commit(ctx context.Context, text string, meta map[string]string) (protocol.MemoryCommitResult, error) {
	turn, _ := TurnFrom(ctx)
	var res protocol.MemoryCommitResult
	err := k.call(ctx, protocol.MethodMemoryCommit, protocol.MemoryCommitParams{Turn: turn, Text: text, Meta: meta}, &res)
	return res, err
}

// Notify tells the owner something (capability "notify"): a desktop notification or a message
// in the owner's private chat, never a channel. It returns where it went.
func (k *Kernel) Notify(ctx context.Context, title, body string) (string, error) {
	var res protocol.NotifyResult
	if err := k.call(ctx, protocol.MethodOwnerNotify, protocol.NotifyParams{Title: title, Body: body}, &res); err != nil {
		return "", err
	}
	return res.DeliveredTo, nil
}

// Complete asks the owner's default LLM provider for one completion (capability "llm").
func (k *Kernel) Complete(ctx context.Context, req protocol.CompleteParams) (protocol.CompleteResult, error) {
	var res protocol.CompleteResult
	err := k.call(ctx, protocol.MethodLLMComplete, req, &res)
	return res, err
}

// Subscribe replaces the plugin's event subscription with types (capability "events"); the
// events reach Plugin.OnEvent. Plugins receive kernel events; they never publish them.
func (k *Kernel) Subscribe(ctx context.Context, types ...string) error {
	return k.s.subscribe(ctx, types)
}
