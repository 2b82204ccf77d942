package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Services is the kernel's side of the native extensions (ARCHITECTURE.md §5): what native
// plugins may ask of the kernel and where their hooks go. The kernel implements it; the host
// checks each call's capability against the plugin's manifest before calling it, so an
// implementation never sees a call the manifest does not allow. Methods are called from the
// host's goroutines, concurrently, and must not call back into the Host.
type Services interface {
	// SetHooks replaces every stage hook of plugin with hooks (an empty list removes them).
	SetHooks(plugin string, hooks []HookInfo) error
	// ChannelInput injects a message that arrived on one of plugin's channels; blocks arrive
	// with their bytes in Data.
	ChannelInput(ctx context.Context, plugin string, in protocol.ChannelInputParams) (protocol.ChannelInputResult, error)
	// Recall and Commit are memory/recall and memory/commit.
	Recall(ctx context.Context, plugin string, p protocol.MemoryRecallParams) (protocol.MemoryRecallResult, error)
	Commit(ctx context.Context, plugin string, p protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error)
	// Notify tells the owner something on the plugin's behalf.
	Notify(ctx context.Context, plugin string, p protocol.NotifyParams) (protocol.NotifyResult, error)
	// Complete runs one completion on the owner's default provider.
	Complete(ctx context.Context, plugin string, p protocol.CompleteParams) (protocol.CompleteResult, error)
	// Subscribe delivers the kernel events of types to deliver until stop is called; deliver
	// never blocks for long (the host drops what the plugin cannot take).
	Subscribe(plugin string, types []string, deliver func(protocol.EventParams)) (stop func(), err error)
	// Paused reports whether the kernel is paused (told to plugins at their handshake).
	Paused() bool
}

// HookInfo is one stage hook of a plugin, as the kernel registers it.
type HookInfo struct {
	Name     string // the plugin's name for it
	Stage    string
	Priority int
	Timeout  time.Duration // the effective per-run timeout
	Run      HookFunc
}

// HookFunc runs a plugin's hook. It returns within the hook's timeout: an error when the plugin
// did not answer in time, answered with an error, or is not running.
type HookFunc func(ctx context.Context, d protocol.StageData) (protocol.HookPatch, error)

// ErrNotRunning is wrapped by the errors of calls to a plugin that has no running process.
var ErrNotRunning = errors.New("plugin is not running")

// Hook timeouts (Options.HookTimeout, Options.MaxHookTimeout) when unset.
const (
	DefaultHookTimeout    = 2 * time.Second
	DefaultMaxHookTimeout = 30 * time.Second
)

// counter counts the bytes crossing one pipe; it passes Close through.
type counter struct {
	n atomic.Uint64
}

type countingReader struct {
	r interface {
		Read([]byte) (int, error)
		Close() error
	}
	c *counter
}

func (r countingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.c.n.Add(uint64(n))
	return n, err
}

func (r countingReader) Close() error { return r.r.Close() }

type countingWriter struct {
	w interface {
		Write([]byte) (int, error)
		Close() error
	}
	c *counter
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	w.c.n.Add(uint64(n))
	return n, err
}

func (w countingWriter) Close() error { return w.w.Close() }

// Traffic is what crossed a plugin's protocol pipes since its current process started.
type Traffic struct {
	FromPlugin uint64 // bytes the host read from the plugin's stdout
	ToPlugin   uint64 // bytes the host wrote to the plugin's stdin
	Region     bool   // the process has a shared-memory region
}

// Traffic returns the byte counts of the named plugin's pipes (its current process); a plugin
// that is not running is [ErrNotRunning].
func (h *Host) Traffic(name string) (Traffic, error) {
	in, err := h.running(name)
	if err != nil {
		return Traffic{}, err
	}
	return Traffic{FromPlugin: in.fromPlugin.n.Load(), ToPlugin: in.toPlugin.n.Load(), Region: in.region != nil}, nil
}

