package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Channel is the name of the echo plugin's channel.
const Channel = "echo"

// maxBig bounds echo_big's result (the kernel refuses larger payloads anyway).
const maxBig = 64 << 20

// echo is the plugin's state: what it delivered and received, for echo_status.
type echo struct {
	mu        sync.Mutex
	delivered []protocol.ChannelSendParams
	events    map[string]int
	paused    bool
	sent      int
}

func newEcho() *echo { return &echo{events: map[string]int{}} }

// obj is a JSON Schema object with the given string properties, all required.
func obj(props ...string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		name, typ, _ := strings.Cut(p, ":")
		if typ == "" {
			typ = "string"
		}
		fmt.Fprintf(&b, "%q:{\"type\":%q}", name, typ)
	}
	b.WriteString(`},"required":[`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _, _ := strings.Cut(p, ":")
		fmt.Fprintf(&b, "%q", name)
	}
	b.WriteString("]}")
	return json.RawMessage(b.String())
}

// decode reads a tool's arguments into v.
func decode(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

// plugin is the echo plugin's definition.
func (e *echo) plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:         "echo",
		Version:      "1.0.0",
		Instructions: "The echo plugin: an example of every HologramAgent plugin feature.",
		Tools: []sdk.Tool{
			{Name: "echo", Description: "Returns its text unchanged.", InputSchema: obj("text"), ReadOnly: true, Visibility: protocol.VisibilityAny, Run: e.echoTool},
			{Name: "echo_big", Description: "Returns a deterministic text of the given size in bytes (shared-memory demo).",
				InputSchema: obj("bytes:integer"), ReadOnly: true, Run: e.big},
			{Name: "echo_recall", Description: "Searches memory (in the current conversation's scope).", InputSchema: obj("query"),
				ReadOnly: true, Visibility: protocol.VisibilityAny, Run: e.recall}, // the kernel keeps it in the turn's scope
			{Name: "echo_remember", Description: "Stores a note in memory (in the current conversation's scope).",
				InputSchema: obj("text"), Visibility: protocol.VisibilityAny, Run: e.remember}, // written in the turn's scope
			{Name: "echo_notify", Description: "Notifies the owner.", InputSchema: obj("title", "body"), Run: e.notify},
			{Name: "echo_complete", Description: "Asks the owner's default model one question.", InputSchema: obj("prompt"), Run: e.complete},
			{Name: "echo_inject", Description: "Injects a message on the echo channel as if the partner had sent it.",
				InputSchema: obj("partner", "text"), Run: e.inject},
			{Name: "echo_status", Description: "Reports the plugin's state: pause, events received, messages delivered.",
				InputSchema: obj(), ReadOnly: true, Run: e.status},
		},
		Hooks: []sdk.Hook{
			// "/ping" is answered without the model.
			{Name: "shortcut", Stage: sdk.StageOnInput, Priority: 10, Run: e.shortcut},
			// A call whose arguments contain "forbidden" is denied.
			{Name: "guard", Stage: sdk.StageBeforeToolCall, Priority: 10, Run: e.guard},
			// With "/slow" in the input this hook outlives its timeout; the kernel skips it.
			{Name: "slow", Stage: sdk.StagePreAction, Timeout: 300 * time.Millisecond, Run: e.slow},
			// With "/sign" in the input the reply is signed.
			{Name: "sign", Stage: sdk.StageBeforeOutput, Run: e.sign},
		},
		Channels: []sdk.Channel{{Name: Channel, Send: e.send}},
		Events:   []string{"turn_finished", "plugin_started"},
		OnEvent:  e.event,
		OnPause:  e.pause,
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			k.Logger().Info("echo started", "plugin", k.Name(), "native", k.Native(), "shm", k.SharedMemory(),
				"capabilities", k.Capabilities(), "paused", k.Paused())
			return nil
		},
	}
}

func (e *echo) echoTool(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Text string }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(a.Text), nil
}

// BigText is echo_big's deterministic text of n bytes: 64-byte lines "<offset>:<letters>\n",
// the offset in 8 hex digits and letter i of the line at offset off being 'a'+(off/64+i)%26,
// cut at n bytes.
func BigText(n int) string {
	var b strings.Builder
	b.Grow(n + 64)
	for b.Len() < n {
		off := b.Len()
		fmt.Fprintf(&b, "%08x:", off)
		for i := range 54 {
			b.WriteByte(byte('a' + (off/64+i)%26))
		}
		b.WriteByte('\n')
	}
	return b.String()[:n]
}

func (e *echo) big(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Bytes int }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	if a.Bytes < 0 || a.Bytes > maxBig {
		return sdk.Result{}, fmt.Errorf("bytes must be from 0 to %d, got %d", maxBig, a.Bytes)
	}
	return sdk.Text(BigText(a.Bytes)), nil
}

func (e *echo) recall(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Query string }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	items, scope, err := k.Recall(ctx, a.Query, 5)
	if err != nil {
		return sdk.Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scope %s: %d memories", scope, len(items))
	for _, it := range items {
		fmt.Fprintf(&b, "\n- [%s] %s", it.Scope, it.Content)
	}
	return sdk.Text(b.String()), nil
}

