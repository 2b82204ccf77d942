//go:build integration

package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// buildEcho builds plugins/builtin/echo with the repository's flags into a new plugin
// directory whose plugin.json declares capabilities (the shipped manifest's when nil).
func buildEcho(t testing.TB, capabilities []string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "builtin", "echo")
	if _, err := os.Stat(filepath.Join(src, "plugin.json")); err != nil {
		// -trimpath: the caller's path is module-relative; the test runs in plugins/host.
		src = filepath.Join("..", "builtin", "echo")
	}
	dir := t.TempDir()
	gobin := "go"
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	} else if r := runtime.GOROOT(); r != "" {
		gobin = filepath.Join(r, "bin", "go")
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dir, "echo"), ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build echo: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(src, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("echo's plugin.json: %v", err)
	}
	if capabilities != nil {
		m.Capabilities = capabilities
		if raw, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeServices is a hand-written Services recording what native plugins ask.
type fakeServices struct {
	mu       sync.Mutex
	hooks    map[string][]HookInfo
	inputs   []protocol.ChannelInputParams
	recalls  []protocol.MemoryRecallParams
	notes    []protocol.NotifyParams
	deliver  func(protocol.EventParams)
	subTypes []string
	paused   bool
}

func newFakeServices() *fakeServices { return &fakeServices{hooks: map[string][]HookInfo{}} }

func (f *fakeServices) SetHooks(plugin string, hooks []HookInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(hooks) == 0 {
		delete(f.hooks, plugin)
		return nil
	}
	f.hooks[plugin] = hooks
	return nil
}

func (f *fakeServices) hook(plugin, name string) (HookInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.hooks[plugin] {
		if h.Name == name {
			return h, true
		}
	}
	return HookInfo{}, false
}

func (f *fakeServices) ChannelInput(_ context.Context, _ string, in protocol.ChannelInputParams) (protocol.ChannelInputResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	return protocol.ChannelInputResult{Session: "chan:" + in.Channel + ":" + in.Partner, Scene: in.Scene}, nil
}

func (f *fakeServices) Recall(_ context.Context, _ string, p protocol.MemoryRecallParams) (protocol.MemoryRecallResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recalls = append(f.recalls, p)
	return protocol.MemoryRecallResult{Scope: "group:g", Items: []protocol.MemoryItem{{ID: 1, Content: "found " + p.Query, Scope: "group:g"}}}, nil
}

func (f *fakeServices) Commit(context.Context, string, protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error) {
	return protocol.MemoryCommitResult{}, errors.New("commit is not used here")
}

func (f *fakeServices) Notify(_ context.Context, _ string, p protocol.NotifyParams) (protocol.NotifyResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, p)
	return protocol.NotifyResult{DeliveredTo: "chat"}, nil
}

func (f *fakeServices) Complete(_ context.Context, _ string, p protocol.CompleteParams) (protocol.CompleteResult, error) {
	return protocol.CompleteResult{Text: "42", Usage: protocol.Usage{TotalTokens: 7}}, nil
}

func (f *fakeServices) Subscribe(_ string, types []string, deliver func(protocol.EventParams)) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliver, f.subTypes = deliver, types
	return func() {
		f.mu.Lock()
		f.deliver = nil
		f.mu.Unlock()
	}, nil
}

func (f *fakeServices) Paused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paused
}

// nativeEnv is a host with fake services and shared memory, running the echo plugin "echo".
func nativeEnv(t *testing.T, capabilities []string) (*env, *fakeServices) {
	t.Helper()
	svc := newFakeServices()
	e := newEnv(t, func(o *Options) {
		o.Services = svc
		o.Shm = &ShmOptions{}
		o.TurnOf = func(ctx context.Context) (string, string) { s, _ := ctx.Value(turnCtxKey{}).(string); return s, "" }
	})
	st := e.add(t, Spec{Name: "echo", Dir: buildEcho(t, capabilities)})
	if st.State != StateRunning {
		lines, _ := e.h.Logs("echo", 0)
		t.Fatalf("echo not running: %+v\nlogs: %+v", st, lines)
	}
	return e, svc
}

type turnCtxKey struct{}

