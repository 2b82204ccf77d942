package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
	"github.com/hologramagent/hologram/plugins/host"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// fakeHost is a hand-written pluginHost: Add "starts" a plugin at once, its tools given by
// tools[name], attached through the kernel's registry as the real host does.
type fakeHost struct {
	reg   host.Registry
	tools map[string][]host.ToolInfo

	mu      sync.Mutex
	plugins map[string]*host.Status
	added   []host.Spec
	addErr  error
	closed  bool
	pauses  []bool                       // SetPaused calls
	pauseCh chan bool                    // if set, receives every SetPaused
	sent    []protocol.ChannelSendParams // SendChannel calls
}

func (h *fakeHost) Add(_ context.Context, s host.Spec) (host.Status, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addErr != nil {
		return host.Status{}, h.addErr
	}
	if _, ok := h.plugins[s.Name]; ok {
		return host.Status{}, fmt.Errorf("plugin %s: %w", s.Name, host.ErrExists)
	}
	h.added = append(h.added, s)
	st := &host.Status{Name: s.Name, Kind: s.Kind, State: host.StateDisabled, Command: s.Command, Dir: s.Dir, Tools: []string{}}
	h.plugins[s.Name] = st
	if !s.Disabled {
		h.start(st)
	}
	return *st, nil
}

func (h *fakeHost) start(st *host.Status) {
	st.State, st.PID = host.StateRunning, 100+len(h.added)
	st.Tools = []string{}
	for _, t := range h.tools[st.Name] {
		call := func(_ context.Context, args json.RawMessage) (string, error) {
			return st.Name + "/" + t.Name + " " + string(args), nil
		}
		name, err := h.reg.AddTool(st.Name, t, call)
		if err != nil {
			st.LastError = err.Error()
			continue
		}
		st.Tools = append(st.Tools, name)
	}
}

func (h *fakeHost) stop(st *host.Status, state string) {
	h.reg.RemoveTools(st.Name)
	st.State, st.PID, st.Tools = state, 0, []string{}
}

func (h *fakeHost) get(name string) (*host.Status, error) {
	st := h.plugins[name]
	if st == nil {
		return nil, fmt.Errorf("plugin %s: %w", name, host.ErrNotFound)
	}
	return st, nil
}

func (h *fakeHost) Remove(_ context.Context, name string) (host.Status, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, err := h.get(name)
	if err != nil {
		return host.Status{}, err
	}
	h.stop(st, host.StateStopped)
	delete(h.plugins, name)
	return *st, nil
}

func (h *fakeHost) Enable(_ context.Context, name string) (host.Status, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, err := h.get(name)
	if err != nil {
		return host.Status{}, err
	}
	h.start(st)
	return *st, nil
}

func (h *fakeHost) Disable(_ context.Context, name string) (host.Status, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, err := h.get(name)
	if err != nil {
		return host.Status{}, err
	}
	h.stop(st, host.StateDisabled)
	return *st, nil
}

func (h *fakeHost) Restart(_ context.Context, name string) (host.Status, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, err := h.get(name)
	if err != nil {
		return host.Status{}, err
	}
	h.stop(st, host.StateStarting)
	h.start(st)
	st.Restarts++
	return *st, nil
}

func (h *fakeHost) List() []host.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []host.Status
	for _, st := range h.plugins {
		out = append(out, *st)
	}
	return out
}

func (h *fakeHost) Get(name string) (host.Status, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, err := h.get(name)
	if err != nil {
		return host.Status{}, err
	}
	return *st, nil
}