// running returns the named plugin's live instance.
func (h *Host) running(name string) (*instance, error) {
	p, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	in := p.inst
	p.mu.Unlock()
	if in == nil || in.isDead() {
		return nil, fmt.Errorf("plugin %s: %w", name, ErrNotRunning)
	}
	return in, nil
}

// SendChannel delivers a reply on one of the plugin's channels (channel/send) and returns what
// the plugin answered: an error when it could not deliver, is not running, or does not carry
// the channel. Blocks over protocol.InlineMax go through the plugin's region.
func (h *Host) SendChannel(ctx context.Context, plugin string, m protocol.ChannelSendParams) (protocol.ChannelSendResult, error) {
	in, err := h.running(plugin)
	if err != nil {
		return protocol.ChannelSendResult{}, err
	}
	if !in.hasCap(protocol.CapChannels) || !slices.Contains(in.declaredChannels(), m.Channel) {
		return protocol.ChannelSendResult{}, fmt.Errorf("plugin %s does not carry channel %q", plugin, m.Channel)
	}
	m.Blocks = slices.Clone(m.Blocks)
	var refs []protocol.Ref
	for i := range m.Blocks {
		if in.region == nil || len(m.Blocks[i].Data) <= protocol.InlineMax {
			continue
		}
		ref, err := in.region.Put(m.Blocks[i].Data)
		if err != nil {
			in.releaseAll(refs)
			return protocol.ChannelSendResult{}, fmt.Errorf("plugin %s: block %d through shared memory: %w", plugin, i+1, err)
		}
		refs = append(refs, ref)
		m.Blocks[i].Data, m.Blocks[i].Ref = nil, &ref
	}
	defer in.releaseAll(refs) // the plugin has answered (or never will)
	var res protocol.ChannelSendResult
	if err := in.conn.Call(ctx, protocol.MethodChannelSend, m, &res); err != nil {
		var rpc *protocol.Error
		if errors.As(err, &rpc) {
			return res, fmt.Errorf("plugin %s: %s", plugin, rpc.Message)
		}
		if errors.Is(err, protocol.ErrClosed) {
			return res, in.diedDuringCall()
		}
		return res, fmt.Errorf("plugin %s: channel/send: %w", plugin, err)
	}
	return res, nil
}

// SetPaused tells every running native plugin that declares capability lifecycle that the
// kernel paused (kernel/paused) or resumed (kernel/resumed).
func (h *Host) SetPaused(paused bool) {
	method := protocol.NotifResumed
	if paused {
		method = protocol.NotifPaused
	}
	h.mu.Lock()
	ps := make([]*plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		ps = append(ps, p)
	}
	h.mu.Unlock()
	for _, p := range ps {
		p.mu.Lock()
		in := p.inst
		p.mu.Unlock()
		if in == nil || in.isDead() || !in.hasCap(protocol.CapLifecycle) {
			continue
		}
		if err := in.conn.Notify(method, nil); err != nil {
			p.log.Warn("telling the plugin about the pause", "method", method, "err", err)
		}
	}
}

// hasCap reports whether the plugin is native and its manifest declares capability.
func (in *instance) hasCap(capability string) bool {
	m := in.p.prep.manifest
	return in.p.native() && m != nil && slices.Contains(m.Capabilities, capability)
}

// native state of an instance, set during the handshake.
type nativeState struct {
	region region // nil: no shared memory; set before the process starts

	offerMu  sync.Mutex // guards offer and channels: a plugin may call before its handshake ends
	offer    protocol.NativeOffer
	channels []string

	subMu sync.Mutex
	unsub func() // the current event subscription's stop
}

// hello builds the native extensions offered in initialize.
func (in *instance) hello() protocol.NativeHello {
	h := protocol.NativeHello{Version: protocol.NativeVersion, Plugin: in.p.name(),
		Capabilities: slices.Clone(in.p.prep.manifest.Capabilities)}
	if h.Capabilities == nil {
		h.Capabilities = []string{}
	}
	if in.region != nil {
		info := in.region.Info()
		h.Shm = &info
	}
	if s := in.p.h.opts.Services; s != nil {
		h.Paused = s.Paused()
	}
	return h
}

