package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

// TestManifest keeps plugin.json in step with the plugin.
func TestManifest(t *testing.T) {
	t.Parallel()
	r, _ := newTestRSS(t, 3)
	plugintest.CheckManifest(t, r.plugin(), protocol.CapMemory, protocol.CapLLM, protocol.CapLifecycle)
}

// recordingKernel answers the plugin's memory/commit and llm/complete like the kernel.
type recordingKernel struct {
	mu      sync.Mutex
	commits []protocol.MemoryCommitParams
	model   bool // a provider is configured
}

func (rk *recordingKernel) options() sdktest.Options {
	return sdktest.Options{Plugin: "rss", Capabilities: []string{protocol.CapMemory, protocol.CapLLM, protocol.CapLifecycle},
		Commit: func(_ context.Context, p protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error) {
			rk.mu.Lock()
			defer rk.mu.Unlock()
			rk.commits = append(rk.commits, p)
			return protocol.MemoryCommitResult{ID: int64(len(rk.commits)), Session: "plugin:rss", Channel: "plugin:rss", Scope: "private"}, nil
		},
		Complete: func(_ context.Context, p protocol.CompleteParams) (protocol.CompleteResult, error) {
			if !rk.model {
				return protocol.CompleteResult{}, errors.New("unavailable: no LLM provider configured: add one with `waiter provider add NAME --base-url URL --model M`")
			}
			return protocol.CompleteResult{Text: "A short summary."}, nil
		}}
}

func (rk *recordingKernel) count() int {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	return len(rk.commits)
}

func TestRSSTools(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, _ := newTestRSS(t, 2)
	rk := &recordingKernel{model: true}
	k := sdktest.Start(t, r.plugin(), rk.options())
	ctx := context.Background()
	call := func(tool, args, turn string) string {
		t.Helper()
		out, err := k.ToolText(ctx, tool, args, turn)
		if err != nil {
			t.Fatalf("%s %s: %v", tool, args, err)
		}
		return out
	}
	url := srv.URL + "/news.rss"
	// The call belongs to a turn, but what the plugin stores does not: it is owner-private.
	out := call("rss_subscribe", `{"url":"`+url+`","interval":"2h"}`, "turn-7")
	if out != "subscribed to Harbour Town Gazette ("+url+"), fetched every 2h0m0s: 2 new items stored in memory (2 summarised by the model, 0 as excerpts); 3 older items marked as read" {
		t.Fatalf("subscribe: %q", out)
	}
	for _, c := range rk.commits {
		if c.Turn != "" || c.Meta["source"] != "rss" || !strings.HasSuffix(c.Text, "Summary: A short summary.") {
			t.Fatalf("commit %+v: want outside any turn", c)
		}
	}
	if out := call("rss_list", `{}`, ""); !strings.HasPrefix(out, "1 subscriptions\n- Harbour Town Gazette <"+url+"> every 2h0m0s, 2 items in memory; fetched ") {
		t.Fatalf("list: %q", out)
	}
	srv.file.Store("news2.rss")
	rk.model = false
	if out := call("rss_fetch", `{}`, ""); out != "Harbour Town Gazette: 2 new items stored in memory (0 summarised by the model, 2 as excerpts)" {
		t.Fatalf("fetch: %q", out)
	}
	if out := call("rss_fetch", `{"url":"`+url+`"}`, ""); out != "Harbour Town Gazette: not modified since the last fetch" {
		t.Fatalf("fetch again: %q", out)
	}
	if out := call("rss_unsubscribe", `{"url":"`+url+`"}`, ""); out != "unsubscribed from "+url+"; the 4 items it brought stay in memory" {
		t.Fatalf("unsubscribe: %q", out)
	}
	if out := call("rss_list", `{}`, ""); out != "no subscriptions" {
		t.Fatalf("list after unsubscribing: %q", out)
	}
	if rk.count() != 4 {
		t.Fatalf("%d commits", rk.count())
	}
}

