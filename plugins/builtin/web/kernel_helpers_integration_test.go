//go:build integration

package main

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
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// buildPlugin builds this directory's plugin with the repository's flags into a new plugin
// directory (the binary named by plugin.json's entry, and plugin.json), as `make build` does.
func buildPlugin(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Entry string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
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

// testKernel is a started kernel served on a unix socket, and the API client that talks to it
// (what waiter and the desktop in client mode use).
type testKernel struct {
	K   *kernel.Kernel
	API *client.HTTP
	LLM *llmtest.Server
}

// startKernel starts a kernel on a SQLite file, serves its API on a unix socket and connects a
// client, with a scripted OpenAI-compatible model as its provider.
func startKernel(t *testing.T) testKernel {
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
	k, err := kernel.New(cfg, kernel.Deps{Store: store, Sealer: security.NewCodec(keys),
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, MaxRetries: -1})
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A short socket path: t.TempDir's can exceed the 108 bytes of a unix socket address.
	sockDir, err := os.MkdirTemp("", "hg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "run", "k.sock")
	srv := api.New(k, api.Options{})
	sctx, cancel := context.WithCancel(ctx)
	ln, err := srv.ListenUnix(sctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeUnixListener(sctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	c, err := client.Dial(client.Options{Socket: sock, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewServer(t)
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	return testKernel{K: k, API: c, LLM: fake}
}

// testCtx is a context that ends with the test, or after two minutes.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// addPlugin adds the plugin in dir through the API and waits until it runs.
func (tk testKernel) addPlugin(t *testing.T, name, dir string, env ...string) client.Plugin {
	t.Helper()
	ctx := testCtx(t)
	p, err := tk.API.AddPlugin(ctx, client.PluginConfig{Name: name, Dir: dir, Env: env})
	if err != nil {
		t.Fatalf("add plugin %s: %v", name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for p.State != "running" {
		if time.Now().After(deadline) {
			logs, _ := tk.API.PluginLogs(ctx, name, 0)
			t.Fatalf("plugin %s is %s (%s); its log:\n%+v", name, p.State, p.LastError, logs)
		}
		time.Sleep(20 * time.Millisecond)
		ps, err := tk.API.Plugins(ctx)
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

// toolResult returns the tool result of call id in the session's history.
func (tk testKernel) toolResult(t *testing.T, session, id string) client.Message {
	t.Helper()
	msgs, err := tk.API.History(testCtx(t), session, 0)
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

// call is a scripted model reply calling one tool.
func call(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// logged reports whether the plugin's log has a line with every part.
func (tk testKernel) logged(t *testing.T, plugin string, parts ...string) bool {
	t.Helper()
	lines, err := tk.API.PluginLogs(testCtx(t), plugin, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l.Line, p)
		}
		if ok {
			return true
		}
	}
	return false
}