// declaredChannels returns the channels the plugin declared in its handshake.
func (in *instance) declaredChannels() []string {
	in.offerMu.Lock()
	defer in.offerMu.Unlock()
	return in.channels
}

// acceptOffer checks the plugin's native offer against its manifest and keeps it.
func (in *instance) acceptOffer(o protocol.NativeOffer) error {
	if len(o.Hooks) > 0 && !in.hasCap(protocol.CapHooks) {
		return fmt.Errorf("the plugin declares %d hooks but its manifest does not declare capability %q", len(o.Hooks), protocol.CapHooks)
	}
	if len(o.Channels) > 0 && !in.hasCap(protocol.CapChannels) {
		return fmt.Errorf("the plugin declares channels %s but its manifest does not declare capability %q",
			strings.Join(o.Channels, ", "), protocol.CapChannels)
	}
	seen := map[string]bool{}
	for _, c := range o.Channels {
		if c == "" || seen[c] {
			return fmt.Errorf("the plugin declares an empty or repeated channel name %q", c)
		}
		seen[c] = true
	}
	names := map[string]bool{}
	for _, hd := range o.Hooks {
		if hd.Name == "" || names[hd.Name] {
			return fmt.Errorf("the plugin declares an empty or repeated hook name %q", hd.Name)
		}
		names[hd.Name] = true
		if hd.TimeoutMS < 0 {
			return fmt.Errorf("hook %s: negative timeout_ms %d", hd.Name, hd.TimeoutMS)
		}
	}
	in.offerMu.Lock()
	in.offer, in.channels = o, slices.Clone(o.Channels)
	in.offerMu.Unlock()
	return nil
}

// attachHooks registers the offered hooks with the kernel, unless this instance is dead.
func (in *instance) attachHooks() error {
	p := in.p
	svc := p.h.opts.Services
	in.offerMu.Lock()
	decls := in.offer.Hooks
	in.offerMu.Unlock()
	if svc == nil || len(decls) == 0 {
		return nil
	}
	opts := p.h.opts
	hooks := make([]HookInfo, 0, len(decls))
	for _, hd := range decls {
		timeout := opts.HookTimeout
		if hd.TimeoutMS > 0 {
			timeout = time.Duration(hd.TimeoutMS) * time.Millisecond
		}
		timeout = min(timeout, opts.MaxHookTimeout)
		hooks = append(hooks, HookInfo{Name: hd.Name, Stage: hd.Stage, Priority: hd.Priority, Timeout: timeout,
			Run: in.hookFunc(hd.Name, timeout)})
	}
	p.toolsMu.Lock()
	defer p.toolsMu.Unlock()
	if in.isDead() || in.detached {
		return errors.New("handshake: the plugin stopped before its hooks were attached")
	}
	if err := svc.SetHooks(p.name(), hooks); err != nil {
		return fmt.Errorf("handshake: hooks: %w", err)
	}
	p.hooksOf = in
	return nil
}