func (e *echo) remember(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Text string }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	res, err := k.Commit(ctx, a.Text, map[string]string{"source": "echo_remember"})
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(fmt.Sprintf("remembered as event %d in %s (channel %s, scope %s)", res.ID, res.Session, res.Channel, res.Scope)), nil
}

func (e *echo) notify(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Title, Body string }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	where, err := k.Notify(ctx, a.Title, a.Body)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text("notified the owner (" + where + ")"), nil
}

func (e *echo) complete(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Prompt string }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	res, err := k.Complete(ctx, protocol.CompleteParams{System: "Answer briefly.",
		Messages: []protocol.ChatMessage{{Role: "user", Content: a.Prompt}}, MaxTokens: 256})
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(fmt.Sprintf("the model says: %s (%d tokens)", res.Text, res.Usage.TotalTokens)), nil
}

func (e *echo) inject(ctx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ Partner, Text string }
	if err := decode(args, &a); err != nil {
		return sdk.Result{}, err
	}
	res, err := k.Input(ctx, sdk.InMessage{Channel: Channel, Partner: a.Partner, Text: a.Text,
		Scene: "chan:" + Channel + "/peer:" + a.Partner})
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text("injected into session " + res.Session + " (scene " + res.Scene + ")"), nil
}

// Status is echo_status's answer.
type Status struct {
	Paused    bool                         `json:"paused"`
	Events    map[string]int               `json:"events"`
	Delivered []protocol.ChannelSendParams `json:"delivered"`
}

func (e *echo) status(_ context.Context, _ *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
	e.mu.Lock()
	st := Status{Paused: e.paused, Events: map[string]int{}, Delivered: append([]protocol.ChannelSendParams{}, e.delivered...)}
	for k, v := range e.events {
		st.Events[k] = v
	}
	e.mu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(string(b)), nil
}

func (e *echo) shortcut(_ context.Context, _ *sdk.Kernel, d *sdk.StageData) (sdk.Patch, error) {
	if strings.TrimSpace(d.Input) == "/ping" {
		return sdk.Patch{Reply: sdk.Ptr("pong from echo")}, nil
	}
	return sdk.Patch{}, nil
}

func (e *echo) guard(_ context.Context, _ *sdk.Kernel, d *sdk.StageData) (sdk.Patch, error) {
	if d.Call != nil && strings.Contains(d.Call.Arguments, "forbidden") {
		return sdk.Patch{Deny: sdk.Ptr("echo guard: the arguments mention something forbidden")}, nil
	}
	return sdk.Patch{}, nil
}

func (e *echo) slow(ctx context.Context, k *sdk.Kernel, d *sdk.StageData) (sdk.Patch, error) {
	if !strings.Contains(d.Input, "/slow") {
		return sdk.Patch{}, nil
	}
	k.Logger().Info("slow hook waits for the kernel to give up", "turn", d.TurnID)
	select {
	case <-ctx.Done():
		k.Logger().Info("slow hook cancelled", "turn", d.TurnID, "err", ctx.Err())
		return sdk.Patch{}, ctx.Err()
	case <-time.After(time.Minute):
	}
	return sdk.Patch{AppendMessages: []protocol.ChatMessage{{Role: "system", Content: "the slow hook ran"}}}, nil
}

func (e *echo) sign(_ context.Context, _ *sdk.Kernel, d *sdk.StageData) (sdk.Patch, error) {
	if strings.Contains(d.Input, "/sign") {
		return sdk.Patch{Text: sdk.Ptr(d.Text + " — echo")}, nil
	}
	return sdk.Patch{}, nil
}

// errUnreachable is the delivery failure for the partner "unreachable".
var errUnreachable = errors.New("partner unreachable")

func (e *echo) send(_ context.Context, k *sdk.Kernel, m sdk.OutMessage) (string, error) {
	if m.Partner == "unreachable" {
		k.Logger().Warn("echo delivery failed", "partner", m.Partner, "turn", m.TurnID)
		return "", errUnreachable
	}
	e.mu.Lock()
	e.sent++
	id := fmt.Sprintf("echo-%d", e.sent)
	e.delivered = append(e.delivered, m)
	e.mu.Unlock()
	k.Logger().Info("echo delivered", "partner", m.Partner, "session", m.Session, "turn", m.TurnID, "text", m.Text, "id", id)
	return id, nil
}

func (e *echo) event(_ context.Context, k *sdk.Kernel, ev sdk.Event) {
	e.mu.Lock()
	e.events[ev.Type]++
	e.mu.Unlock()
	k.Logger().Info("echo event", "type", ev.Type)
}

func (e *echo) pause(_ context.Context, k *sdk.Kernel, paused bool) {
	e.mu.Lock()
	e.paused = paused
	e.mu.Unlock()
	if paused {
		k.Logger().Info("echo paused")
	} else {
		k.Logger().Info("echo resumed")
	}
}