func TestRSSToolsRefuseBadInput(t *testing.T) {
	t.Parallel()
	srv := newFeedServer(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat("testdata" + r.URL.Path); err != nil {
			http.NotFound(w, r)
			return
		}
		serveFile(t, w, r, strings.TrimPrefix(r.URL.Path, "/"))
	})
	r, _ := newTestRSS(t, 0)
	k := sdktest.Start(t, r.plugin(), (&recordingKernel{}).options())
	ctx := context.Background()
	if _, err := k.ToolText(ctx, "rss_subscribe", `{"url":"`+srv.URL+`/news.rss"}`, ""); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tool, args, wantErr string }{
		{"rss_subscribe", `{"url":"ftp://example.org/feed"}`, "only http and https feeds"},
		{"rss_subscribe", `{"url":"` + srv.URL + `/news.rss"}`, "already subscribed"},
		{"rss_subscribe", `{"url":"` + srv.URL + `/malformed.rss"}`, "not subscribed: " + srv.URL + "/malformed.rss is a malformed feed"},
		{"rss_subscribe", `{"url":"` + srv.URL + `/page.html"}`, "is not an RSS, Atom or JSON feed"},
		{"rss_subscribe", `{"url":"` + srv.URL + `/nothing"}`, "404 Not Found"},
		{"rss_subscribe", `{"url":"http://192.168.0.1/feed"}`, "192.168.0.1 is a private address (allow it with HOLOGRAM_RSS_ALLOW)"},
		{"rss_subscribe", `{"url":"` + srv.URL + `/blog.atom","interval":"1m"}`, `interval "1m": from 5m0s`},
		{"rss_subscribe", `{"url":"` + srv.URL + `/blog.atom","every":"1h"}`, `unknown field "every"`},
		{"rss_subscribe", `{}`, `feed url "": only http and https`},
		{"rss_unsubscribe", `{"url":"https://example.org/never"}`, "not subscribed: https://example.org/never"},
		{"rss_fetch", `{"url":"https://example.org/never"}`, "not subscribed"},
		{"rss_list", `{"all":true}`, `unknown field "all"`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			_, err := k.ToolText(ctx, tt.tool, tt.args, "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
	// A refused subscription leaves nothing behind.
	if out, _ := k.ToolText(ctx, "rss_list", `{}`, ""); strings.Count(out, "\n- ") != 1 {
		t.Fatalf("subscriptions after refusals:\n%s", out)
	}
}

// TestScheduledFetchingStopsWhilePaused drives the plugin over the protocol: while the kernel
// is paused the scheduler fetches nothing, after resume the due feed is fetched.
func TestScheduledFetchingStopsWhilePaused(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, clk := newTestRSS(t, 1)
	url := srv.URL + "/news.rss"
	if err := r.store.Put(&Feed{URL: url, Interval: time.Hour, NextFetch: t0.Add(10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	rk := &recordingKernel{}
	p := r.plugin()
	pauses := make(chan bool, 2)
	onPause := p.OnPause
	p.OnPause = func(ctx context.Context, k *sdk.Kernel, paused bool) {
		onPause(ctx, k, paused)
		pauses <- paused
	}
	opts := rk.options()
	opts.Paused = true
	k := sdktest.Start(t, p, opts)
	clk.Advance(time.Hour)
	if out, err := k.ToolText(context.Background(), "rss_list", `{}`, ""); err != nil || !strings.Contains(out, "(scheduled fetching is paused)") {
		t.Fatalf("list while paused: %q %v", out, err)
	}
	if srv.hits.Load() != 0 {
		t.Fatal("fetched while paused")
	}
	if err := k.Pause(false); err != nil {
		t.Fatal(err)
	}
	<-pauses
	clk.WaitForWaiter(t) // the tick after resume is done
	if srv.hits.Load() != 1 || rk.count() != 1 {
		t.Fatalf("after resume: %d requests, %d commits", srv.hits.Load(), rk.count())
	}
}
