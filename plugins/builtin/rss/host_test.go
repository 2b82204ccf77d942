//go:build integration

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

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
	k := hosttest.Start(t, hosttest.Options{})
	ctx := hosttest.Context(t)
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
	p := k.RunPlugin(t, "rss", hosttest.Build(t), "XDG_DATA_HOME="+xdg, EnvAllow+"=127.0.0.1", EnvInitial+"=2")
	sandboxtest.CheckProcess(t, p.PID) // its main confined itself
	k.WaitLog(t, "rss", `"msg":"feed fetched"`, `"new":2`, `"llm":0`)

	hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "lighthouse restoration north pier"})
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
	if _, err := k.Service().CreateSession(ctx, client.Session{ID: "grp", Channel: "qq", Partner: "group_1", Scope: "group:qq/group_1"}); err != nil {
		t.Fatal(err)
	}
	if hits, err := k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "lighthouse restoration north pier", Session: "grp"}); err != nil || len(hits) != 0 {
		t.Fatalf("a group's view recalled the owner's feed items: %+v %v", hits, err)
	}

	// With a model: a subscription made through the model stores its summaries.
	fake := k.AddModel(t)
	fake.Script(hosttest.Call("s1", "rss_subscribe", `{"url":"`+srv.URL+`/blog.atom"}`),
		llmtest.Reply{Text: "Reading a tide table means reading high water, low water and the range."},
		llmtest.Reply{Text: "Spring tides peak near the equinoxes, when sun and moon align."},
		llmtest.Reply{Text: "Subscribed."})
	k.Ask(t, "main", "follow the Tidal Notes blog")
	if result := k.ToolResult(t, "main", "s1").Content; !strings.HasPrefix(result, "subscribed to Tidal Notes ("+srv.URL+"/blog.atom), fetched every 1h0m0s: 2 new items stored in memory (2 summarised by the model") {
		t.Fatalf("rss_subscribe result %q", result)
	}
	hits, err = k.Service().SearchMemory(ctx, client.MemoryQuery{Text: "spring tides equinoxes"})
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
