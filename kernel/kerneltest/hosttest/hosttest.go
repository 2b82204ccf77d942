// Package hosttest runs a built-in plugin the way the product does, for the plugins'
// integration tests: [Build] builds the plugin under test from source with the repository's
// build flags, and [Start] starts a real kernel (a SQLite store, a real codec, the
// OpenAI-compatible provider factory) whose plugin host spawns it; a scripted model
// ([Kernel.AddModel]) drives the agent. Tests talk to the kernel in process or, with
// [Options].API, through a client of its HTTP API on a unix socket (what waiter and the desktop
// in client mode use).
//
// Import it from tests with the integration build tag only: it links the whole kernel.
package hosttest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/api"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// Patience bounds every wait of the helpers: a real plugin process answers in its own time.
const Patience = 30 * time.Second

// Build builds the plugin in the test's working directory (the plugin's package) with the
// repository's flags into a new plugin directory laid out as `make build` lays out
// bin/plugins: the binary, named by plugin.json's entry, beside plugin.json. It returns the
// directory.
func Build(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Entry string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	if m.Entry == "" || strings.ContainsAny(m.Entry, `/\`) {
		t.Fatalf("plugin.json: entry %q is not a file name", m.Entry)
	}
	dir := t.TempDir()
	gobin := "go"
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	} else if r := runtime.GOROOT(); r != "" {
		gobin = filepath.Join(r, "bin", "go")
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dir, m.Entry), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Options shape [Start]; the zero value is a kernel (its memory on, the store's default
// tokenizer) driven in process.
type Options struct {
	// API serves the kernel's HTTP API on a unix socket: [Kernel.API] is a client of it, and the
	// helpers go through it.
	API bool
}

// Kernel is a started kernel; it closes when the test ends.
type Kernel struct {
	*kernel.Kernel
	// API is a client of the kernel's HTTP API on a unix socket ([Options].API), else nil.
	API *client.HTTP
}

// Start starts a kernel on a SQLite file in a temporary XDG data directory, with a real codec
// and the OpenAI-compatible provider factory (as homed builds it), and no provider yet.
func Start(t testing.TB, o Options) *Kernel {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": filepath.Join(dir, "data"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	cfg := config.Default(func(k string) string { return env[k] })
	cfg.DataDir = filepath.Join(dir, "data", "hologram")
	cfg.Memory.GCInterval.Duration = 0
	ctx := context.Background()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "config", "key"))
	if err != nil {
		t.Fatal(err)
	}
	deps := kernel.Deps{Store: store, Sealer: security.NewCodec(keys), Tokens: memory.DefaultTokenize,
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, MaxRetries: -1})
		}}
	k, err := kernel.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tk := &Kernel{Kernel: k}
	if o.API {
		tk.API = serveAPI(t, k)
	}
	return tk
}

// serveAPI serves k's API on a unix socket until the test ends and returns a client of it.
func serveAPI(t testing.TB, k *kernel.Kernel) *client.HTTP {
	t.Helper()
	// A short socket path: t.TempDir's can exceed the 108 bytes of a unix socket address.
	sockDir, err := os.MkdirTemp("", "hg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "run", "k.sock")
	srv := api.New(k.Service(), api.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := srv.ListenUnix(ctx, sock)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeUnixListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	c, err := client.Dial(client.Options{Socket: sock, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Service is what the helpers drive the kernel through: the API client when there is one,
// else the kernel itself.
func (k *Kernel) Service() client.Service {
	if k.API != nil {
		return k.API
	}
	return k.Kernel.Service()
}

// Context returns a context that ends with the test, or after two minutes.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// AddModel adds a scripted OpenAI-compatible model as the provider "fake" (the owner's
// default) and returns it.
func (k *Kernel) AddModel(t testing.TB) *llmtest.Server {
	t.Helper()
	fake := llmtest.NewServer(t)
	if _, err := k.Service().AddProvider(Context(t), client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	return fake
}

// RunPlugin adds the plugin in dir, with env added to its environment, and waits until it
// runs; it fails the test, with the plugin's log, when it does not.
func (k *Kernel) RunPlugin(t testing.TB, name, dir string, env ...string) client.Plugin {
	t.Helper()
	ctx := Context(t)
	svc := k.Service()
	p, err := svc.AddPlugin(ctx, client.PluginConfig{Name: name, Dir: dir, Env: env})
	if err != nil {
		logs, _ := svc.PluginLogs(ctx, name, 0)
		t.Fatalf("add plugin %s: %v; its log:\n%+v", name, err, logs)
	}
	deadline := time.Now().Add(Patience)
	for p.State != "running" {
		if time.Now().After(deadline) {
			logs, _ := svc.PluginLogs(ctx, name, 0)
			t.Fatalf("plugin %s is %s (%s); its log:\n%+v", name, p.State, p.LastError, logs)
		}
		time.Sleep(20 * time.Millisecond)
		ps, err := svc.Plugins(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range ps {
			if q.Name == name {
				p = q
			}
		}
	}
	return p
}

// WaitLog waits until a line of the plugin's log contains every one of parts, and returns
// the line.
func (k *Kernel) WaitLog(t testing.TB, plugin string, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for {
		lines, err := k.Service().PluginLogs(Context(t), plugin, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if containsAll(l.Line, parts) {
				return l.Line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s never logged %q; its log:\n%+v", plugin, parts, lines)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// ToolResult returns the result of tool call id in the session's history.
func (k *Kernel) ToolResult(t testing.TB, session, id string) client.Message {
	t.Helper()
	msgs, err := k.Service().History(Context(t), session, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == id {
			return m
		}
	}
	t.Fatalf("no result for call %s in session %s", id, session)
	return client.Message{}
}

// Ask runs one turn of the owner's input in session and returns its result.
func (k *Kernel) Ask(t testing.TB, session, input string) client.ChatResult {
	t.Helper()
	res, err := k.Service().Chat(Context(t), client.ChatRequest{Session: session, Input: input}, nil)
	if err != nil {
		t.Fatalf("chat %q: %v", input, err)
	}
	return res
}

// Call is a scripted model reply that calls one tool.
func Call(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// NextEvent returns the next event of sub, failing the test after [Patience].
func NextEvent(t testing.TB, sub *events.Subscription) events.Event {
	t.Helper()
	select {
	case ev := <-sub.C():
		return ev
	case <-time.After(Patience):
		t.Fatalf("no event within %s", Patience)
	}
	return events.Event{}
}
