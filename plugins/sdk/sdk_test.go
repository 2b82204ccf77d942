package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// TestHelperProcess is not a test: run by sdktest.Launch with sdktest.HelperEnv set, it is a
// plugin.
func TestHelperProcess(t *testing.T) {
	sdktest.RunHelper(func(mode string) (sdk.Plugin, bool) {
		switch mode {
		case "stray":
			// Stray prints before Serve protects stdout would corrupt the protocol, so they come
			// from the tool and the start hook, through os.Stdout, fmt and the raw fd 1.
			return sdk.Plugin{Name: "stray", Version: "1",
				Start: func(context.Context, *sdk.Kernel) error {
					fmt.Println("stray println at start")
					syscall.Write(1, []byte("stray write(1) at start\n"))
					return nil
				},
				Tools: []sdk.Tool{{Name: "shout", Run: func(_ context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
					fmt.Fprintln(os.Stdout, "stray print in a tool")
					syscall.Write(1, []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"))
					k.Logger().Info("tool ran", "tool", "shout")
					return sdk.Text("shouted"), nil
				}}}}, true
		}
		return sdk.Plugin{}, false
	})
}

// TestStdoutProtected runs a plugin that prints to stdout in every way (fmt, os.Stdout, write
// on fd 1, even a forged JSON-RPC line) in a real child process: the protocol is unharmed and
// the prints end up in stderr, with the SDK's JSON log lines.
func TestStdoutProtected(t *testing.T) {
	t.Parallel()
	k := sdktest.Launch(t, "stray", nil, sdktest.Options{})
	for range 3 {
		out, err := k.ToolText(context.Background(), "shout", `{}`, "")
		if err != nil || out != "shouted" {
			t.Fatalf("shout: %q %v", out, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := k.Stop(ctx); err != nil {
		t.Fatalf("stop: %v\n%s", err, k.Stderr())
	}
	for _, s := range []string{"stray println at start", "stray write(1) at start", "stray print in a tool", `{"jsonrpc":"2.0","id":1,"result":{}}`} {
		if !strings.Contains(k.Stderr(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, k.Stderr())
		}
	}
	var logged bool
	for _, line := range strings.Split(k.Stderr(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "tool ran" && rec["level"] == "INFO" && rec["tool"] == "shout" {
			logged = true
		}
	}
	if !logged {
		t.Fatalf("no JSON log line for the tool in stderr:\n%s", k.Stderr())
	}
}

// plugin is the in-memory test plugin: every feature, recording what reached it.
type recorder struct {
	mu     sync.Mutex
	pauses []bool
	events []string
	sent   []sdk.OutMessage
	got    chan struct{} // one per pause or event callback
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 16)} }

func (r *recorder) plugin() sdk.Plugin {
	return sdk.Plugin{
		Name: "full", Version: "2.0",
		Tools: []sdk.Tool{
			{Name: "echo", ReadOnly: true, InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
				Run: func(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
					var a struct{ Text string }
					if err := json.Unmarshal(args, &a); err != nil {
						return sdk.Result{}, err
					}
					return sdk.Text(a.Text), nil
				}},
			{Name: "fail", Run: func(context.Context, *sdk.Kernel, json.RawMessage) (sdk.Result, error) {
				return sdk.Result{}, errors.New("it failed")
			}},
			{Name: "panic", Run: func(context.Context, *sdk.Kernel, json.RawMessage) (sdk.Result, error) { panic("boom") }},
			{Name: "image", Run: func(context.Context, *sdk.Kernel, json.RawMessage) (sdk.Result, error) {
				return sdk.Image("image/png", []byte{1, 2, 3}), nil
			}},
			{Name: "recall", Run: func(ctx context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
				items, scope, err := k.Recall(ctx, "kites", 3)
				if err != nil {
					return sdk.Result{}, err
				}
				turn, _ := sdk.TurnFrom(ctx)
				return sdk.Text(fmt.Sprintf("turn %s scope %s items %d", turn, scope, len(items))), nil
			}},
			{Name: "ask", Run: func(ctx context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
				res, err := k.Complete(ctx, protocol.CompleteParams{Messages: []protocol.ChatMessage{{Role: "user", Content: "hi"}}})
				if err != nil {
					return sdk.Result{}, err
				}
				return sdk.Text(res.Text), nil
			}},
			{Name: "inject", Run: func(ctx context.Context, k *sdk.Kernel, _ json.RawMessage) (sdk.Result, error) {
				res, err := k.Input(ctx, sdk.InMessage{Channel: "c", Partner: "p", Text: "hello",
					Blocks: []sdk.Block{{Kind: "image", Data: make([]byte, protocol.InlineMax+1)}}})
				return sdk.Text(res.Session), err
			}},
		},
		Hooks: []sdk.Hook{{Name: "upper", Stage: sdk.StageOnInput, Priority: 5,
			Run: func(_ context.Context, _ *sdk.Kernel, d *sdk.StageData) (sdk.Patch, error) {
				return sdk.Patch{Input: sdk.Ptr(strings.ToUpper(d.Input))}, nil
			}}},
		Channels: []sdk.Channel{{Name: "c", Send: func(_ context.Context, _ *sdk.Kernel, m sdk.OutMessage) (string, error) {
			if m.Partner == "nobody" {
				return "", errors.New("no such partner")
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.sent = append(r.sent, m)
			return fmt.Sprintf("m%d", len(r.sent)), nil
		}}},
		OnPause: func(_ context.Context, _ *sdk.Kernel, paused bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.pauses = append(r.pauses, paused)
			r.got <- struct{}{}
		},
		OnEvent: func(_ context.Context, _ *sdk.Kernel, e sdk.Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, e.Type)
			r.got <- struct{}{}
		},
	}
}

func TestInMemory(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	var recallTurn string
	k := sdktest.Start(t, r.plugin(), sdktest.Options{Plugin: "full", Capabilities: []string{"hooks", "channels", "memory", "lifecycle", "events"},
		Recall: func(_ context.Context, p protocol.MemoryRecallParams) (protocol.MemoryRecallResult, error) {
			recallTurn = p.Turn
			return protocol.MemoryRecallResult{Scope: "group:g", Items: make([]protocol.MemoryItem, p.K)}, nil
		},
	})
	ctx := context.Background()
	if k.Init.ServerInfo.Name != "full" || len(k.Tools) != 7 || k.Tools[0].Annotations == nil || !*k.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("handshake: %+v tools %+v", k.Init, k.Tools)
	}
	if len(k.Offer.Hooks) != 1 || k.Offer.Hooks[0] != (protocol.HookDecl{Name: "upper", Stage: "on_input", Priority: 5}) || k.Offer.Channels[0] != "c" {
		t.Fatalf("offer %+v", k.Offer)
	}
	tools := []struct{ name, args, turn, want, wantErr string }{
		{"echo", `{"text":"你好"}`, "", "你好", ""},
		{"echo", `{"text":1}`, "", "", "cannot unmarshal"},
		{"fail", ``, "", "", "it failed"},
		{"panic", `{}`, "", "", "tool panic panicked: boom"},
		{"recall", `{}`, "t7", "turn t7 scope group:g items 3", ""},
		{"ask", `{}`, "", "", `method llm/complete needs capability "llm"`},
		{"inject", `{}`, "", "", "no shared-memory region"},
	}
	for _, tt := range tools {
		t.Run(tt.name+tt.args, func(t *testing.T) {
			got, err := k.ToolText(ctx, tt.name, tt.args, tt.turn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
	if recallTurn != "t7" {
		t.Fatalf("recall's turn %q", recallTurn)
	}
	res, err := k.CallTool(ctx, "image", `{}`, "")
	if err != nil || res.Content[0].Type != "image" || res.Content[0].Data != "AQID" || res.Content[0].MimeType != "image/png" {
		t.Fatalf("image %+v %v", res, err)
	}
	if _, err := k.CallTool(ctx, "nope", `{}`, ""); err == nil || !strings.Contains(err.Error(), "unknown tool nope") {
		t.Fatalf("unknown tool: %v", err)
	}

	patch, err := k.RunHook(ctx, "upper", protocol.StageData{Stage: "on_input", Input: "shout"})
	if err != nil || patch.Input == nil || *patch.Input != "SHOUT" {
		t.Fatalf("hook: %+v %v", patch, err)
	}
	if _, err := k.RunHook(ctx, "ghost", protocol.StageData{}); err == nil || !strings.Contains(err.Error(), "unknown hook ghost") {
		t.Fatalf("unknown hook: %v", err)
	}
	if res, err := k.Send(ctx, protocol.ChannelSendParams{Channel: "c", Partner: "p", Text: "reply"}); err != nil || res.MessageID != "m1" {
		t.Fatalf("send: %+v %v", res, err)
	}
	if _, err := k.Send(ctx, protocol.ChannelSendParams{Channel: "c", Partner: "nobody", Text: "reply"}); err == nil ||
		!strings.Contains(err.Error(), "channel c: not delivered: no such partner") {
		t.Fatalf("failed send: %v", err)
	}

	if err := k.Pause(true); err != nil {
		t.Fatal(err)
	}
	if err := k.Event(protocol.EventParams{Type: "turn_finished"}); err != nil {
		t.Fatal(err)
	}
	if err := k.Pause(false); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the callbacks run in order on one goroutine
		select {
		case <-r.got:
		case <-time.After(10 * time.Second):
			t.Fatal("pause and event callbacks did not run")
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pauses[0] != true || r.pauses[1] != false || r.events[0] != "turn_finished" {
		t.Fatalf("pauses %v events %v", r.pauses, r.events)
	}
}

func TestPluginValidation(t *testing.T) {
	t.Parallel()
	run := func(context.Context, *sdk.Kernel, json.RawMessage) (sdk.Result, error) { return sdk.Result{}, nil }
	hook := func(context.Context, *sdk.Kernel, *sdk.StageData) (sdk.Patch, error) { return sdk.Patch{}, nil }
	tests := []struct {
		name string
		p    sdk.Plugin
		want string
	}{
		{"no name", sdk.Plugin{}, "Plugin.Name is required"},
		{"tool without name", sdk.Plugin{Name: "x", Tools: []sdk.Tool{{Run: run}}}, "tool 0 has no name"},
		{"tool without run", sdk.Plugin{Name: "x", Tools: []sdk.Tool{{Name: "t"}}}, "tool t has no Run"},
		{"duplicate tool", sdk.Plugin{Name: "x", Tools: []sdk.Tool{{Name: "t", Run: run}, {Name: "t", Run: run}}}, "declared twice"},
		{"bad schema", sdk.Plugin{Name: "x", Tools: []sdk.Tool{{Name: "t", Run: run, InputSchema: json.RawMessage(`{`)}}}, "not valid JSON"},
		{"bad stage", sdk.Plugin{Name: "x", Hooks: []sdk.Hook{{Name: "h", Stage: "later", Run: hook}}}, `unknown stage "later"`},
		{"hook without run", sdk.Plugin{Name: "x", Hooks: []sdk.Hook{{Name: "h", Stage: sdk.StageOnInput}}}, "hook h has no Run"},
		{"channel without send", sdk.Plugin{Name: "x", Channels: []sdk.Channel{{Name: "c"}}}, "channel c has no Send"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sdktest.Pipe()
			defer b.Close()
			err := sdk.ServeConn(context.Background(), tt.p, a, a)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ServeConn: %v, want %q", err, tt.want)
			}
		})
	}
}

// TestMCPClient: served to a plain MCP client (no native extensions), the plugin offers its
// tools and no extensions.
func TestMCPClient(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	k := sdktest.Start(t, r.plugin(), sdktest.Options{MCP: true})
	if k.Init.Capabilities.Experimental != nil || len(k.Tools) != 7 {
		t.Fatalf("init %+v", k.Init)
	}
	if out, err := k.ToolText(context.Background(), "echo", `{"text":"plain"}`, ""); err != nil || out != "plain" {
		t.Fatalf("echo: %q %v", out, err)
	}
}

// TestDependencies keeps the SDK light for third parties: the standard library, x/sys and the
// plugin packages only (ARCHITECTURE.md §2).
func TestDependencies(t *testing.T) {
	gobin := "go"
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	} else if r := runtime.GOROOT(); r != "" {
		gobin = filepath.Join(r, "bin", "go")
	}
	for _, pkg := range []string{".", "./sdktest"} {
		out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 2 {
			t.Fatalf("go list %s returned too little to be real: %v", pkg, deps)
		}
		for _, d := range deps {
			switch {
			case strings.HasPrefix(d, "golang.org/x/sys/"),
				d == "github.com/hologramagent/hologram/plugins/protocol",
				d == "github.com/hologramagent/hologram/plugins/shm",
				strings.HasPrefix(d, "github.com/hologramagent/hologram/plugins/sdk"):
			default:
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
