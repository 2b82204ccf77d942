//go:build integration

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
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

// buildPlugin builds this plugin with the repository's flags into a new plugin directory
// beside its plugin.json, as `make build` lays it out.
func buildPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dir, "rss"), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startKernel starts a real kernel on a SQLite file in a temporary data directory, with the
// OpenAI-compatible provider factory, as homed builds it.
func startKernel(t *testing.T) *kernel.Kernel {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "config", "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(cfg, kernel.Deps{Store: store, Sealer: security.NewCodec(keys), Tokens: memory.DefaultTokenize,
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
	return k
}

// waitLog waits until a line of the plugin's log contains all of parts, for at most 30 s.
func waitLog(t *testing.T, k *kernel.Kernel, plugin string, parts ...string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		lines, err := k.PluginLogs(context.Background(), plugin, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l.Line, p)
			}
			if ok {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("plugin %s never logged %q; its log:\n%+v", plugin, parts, lines)
		}
	}
}

// nextEvent returns the next event of sub, failing after 30 s.
func nextEvent(t *testing.T, sub *events.Subscription) events.Event {
	t.Helper()
	select {
	case ev := <-sub.C():
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return events.Event{}
}

// TestRSSUnderTheRealKernel runs the built plugin under the real host in a real kernel with
// its memory on: a subscription kept from before is fetched on schedule at start, with no
// model configured, and its items land in the owner's private memory as excerpts (recall finds
// them; a group's view does not); then, with a model, a subscription made through the model
// stores the model's summaries.
func TestRSSUnderTheRealKernel(t *testing.T) {
	srv := newFeedServer(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat("testdata" + r.URL.Path); err != nil {
			http.NotFound(w, r)
			return
		}
		serveFile(t, w, r, strings.TrimPrefix(r.URL.Path, "/"))
	})
	k := startKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	xdg := t.TempDir()
	seed := map[string]any{"version": 1, "feeds": []map[string]any{{"url": srv.URL + "/news.rss", "interval": time.Hour,
		"added": time.Now().Add(-time.Hour)}}}
	raw, _ := json.Marshal(seed)
	if err := os.MkdirAll(filepath.Join(xdg, "hologram", "rss"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "hologram", "rss", "feeds.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := k.AddPlugin(ctx, client.PluginConfig{Name: "rss", Dir: buildPlugin(t),
		Env: []string{"XDG_DATA_HOME=" + xdg, EnvAllow + "=127.0.0.1", EnvInitial + "=2"}})
	if err != nil || p.State != "running" {
		logs, _ := k.PluginLogs(ctx, "rss", 0)
		t.Fatalf("add rss: %+v %v\n%+v", p, err, logs)
	}
	waitLog(t, k, "rss", `"msg":"feed fetched"`, `"new":2`, `"llm":0`)

	hits, err := k.SearchMemory(ctx, client.MemoryQuery{Text: "lighthouse restoration north pier"})
	if err != nil {
		t.Fatal(err)
	}
	var found *client.MemoryHit
	for i, h := range hits {
		if strings.Contains(h.Content, "Lighthouse reopens after restoration") {
			found = &hits[i]
		}
	}
	if found == nil || found.Scope != "private" || found.Channel != "plugin:rss" || found.Session != "plugin:rss" ||
		!strings.Contains(found.Content, "\nExcerpt: The lighthouse on the north pier reopened on Tuesday after two years of restoration work.") {
		t.Fatalf("recall of the feed item: %+v (all: %+v)", found, hits)
	}
	if _, err := k.CreateSession(ctx, client.Session{ID: "grp", Channel: "qq", Partner: "group_1", Scope: "group:qq/group_1"}); err != nil {
		t.Fatal(err)
	}
	if hits, err := k.SearchMemory(ctx, client.MemoryQuery{Text: "lighthouse restoration north pier", Session: "grp"}); err != nil || len(hits) != 0 {
		t.Fatalf("a group's view recalled the owner's feed items: %+v %v", hits, err)
	}

	// With a model: a subscription made through the model stores its summaries.
	fake := llmtest.NewServer(t)
	if _, err := k.AddProvider(ctx, client.ProviderConfig{Name: "fake", BaseURL: fake.URL(), Model: "fake-1"}); err != nil {
		t.Fatal(err)
	}
	fake.Script(llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "rss_subscribe", Arguments: `{"url":"` + srv.URL + `/blog.atom"}`}}},
		llmtest.Reply{Text: "Reading a tide table means reading high water, low water and the range."},
		llmtest.Reply{Text: "Spring tides peak near the equinoxes, when sun and moon align."},
		llmtest.Reply{Text: "Subscribed."})
	if _, err := k.Chat(ctx, client.ChatRequest{Session: "main", Input: "follow the Tidal Notes blog"}, nil); err != nil {
		t.Fatal(err)
	}
	msgs, err := k.History(ctx, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	var result string
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == "s1" {
			result = m.Content
		}
	}
	if !strings.HasPrefix(result, "subscribed to Tidal Notes ("+srv.URL+"/blog.atom), fetched every 1h0m0s: 2 new items stored in memory (2 summarised by the model") {
		t.Fatalf("rss_subscribe result %q", result)
	}
	hits, err = k.SearchMemory(ctx, client.MemoryQuery{Text: "spring tides equinoxes"})
	if err != nil {
		t.Fatal(err)
	}
	ok := false
	for _, h := range hits {
		ok = ok || (h.Channel == "plugin:rss" && h.Scope == "private" &&
			strings.HasSuffix(h.Content, "\nSummary: Spring tides peak near the equinoxes, when sun and moon align."))
	}
	if !ok {
		t.Fatalf("the model's summary is not in memory: %+v", hits)
	}
}