// status calls echo_status.
func (e *env) echoStatus(t *testing.T) (st struct {
	Paused    bool                         `json:"paused"`
	Events    map[string]int               `json:"events"`
	Delivered []protocol.ChannelSendParams `json:"delivered"`
}) {
	t.Helper()
	out, err := e.call(t, "echo.echo_status", `{}`)
	if err != nil {
		t.Fatalf("echo_status: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("echo_status %q: %v", out, err)
	}
	return st
}

func TestNativeEchoBulkResultThroughSharedMemory(t *testing.T) {
	t.Parallel()
	e, _ := nativeEnv(t, nil)
	tr, err := e.h.Traffic("echo")
	if err != nil || !tr.Region {
		t.Fatalf("traffic %+v %v: the plugin has no region", tr, err)
	}
	for _, size := range []int{4 << 20, 100 << 10, 1000} {
		before, _ := e.h.Traffic("echo")
		got, err := e.call(t, "echo.echo_big", `{"bytes":`+itoa(size)+`}`)
		if err != nil {
			t.Fatalf("echo_big %d: %v", size, err)
		}
		after, _ := e.h.Traffic("echo")
		pipe := (after.FromPlugin - before.FromPlugin) + (after.ToPlugin - before.ToPlugin)
		want := bigText(size)
		if got != want {
			t.Fatalf("echo_big %d: %d bytes arrived, not byte-identical to the %d expected", size, len(got), len(want))
		}
		t.Logf("echo_big %d bytes: %d bytes crossed the pipes", size, pipe)
		if size > protocol.InlineMax && pipe >= 4096 {
			t.Fatalf("a %d-byte result took %d pipe bytes: it did not travel as a reference", size, pipe)
		}
		if size <= protocol.InlineMax && pipe < uint64(size) {
			t.Fatalf("a %d-byte result took %d pipe bytes: small results travel inline", size, pipe)
		}
	}
	// Released references are reused: many large results never fill the 32 MiB arena.
	for i := range 20 {
		if _, err := e.call(t, "echo.echo_big", `{"bytes":4194304}`); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// itoa formats n.
func itoa(n int) string { return strconv.Itoa(n) }

// bigText is echo's BigText, rewritten here from its documented definition: lines
// "<offset as 8 hex digits>:<54 letters>\n", letter i of the line at offset off being
// 'a'+(off/64+i)%26, cut at n bytes.
func bigText(n int) string {
	b := make([]byte, 0, n+64)
	const hex = "0123456789abcdef"
	for len(b) < n {
		off := len(b)
		for shift := 28; shift >= 0; shift -= 4 {
			b = append(b, hex[(off>>shift)&0xf])
		}
		b = append(b, ':')
		for i := range 54 {
			b = append(b, byte('a'+(off/64+i)%26))
		}
		b = append(b, '\n')
	}
	return string(b[:n])
}

func TestNativeEchoHooks(t *testing.T) {
	t.Parallel()
	e, svc := nativeEnv(t, nil)
	names := []string{}
	svc.mu.Lock()
	for _, h := range svc.hooks["echo"] {
		names = append(names, h.Name+"@"+h.Stage)
	}
	svc.mu.Unlock()
	slices.Sort(names)
	if want := []string{"guard@before_toolcall", "shortcut@on_input", "sign@before_output", "slow@pre_action"}; !slices.Equal(names, want) {
		t.Fatalf("hooks %v, want %v", names, want)
	}
	ctx := context.Background()
	run := func(name string, d protocol.StageData) (protocol.HookPatch, error) {
		t.Helper()
		h, ok := svc.hook("echo", name)
		if !ok {
			t.Fatalf("no hook %s", name)
		}
		return h.Run(ctx, d)
	}
	tests := []struct {
		name, hook string
		data       protocol.StageData
		check      func(protocol.HookPatch) bool
	}{
		{"short-circuit", "shortcut", protocol.StageData{Stage: "on_input", Input: " /ping "},
			func(p protocol.HookPatch) bool { return p.Reply != nil && *p.Reply == "pong from echo" }},
		{"no short-circuit", "shortcut", protocol.StageData{Stage: "on_input", Input: "hello"},
			func(p protocol.HookPatch) bool { return p.Reply == nil && p.Input == nil }},
		{"deny", "guard", protocol.StageData{Stage: "before_toolcall", Call: &protocol.ToolCallData{ID: "c1", Name: "x", Arguments: `{"a":"forbidden"}`}},
			func(p protocol.HookPatch) bool { return p.Deny != nil && strings.Contains(*p.Deny, "forbidden") }},
		{"allow", "guard", protocol.StageData{Stage: "before_toolcall", Call: &protocol.ToolCallData{ID: "c1", Name: "x", Arguments: `{}`}},
			func(p protocol.HookPatch) bool { return p.Deny == nil }},
		{"sign", "sign", protocol.StageData{Stage: "before_output", Input: "hi /sign", Text: "hello"},
			func(p protocol.HookPatch) bool { return p.Text != nil && *p.Text == "hello — echo" }},
		// Stage data over 64 KiB travels through the arena (DataRef) and still arrives whole.
		{"big stage data", "sign", protocol.StageData{Stage: "before_output", Input: "/sign " + strings.Repeat("x", 200<<10), Text: "big"},
			func(p protocol.HookPatch) bool { return p.Text != nil && *p.Text == "big — echo" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := run(tt.hook, tt.data)
			if err != nil || !tt.check(p) {
				t.Fatalf("patch %+v, err %v", p, err)
			}
		})
	}

	t.Run("a slow hook is skipped at its timeout", func(t *testing.T) {
		h, _ := svc.hook("echo", "slow")
		if h.Timeout != 300*time.Millisecond {
			t.Fatalf("slow's timeout %v, want the declared 300ms", h.Timeout)
		}
		done := make(chan error, 1)
		go func() {
			_, err := h.Run(ctx, protocol.StageData{Stage: "pre_action", Input: "/slow", TurnID: "t1"})
			done <- err
		}()
		waitFor(t, "the hook's timer", func() bool { return e.ft.pending(300*time.Millisecond) > 0 })
		e.ft.Advance(300 * time.Millisecond)
		err := <-done
		if err == nil || !strings.Contains(err.Error(), "no answer within 300ms; skipped") {
			t.Fatalf("slow hook: %v", err)
		}
		// The plugin saw the cancellation and is still healthy.
		waitFor(t, "the plugin's cancellation log", func() bool {
			lines, _ := e.h.Logs("echo", 0)
			return slices.ContainsFunc(lines, func(l LogLine) bool { return strings.Contains(l.Line, "slow hook cancelled") })
		})
		if p, err := run("shortcut", protocol.StageData{Input: "/ping"}); err != nil || p.Reply == nil {
			t.Fatalf("after the slow hook: %+v %v", p, err)
		}
	})

	t.Run("a dead plugin's hooks are detached and fail fast", func(t *testing.T) {
		h, _ := svc.hook("echo", "guard")
		st, _ := e.h.Get("echo")
		if _, err := e.h.Disable(ctx, "echo"); err != nil {
			t.Fatal(err)
		}
		if _, ok := svc.hook("echo", "guard"); ok {
			t.Fatal("the hooks of a stopped plugin are still registered")
		}
		if _, err := h.Run(ctx, protocol.StageData{}); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("hook of a stopped plugin (pid %d): %v", st.PID, err)
		}
	})
}

func TestNativeEchoServices(t *testing.T) {
	t.Parallel()
	e, svc := nativeEnv(t, nil)
	ctx := context.Background()

	t.Run("memory in the turn's scope", func(t *testing.T) {
		f := e.reg.call("echo.echo_recall")
		out, err := f(context.WithValue(ctx, turnCtxKey{}, "t42"), json.RawMessage(`{"query":"kites"}`))
		if err != nil || !strings.Contains(out, "scope group:g: 1 memories") || !strings.Contains(out, "found kites") {
			t.Fatalf("recall: %q %v", out, err)
		}
		svc.mu.Lock()
		got := svc.recalls[len(svc.recalls)-1]
		svc.mu.Unlock()
		if got.Turn != "t42" || got.Query != "kites" {
			t.Fatalf("the kernel got %+v: the turn did not travel", got)
		}
	})
	t.Run("notify and llm", func(t *testing.T) {
		if out, err := e.call(t, "echo.echo_notify", `{"title":"hi","body":"there"}`); err != nil || out != "notified the owner (chat)" {
			t.Fatalf("notify: %q %v", out, err)
		}
		if out, err := e.call(t, "echo.echo_complete", `{"prompt":"6*7?"}`); err != nil || out != "the model says: 42 (7 tokens)" {
			t.Fatalf("complete: %q %v", out, err)
		}
	})
	t.Run("channel input and output", func(t *testing.T) {
		out, err := e.call(t, "echo.echo_inject", `{"partner":"group_1","text":"hello"}`)
		if err != nil || !strings.Contains(out, "chan:echo:group_1") {
			t.Fatalf("inject: %q %v", out, err)
		}
		svc.mu.Lock()
		in := svc.inputs[len(svc.inputs)-1]
		svc.mu.Unlock()
		if in.Channel != "echo" || in.Partner != "group_1" || in.Text != "hello" || in.Scene != "chan:echo/peer:group_1" {
			t.Fatalf("input %+v", in)
		}
		res, err := e.h.SendChannel(ctx, "echo", protocol.ChannelSendParams{Channel: "echo", Partner: "group_1", Text: "the reply", TurnID: "t1",
			Blocks: []protocol.Block{{Kind: "image", MIME: "image/png", Data: []byte(bigText(300 << 10))}}})
		if err != nil || res.MessageID != "echo-1" {
			t.Fatalf("send: %+v %v", res, err)
		}
		st := e.echoStatus(t)
		if len(st.Delivered) != 1 || st.Delivered[0].Text != "the reply" || string(st.Delivered[0].Blocks[0].Data) != bigText(300<<10) {
			t.Fatalf("delivered %d messages: %.200v", len(st.Delivered), st.Delivered)
		}
		if _, err := e.h.SendChannel(ctx, "echo", protocol.ChannelSendParams{Channel: "echo", Partner: "unreachable", Text: "x"}); err == nil ||
			!strings.Contains(err.Error(), "not delivered: partner unreachable") {
			t.Fatalf("a failed delivery: %v", err)
		}
		if _, err := e.h.SendChannel(ctx, "echo", protocol.ChannelSendParams{Channel: "qq", Partner: "p", Text: "x"}); err == nil ||
			!strings.Contains(err.Error(), `does not carry channel "qq"`) {
			t.Fatalf("an unknown channel: %v", err)
		}
	})
	t.Run("events through the ring, and the pause", func(t *testing.T) {
		waitFor(t, "the event subscription", func() bool {
			svc.mu.Lock()
			defer svc.mu.Unlock()
			return svc.deliver != nil
		})
		svc.mu.Lock()
		deliver, types := svc.deliver, svc.subTypes
		svc.mu.Unlock()
		if !slices.Equal(types, []string{"turn_finished", "plugin_started"}) {
			t.Fatalf("subscribed to %v", types)
		}
		for range 3 {
			deliver(protocol.EventParams{Type: "turn_finished", Time: time.Now(), Payload: map[string]any{"turn_id": "t1"}})
		}
		// An event too long for a ring slot comes over the pipe.
		deliver(protocol.EventParams{Type: "plugin_started", Payload: map[string]any{"note": strings.Repeat("y", 2000)}})
		waitFor(t, "4 events at the plugin", func() bool {
			st := e.echoStatus(t)
			return st.Events["turn_finished"] == 3 && st.Events["plugin_started"] == 1
		})
		e.h.SetPaused(true)
		waitFor(t, "paused", func() bool { return e.echoStatus(t).Paused })
		e.h.SetPaused(false)
		waitFor(t, "resumed", func() bool { return !e.echoStatus(t).Paused })
	})
}

func TestNativeEchoCapabilities(t *testing.T) {
	t.Parallel()
	t.Run("undeclared capabilities are refused by name", func(t *testing.T) {
		e, _ := nativeEnv(t, []string{"hooks", "channels"})
		for tool, capability := range map[string]string{"echo_complete": "llm", "echo_notify": "notify", "echo_recall": "memory"} {
			_, err := e.call(t, "echo."+tool, `{"prompt":"x","title":"t","body":"b","query":"q"}`)
			want := `needs capability "` + capability + `" (not declared in the manifest)`
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error with %q", tool, err, want)
			}
		}
		// Without lifecycle the plugin hears nothing of the pause.
		e.h.SetPaused(true)
		if e.echoStatus(t).Paused {
			t.Fatal("kernel/paused reached a plugin without capability lifecycle")
		}
	})
	t.Run("hooks without the capability fail the handshake", func(t *testing.T) {
		svc := newFakeServices()
		e := newEnv(t, func(o *Options) { o.Services = svc })
		st := e.add(t, Spec{Name: "echo", Dir: buildEcho(t, []string{"channels"})})
		if st.State == StateRunning || !strings.Contains(st.LastError, `declares 4 hooks but its manifest does not declare capability "hooks"`) {
			t.Fatalf("status %+v", st)
		}
	})
}