// hookFunc returns the HookFunc of the plugin's hook on this instance.
func (in *instance) hookFunc(hook string, timeout time.Duration) HookFunc {
	return func(ctx context.Context, d protocol.StageData) (protocol.HookPatch, error) {
		if in.isDead() {
			return protocol.HookPatch{}, fmt.Errorf("plugin %s: %w", in.p.name(), ErrNotRunning)
		}
		ctx, cancel, timedOut := in.timeoutCtx(ctx, timeout, nil)
		defer cancel()
		params := protocol.HookRunParams{Hook: hook, Data: &d}
		if in.region != nil {
			raw, err := json.Marshal(d)
			if err != nil {
				return protocol.HookPatch{}, fmt.Errorf("hook %s/%s: encoding stage data: %w", in.p.name(), hook, err)
			}
			if len(raw) > protocol.InlineMax {
				ref, err := in.region.Put(raw)
				if err != nil {
					return protocol.HookPatch{}, fmt.Errorf("hook %s/%s: %d bytes of stage data through shared memory: %w", in.p.name(), hook, len(raw), err)
				}
				params = protocol.HookRunParams{Hook: hook, DataRef: &ref}
				defer in.releaseAll([]protocol.Ref{ref}) // once the plugin answered, or gave up
			}
		}
		var patch protocol.HookPatch
		err := in.conn.Call(ctx, protocol.MethodHookRun, params, &patch)
		switch {
		case err == nil:
			return patch, nil
		case timedOut():
			return protocol.HookPatch{}, fmt.Errorf("hook %s/%s: no answer within %s; skipped", in.p.name(), hook, timeout)
		case errors.Is(err, protocol.ErrClosed) || in.isDead():
			return protocol.HookPatch{}, fmt.Errorf("hook %s/%s: %w", in.p.name(), hook, ErrNotRunning)
		}
		var rpc *protocol.Error
		if errors.As(err, &rpc) {
			return protocol.HookPatch{}, fmt.Errorf("hook %s/%s: %s", in.p.name(), hook, rpc.Message)
		}
		return protocol.HookPatch{}, fmt.Errorf("hook %s/%s: %w", in.p.name(), hook, err)
	}
}

// serveNative answers a native plugin's call of a kernel method whose capability the manifest
// declares.
func (in *instance) serveNative(ctx context.Context, method string, params json.RawMessage) (any, error) {
	svc := in.p.h.opts.Services
	if svc == nil {
		return nil, &protocol.Error{Code: protocol.MethodNotFound,
			Message: fmt.Sprintf("method %s is not available: this host has no kernel services", method)}
	}
	name := in.p.name()
	switch method {
	case protocol.MethodChannelInput:
		var p protocol.ChannelInputParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if declared := in.declaredChannels(); !slices.Contains(declared, p.Channel) {
			return nil, &protocol.Error{Code: protocol.InvalidParams,
				Message: fmt.Sprintf("channel %q was not declared in initialize (declared: %s)", p.Channel, strings.Join(declared, ", "))}
		}
		var refs []protocol.Ref
		for i := range p.Blocks {
			if ref := p.Blocks[i].Ref; ref != nil {
				refs = append(refs, *ref)
				b, err := in.readRef(*ref)
				if err != nil {
					in.ackRefs(refs)
					return nil, &protocol.Error{Code: protocol.InvalidParams, Message: fmt.Sprintf("block %d: %v", i+1, err)}
				}
				p.Blocks[i].Data, p.Blocks[i].Ref = b, nil
			}
		}
		in.ackRefs(refs)
		return rpcResult(svc.ChannelInput(ctx, name, p))
	case protocol.MethodMemoryRecall:
		var p protocol.MemoryRecallParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return rpcResult(svc.Recall(ctx, name, p))
	case protocol.MethodMemoryCommit:
		var p protocol.MemoryCommitParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return rpcResult(svc.Commit(ctx, name, p))
	case protocol.MethodOwnerNotify:
		var p protocol.NotifyParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return rpcResult(svc.Notify(ctx, name, p))
	case protocol.MethodLLMComplete:
		var p protocol.CompleteParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return rpcResult(svc.Complete(ctx, name, p))
	case protocol.MethodOwnerApprove:
		return in.serveApprove(ctx, svc, params)
	case protocol.MethodEventsSubscribe:
		var p protocol.EventsSubscribeParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return in.subscribe(p.Types)
	}
	return nil, &protocol.Error{Code: protocol.MethodNotFound,
		Message: fmt.Sprintf("method %s (capability %q) is not available in this version of the host", method, protocol.CapabilityFor(method))}
}

// decodeParams unmarshals params into v, or returns an InvalidParams error.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	return nil
}

// rpcResult returns res, or err as a JSON-RPC error whose message is the kernel's.
func rpcResult[R any](res R, err error) (any, error) {
	if err != nil {
		var rpc *protocol.Error
		if errors.As(err, &rpc) {
			return nil, rpc
		}
		return nil, &protocol.Error{Code: protocol.InternalError, Message: err.Error()}
	}
	return res, nil
}