func (h *fakeHost) Logs(name string, n int) ([]host.LogLine, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.get(name); err != nil {
		return nil, err
	}
	lines := []host.LogLine{{Line: "one"}, {Line: "two"}, {Line: "three"}}
	if n > 0 && n < len(lines) {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

func (h *fakeHost) SetPaused(paused bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pauses = append(h.pauses, paused)
	if h.pauseCh != nil {
		h.pauseCh <- paused
	}
}

func (h *fakeHost) SendChannel(_ context.Context, plugin string, m protocol.ChannelSendParams) (protocol.ChannelSendResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.get(plugin); err != nil {
		return protocol.ChannelSendResult{}, err
	}
	h.sent = append(h.sent, m)
	return protocol.ChannelSendResult{MessageID: fmt.Sprint(len(h.sent))}, nil
}

func (h *fakeHost) Close(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	return nil
}

// nopSealer seals nothing (the plugin tests store no secrets).
type nopSealer struct{}

func (nopSealer) SealString(_, s string) (string, error) { return s, nil }
func (nopSealer) OpenString(_, s string) (string, error) { return s, nil }

// testStore opens a store in a fresh file of the test's.
func testStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hologram.db"), sqlite.Options{Tokenize: memory.DefaultTokenize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pluginKernel builds a kernel on store with a fakeHost in place of plugins/host, started.
func pluginKernel(t *testing.T, store *sqlite.Store, cfg config.Config, tools map[string][]host.ToolInfo, log *bytes.Buffer) (*Kernel, *fakeHost) {
	t.Helper()
	if log == nil {
		log = &bytes.Buffer{}
	}
	k, err := New(cfg, Deps{
		Store: store, Sealer: nopSealer{}, Tokens: memory.DefaultTokenize,
		NewProvider: func(ProviderSettings) (llm.Provider, error) { return nil, errors.New("no providers here") },
		Logger:      slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{reg: pluginRegistry{k: k, p: k.plugins}, tools: tools, plugins: map[string]*host.Status{}}
	k.plugins.host = h
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	k.plugins.starter.Load().Wait() // the background adds are done
	t.Cleanup(func() { k.Close() })
	return k, h
}

func toolSources(k *Kernel) map[string]string {
	out := map[string]string{}
	for _, ti := range k.agent.Tools() {
		out[ti.Spec.Name] = ti.Source
	}
	return out
}

func TestPluginToolRegistry(t *testing.T) {
	t.Parallel()
	echo := host.ToolInfo{Name: "echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`), ReadOnly: true}
	tools := map[string][]host.ToolInfo{
		"a": {echo, {Name: "write.file", InputSchema: json.RawMessage(`not json`)}},
		"b": {echo, {Name: "time_now"}},
	}
	k, h := pluginKernel(t, testStore(t), config.Default(func(string) string { return "" }), tools, nil)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: name, Command: []string{"node", name + ".js"}}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"echo": "a", "write_file": "a", "b__echo": "b", "b__time_now": "b", "time_now": "builtin", "coldcontext_query": "builtin", "result_read": "builtin"}
	if got := toolSources(k); !mapsEqual(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	ps, _ := k.Service().Plugins(ctx)
	if len(ps) != 2 || !slices.Equal(ps[1].Tools, []string{"b__echo", "b__time_now"}) || ps[0].State != "running" {
		t.Fatalf("plugins %+v", ps)
	}
	// ParallelSafe is the plugin's read-only hint; a schema that is not JSON gets an open one.
	for _, ti := range k.agent.Tools() {
		switch ti.Spec.Name {
		case "echo":
			if !ti.ParallelSafe || !strings.Contains(string(ti.Spec.Parameters), `"required":["message"]`) {
				t.Fatalf("echo %+v", ti)
			}
		case "write_file":
			if ti.ParallelSafe || string(ti.Spec.Parameters) != `{"type":"object","properties":{}}` {
				t.Fatalf("write_file %+v", ti)
			}
		}
	}
	// The agent's tool wraps the plugin's call; its errors are the tool's.
	pt := pluginTool{call: func(_ context.Context, args json.RawMessage) (string, error) {
		if string(args) == "{}" {
			return "", errors.New("missing message")
		}
		return "echo " + string(args), nil
	}}
	if out, err := pt.Run(ctx, json.RawMessage(`{"message":"hi"}`)); err != nil || out != `echo {"message":"hi"}` {
		t.Fatalf("run: %q %v", out, err)
	}
	if _, err := pt.Run(ctx, json.RawMessage(`{}`)); err == nil || err.Error() != "missing message" {
		t.Fatalf("run error: %v", err)
	}
	// Detaching a plugin removes its tools only; its name is free again for the other plugin.
	if _, err := k.Service().PluginAction(ctx, "a", client.PluginDisable); err != nil {
		t.Fatal(err)
	}
	if got := toolSources(k); !mapsEqual(got, map[string]string{"b__echo": "b", "b__time_now": "b", "time_now": "builtin", "coldcontext_query": "builtin", "result_read": "builtin"}) {
		t.Fatalf("after disable: %v", got)
	}
	if _, err := k.Service().PluginAction(ctx, "b", client.PluginRestart); err != nil {
		t.Fatal(err)
	}
	if got := toolSources(k); got["echo"] != "b" {
		t.Fatalf("after restart b owns echo: %v", got)
	}
	if len(h.added) != 2 {
		t.Fatalf("added %+v", h.added)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestPluginManagement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := testStore(t)
	cfg := config.Default(func(string) string { return "" })
	cfg.ConfigFile = "/etc/hologram/config.toml"
	cfg.Plugins = []config.PluginConfig{{Name: "fs", Command: []string{"node", "fs.js", "/tmp"}}, {Name: "off", Dir: "/opt/p", Disabled: true}}
	k, h := pluginKernel(t, store, cfg, nil, nil)

	added := slices.Clone(h.added) // added in parallel: in any order
	slices.SortFunc(added, func(a, b host.Spec) int { return strings.Compare(a.Name, b.Name) })
	if got := len(added); got != 2 || added[0].Name != "fs" || added[0].Kind != host.KindMCP || added[1].Kind != host.KindNative || !added[1].Disabled {
		t.Fatalf("config plugins added %+v", added)
	}
	bad := []struct {
		name string
		in   client.PluginConfig
		want string
	}{
		{"bad name", client.PluginConfig{Name: "a b", Command: []string{"x"}}, "invalid plugin name"},
		{"no source", client.PluginConfig{Name: "x"}, "give a command"},
		{"both", client.PluginConfig{Name: "x", Command: []string{"x"}, Dir: "/d"}, "not both"},
		{"empty program", client.PluginConfig{Name: "x", Command: []string{" "}}, "program is empty"},
		{"relative dir", client.PluginConfig{Name: "x", Dir: "d"}, "absolute path"},
		{"bad env", client.PluginConfig{Name: "x", Command: []string{"x"}, Env: []string{"NOEQUALS"}}, "KEY=VALUE"},
		{"config name", client.PluginConfig{Name: "fs", Command: []string{"x"}}, "configured in the config file /etc/hologram/config.toml"},
		{"unknown visibility", client.PluginConfig{Name: "x", Command: []string{"x"}, Visibility: "everyone"}, `visibility "everyone"`},
		{"visibility of a native plugin", client.PluginConfig{Name: "x", Dir: "/d", Visibility: "any"}, "declares its own in plugin.json"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Service().AddPlugin(ctx, tt.in)
			if !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddPlugin(%+v) = %v, want ErrInvalid with %q", tt.in, err, tt.want)
			}
		})
	}

	p, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"node", "e.js", "stdio"}, Env: []string{"A=1"}})
	if err != nil || p.State != host.StateRunning || p.Kind != "mcp" {
		t.Fatalf("add: %+v %v", p, err)
	}
	if _, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"x"}}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("second add: %v", err)
	}
	raw, err := store.GetSetting(ctx, "plugin/everything")
	if err != nil || !strings.Contains(raw, `"command":["node","e.js","stdio"]`) {
		t.Fatalf("stored %q %v", raw, err)
	}
	// A host failure leaves nothing stored.
	h.addErr = errors.New("spawn failed")
	if _, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: "broken", Command: []string{"x"}}); err == nil || !strings.Contains(err.Error(), "spawn failed") {
		t.Fatalf("failing add: %v", err)
	}
	h.addErr = nil
	if _, err := store.GetSetting(ctx, "plugin/broken"); err == nil {
		t.Fatal("a failed add stayed stored")
	}

	// Actions and their errors.
	if _, err := k.Service().PluginAction(ctx, "ghost", client.PluginRestart); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("restart ghost: %v", err)
	}
	if _, err := k.Service().PluginAction(ctx, "everything", "explode"); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("unknown action: %v", err)
	}
	if _, err := k.Service().PluginAction(ctx, "fs", client.PluginRemove); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "remove it there") {
		t.Fatalf("remove a config plugin: %v", err)
	}
	if p, err := k.Service().PluginAction(ctx, "everything", client.PluginDisable); err != nil || p.State != host.StateDisabled {
		t.Fatalf("disable: %+v %v", p, err)
	}
	if raw, _ := store.GetSetting(ctx, "plugin/everything"); !strings.Contains(raw, `"disabled":true`) {
		t.Fatalf("disable not remembered: %q", raw)
	}
	lines, err := k.Service().PluginLogs(ctx, "everything", 2)
	if err != nil || len(lines) != 2 || lines[1].Line != "three" {
		t.Fatalf("logs %+v %v", lines, err)
	}
	if _, err := k.Service().PluginLogs(ctx, "ghost", 0); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("logs ghost: %v", err)
	}

	// A second kernel on the same store starts the config's and the stored plugins (disabled
	// as remembered).
	k2, h2 := pluginKernel(t, store, cfg, nil, nil)
	added = slices.Clone(h2.added)
	slices.SortFunc(added, func(a, b host.Spec) int { return strings.Compare(a.Name, b.Name) })
	if len(added) != 3 || added[0].Name != "everything" || !added[0].Disabled || added[0].Env[0] != "A=1" {
		t.Fatalf("restart added %+v", added)
	}
	if p, err := k2.Service().PluginAction(ctx, "everything", client.PluginRemove); err != nil || p.Name != "everything" {
		t.Fatalf("remove: %+v %v", p, err)
	}
	if _, err := store.GetSetting(ctx, "plugin/everything"); err == nil {
		t.Fatal("removed plugin still stored")
	}
	k2.Close()
	if !h2.closed {
		t.Fatal("Close did not close the host")
	}
}