// subscribe replaces the instance's event subscription. Events go through the region's ring
// when there is one (never blocking; the ring counts what it drops), else as events/event
// notifications.
func (in *instance) subscribe(types []string) (any, error) {
	for _, t := range types {
		if strings.TrimSpace(t) == "" {
			return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: an empty event type"}
		}
	}
	in.subMu.Lock()
	defer in.subMu.Unlock()
	if in.unsub != nil {
		in.unsub()
		in.unsub = nil
	}
	if in.isDead() {
		return nil, &protocol.Error{Code: protocol.InternalError, Message: "the plugin is stopping"}
	}
	if len(types) == 0 {
		return protocol.EventsSubscribeResult{Ring: in.region != nil}, nil
	}
	deliver := func(e protocol.EventParams) {
		if in.isDead() {
			return
		}
		if in.region != nil {
			raw, err := json.Marshal(e)
			if err != nil {
				in.p.log.Warn("event not encoded", "type", e.Type, "err", err)
				return
			}
			// An event too long for a ring slot goes over the pipe instead.
			if len(raw) <= in.region.MaxEvent() {
				if dropped := in.region.Publish(raw); dropped {
					in.p.log.Debug("event ring full; an unread event was overwritten", "type", e.Type)
				}
				return
			}
		}
		if err := in.conn.Notify(protocol.NotifEvent, e); err != nil && !in.isDead() {
			in.p.log.Warn("event not delivered", "type", e.Type, "err", err)
		}
	}
	stop, err := in.p.h.opts.Services.Subscribe(in.p.name(), slices.Clone(types), deliver)
	if err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: err.Error()}
	}
	in.unsub = stop
	return protocol.EventsSubscribeResult{Ring: in.region != nil}, nil
}

// endNative ends what the instance holds beyond its tools: its event subscription.
func (in *instance) endNative() {
	in.subMu.Lock()
	defer in.subMu.Unlock()
	if in.unsub != nil {
		in.unsub()
		in.unsub = nil
	}
}

// readRef copies bytes the plugin put in its arena; the caller acknowledges the reference with
// ackRefs once done.
func (in *instance) readRef(ref protocol.Ref) ([]byte, error) {
	if in.region == nil {
		return nil, fmt.Errorf("the plugin sent %s but has no shared-memory region", ref)
	}
	b, err := in.region.Copy(ref)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return b, nil
}

// ackRefs tells the plugin (shm/release) that the kernel is done with references into its
// arena, so it can free them.
func (in *instance) ackRefs(refs []protocol.Ref) {
	if len(refs) == 0 || in.isDead() {
		return
	}
	if err := in.conn.Notify(protocol.NotifRelease, protocol.ReleaseParams{Refs: refs}); err != nil && !in.isDead() {
		in.p.log.Warn("acknowledging shared-memory references", "refs", len(refs), "err", err)
	}
}

// releaseAll releases refs the host put in the region and will not send after all.
func (in *instance) releaseAll(refs []protocol.Ref) {
	for _, ref := range refs {
		if err := in.region.Release(ref); err != nil {
			in.p.log.Warn("releasing a shared-memory reference", "ref", ref.String(), "err", err)
		}
	}
}

// resolveRefs replaces the region references of a tools/call result by their bytes: a text
// item's text, a media item's data (base64, as MCP carries it).
func (in *instance) resolveRefs(res *protocol.CallToolResult) error {
	var refs []protocol.Ref
	defer func() { in.ackRefs(refs) }()
	for i := range res.Content {
		c := &res.Content[i]
		if c.Ref == nil {
			continue
		}
		refs = append(refs, *c.Ref)
		b, err := in.readRef(*c.Ref)
		if err != nil {
			return err
		}
		c.Ref = nil
		switch c.Type {
		case "text":
			c.Text = string(b)
		default:
			c.Data = base64.StdEncoding.EncodeToString(b)
		}
	}
	return nil
}