func TestPluginEvents(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	k, _ := pluginKernel(t, testStore(t), config.Default(func(string) string { return "" }), nil, &log)
	sub := k.Bus().Subscribe("plugin_crashed", "plugin_started")
	defer sub.Close()
	pub := pluginEvents{k}
	pub.Publish("plugin_started", map[string]any{"plugin": "e", "pid": 7})
	pub.Publish("plugin_crashed", map[string]any{"plugin": "e", "error": "exit status 137"})
	var got []events.Event
	for len(got) < 2 {
		select {
		case ev := <-sub.C():
			got = append(got, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("events: got %d", len(got))
		}
	}
	if got[1].Type != "plugin_crashed" || got[1].Publisher.Kind != events.KindKernel || got[1].Payload["plugin"] != "e" {
		t.Fatalf("events %+v", got)
	}
	if s := log.String(); !strings.Contains(s, `level=WARN msg="plugin crashed" event=plugin_crashed error="exit status 137" plugin=e`) ||
		!strings.Contains(s, `level=INFO msg="plugin started"`) {
		t.Fatalf("log:\n%s", s)
	}
}

func TestNativeServicesRefuseBadInput(t *testing.T) {
	t.Parallel()
	k, _ := pluginKernel(t, testStore(t), config.Default(func(string) string { return "" }), nil, nil)
	svc := nativeServices{k: k, p: k.plugins}
	ctx := context.Background()
	long := strings.Repeat("x", maxPluginCommit+1)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"bad channel", func() error {
			_, err := svc.ChannelInput(ctx, "p", protocol.ChannelInputParams{Channel: "a b", Partner: "x", Text: "hi"})
			return err
		}, `channel name "a b"`},
		{"no partner", func() error {
			_, err := svc.ChannelInput(ctx, "p", protocol.ChannelInputParams{Channel: "qq", Text: "hi"})
			return err
		}, "partner must be 1 to 128 characters"},
		{"empty message", func() error {
			_, err := svc.ChannelInput(ctx, "p", protocol.ChannelInputParams{Channel: "qq", Partner: "g", Text: "  "})
			return err
		}, "the message is empty"},
		{"wrong scene", func() error {
			_, err := svc.ChannelInput(ctx, "p", protocol.ChannelInputParams{Channel: "qq", Partner: "g", Text: "hi", Scene: "chan:qq/peer:other"})
			return err
		}, `is not the scene of channel qq and partner g ("chan:qq/peer:g")`},
		{"bad block", func() error {
			_, err := svc.ChannelInput(ctx, "p", protocol.ChannelInputParams{Channel: "qq", Partner: "g", Text: "hi", Blocks: []protocol.Block{{Kind: "pdf"}}})
			return err
		}, `kind must be "text", "image", "audio" or "video"`},
		{"no provider", func() error {
			_, err := svc.ChannelInput(ctx, "p", protocol.ChannelInputParams{Channel: "qq", Partner: "g", Text: "hi"})
			return err
		}, "no LLM provider configured"},
		{"empty commit", func() error {
			_, err := svc.Commit(ctx, "p", protocol.MemoryCommitParams{Text: " "})
			return err
		}, "the text is empty"},
		{"long commit", func() error {
			_, err := svc.Commit(ctx, "p", protocol.MemoryCommitParams{Text: long})
			return err
		}, "at most 65536"},
		{"commit in a foreign turn", func() error {
			_, err := svc.Commit(ctx, "p", protocol.MemoryCommitParams{Text: "x", Turn: "t123"})
			return err
		}, `turn "t123" is not one this plugin is serving now`},
		{"notify without title", func() error {
			_, err := svc.Notify(ctx, "p", protocol.NotifyParams{Body: "b"})
			return err
		}, "the title is empty"},
		{"complete without messages", func() error {
			_, err := svc.Complete(ctx, "p", protocol.CompleteParams{})
			return err
		}, "no messages"},
		{"complete with a tool role", func() error {
			_, err := svc.Complete(ctx, "p", protocol.CompleteParams{Messages: []protocol.ChatMessage{{Role: "tool", Content: "x"}}})
			return err
		}, `role must be system, user or assistant, got "tool"`},
		{"complete with too many tokens", func() error {
			_, err := svc.Complete(ctx, "p", protocol.CompleteParams{Messages: []protocol.ChatMessage{{Role: "user"}}, MaxTokens: 1 << 20})
			return err
		}, "max_tokens must be from 1 to 8192"},
		{"bad event type", func() error {
			_, err := svc.Subscribe("p", []string{"a b"}, func(protocol.EventParams) {})
			return err
		}, `event type "a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNativeServicesCommitOutsideATurn(t *testing.T) {
	t.Parallel()
	store := testStore(t)
	k, _ := pluginKernel(t, store, config.Default(func(string) string { return "" }), nil, nil)
	svc := nativeServices{k: k, p: k.plugins}
	res, err := svc.Commit(context.Background(), "diary", protocol.MemoryCommitParams{Text: "a quiet day", Meta: map[string]string{"mood": "calm"}})
	if err != nil || res.Session != "plugin:diary" || res.Channel != "plugin:diary" || res.Scope != "private" {
		t.Fatalf("commit %+v %v", res, err)
	}
	evs, err := store.History(context.Background(), "plugin:diary", 0)
	if err != nil || len(evs) != 1 || evs[0].Content != "a quiet day" || evs[0].Meta["plugin"] != "diary" || evs[0].Meta["mood"] != "calm" {
		t.Fatalf("stored %+v %v", evs, err)
	}
}

func TestNativeHooksAndPause(t *testing.T) {
	t.Parallel()
	k, h := pluginKernel(t, testStore(t), config.Default(func(string) string { return "" }), nil, nil)
	svc := nativeServices{k: k, p: k.plugins}
	var got protocol.StageData
	run := func(_ context.Context, d protocol.StageData) (protocol.HookPatch, error) {
		got = d
		msgs := []protocol.ChatMessage{{Role: "user", Content: "rewritten"}}
		return protocol.HookPatch{Messages: &msgs, Deny: new(string)}, nil
	}
	if err := svc.SetHooks("p", []host.HookInfo{{Name: "h", Stage: "context", Priority: 3, Run: run}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetHooks("q", []host.HookInfo{{Name: "h", Stage: "later", Run: run}}); err == nil || !strings.Contains(err.Error(), `unknown stage "later"`) {
		t.Fatalf("bad stage: %v", err)
	}
	// The hook is an agent hook named p/h; its patch converts field by field.
	if n := k.agent.RemoveHooks("p/"); n != 1 {
		t.Fatalf("p's hooks: %d", n)
	}
	d := &agent.StageData{Stage: agent.StageContext, TurnID: "t1", Input: "in", Scope: memory.Scope{Kind: memory.ScopeGroup, Group: "g"},
		Messages: []llm.Message{{Role: "user", Content: "hi", ToolCalls: []llm.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}}}}
	w := toWireStage(d)
	if w.Scope != "group:g" || w.Messages[0].ToolCalls[0].ID != "c" || w.TurnID != "t1" {
		t.Fatalf("wire %+v", w)
	}
	patch, _ := run(context.Background(), w)
	p := fromWirePatch(patch)
	if p.Messages == nil || (*p.Messages)[0].Content != "rewritten" || p.Deny == nil || got.Input != "in" {
		t.Fatalf("patch %+v", p)
	}

	// The owner's pause reaches the host, in order.
	h.mu.Lock()
	h.pauseCh = make(chan bool, 4)
	h.mu.Unlock()
	for _, paused := range []bool{true, false} {
		if err := k.Service().SetPaused(context.Background(), paused); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-h.pauseCh:
			if got != paused {
				t.Fatalf("the host heard paused=%v, want %v", got, paused)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("paused=%v never reached the host", paused)
		}
	}
}
