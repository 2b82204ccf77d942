package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// fakeKernel is a KernelAPI that records commits; complete answers completions (nil: "no
// provider"); commitErr, when set, fails the nth commit (1-based).
type fakeKernel struct {
	mu        sync.Mutex
	commits   []commit
	complete  func(req protocol.CompleteParams) (string, error)
	commitErr func(n int) error
}

type commit struct {
	text string
	meta map[string]string
}

func (k *fakeKernel) Complete(_ context.Context, req protocol.CompleteParams) (protocol.CompleteResult, error) {
	if k.complete == nil {
		return protocol.CompleteResult{}, errors.New("llm/complete: unavailable: " + noProviderText + ": add one")
	}
	text, err := k.complete(req)
	return protocol.CompleteResult{Text: text}, err
}

func (k *fakeKernel) Commit(_ context.Context, text string, meta map[string]string) (protocol.MemoryCommitResult, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.commitErr != nil {
		if err := k.commitErr(len(k.commits) + 1); err != nil {
			return protocol.MemoryCommitResult{}, err
		}
	}
	k.commits = append(k.commits, commit{text, meta})
	return protocol.MemoryCommitResult{ID: int64(len(k.commits)), Scope: "private"}, nil
}

// titles returns the first line of each commit since from.
func (k *fakeKernel) titles(from int) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, c := range k.commits[from:] {
		first, _, _ := strings.Cut(c.text, "\n")
		out = append(out, first)
	}
	return out
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 is the tests' start.
var t0 = time.Date(2026, 5, 6, 12, 0, 0, 0, time.UTC)

// switchServer serves the testdata file named by file (swappable), conditionally; status,
// when not 0, is answered instead.
type switchServer struct {
	*feedServer
	file   atomic.Value
	status atomic.Int32
}

func newSwitchServer(t *testing.T, file string) *switchServer {
	s := &switchServer{}
	s.file.Store(file)
	s.feedServer = newFeedServer(t, func(w http.ResponseWriter, r *http.Request) {
		if code := int(s.status.Load()); code != 0 {
			if code == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "36000")
			}
			http.Error(w, "no", code)
			return
		}
		serveFile(t, w, r, s.file.Load().(string))
	})
	return s
}

func newTestRSS(t *testing.T, initial int) (*rss, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.New(t0)
	allow, _ := ParseAllow("127.0.0.1")
	r, err := newRSS(Config{Dir: t.TempDir(), Interval: time.Hour, Initial: initial, Allow: allow}, clk, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

func TestFetchStoresNewItemsOnce(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, clk := newTestRSS(t, 3)
	k := &fakeKernel{complete: func(req protocol.CompleteParams) (string, error) {
		title := strings.SplitN(strings.TrimPrefix(strings.SplitN(req.Messages[0].Content, "\n", 3)[1], "Title: "), "\n", 2)[0]
		return "Summary of " + title + ".", nil
	}}
	r.connect(context.Background(), k, quiet)
	ctx := context.Background()
	url := srv.URL + "/news.rss"
	if err := r.store.Put(&Feed{URL: url, Interval: time.Hour, Added: t0}); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Fetch(ctx, k, url)
	if err != nil {
		t.Fatal(err)
	}
	// A subscription stores the 3 newest of 5 items, oldest first, and marks the rest read.
	want := "RSS · Harbour Town Gazette: Fish market moves to the old warehouse|RSS · Harbour Town Gazette: Ferry timetable changes for summer|" +
		"RSS · Harbour Town Gazette: Lighthouse reopens after restoration"
	if got := strings.Join(k.titles(0), "|"); got != want || rep.Stored != 3 || rep.LLM != 3 || rep.Skipped != 2 || rep.Title != "Harbour Town Gazette" {
		t.Fatalf("report %+v, commits %s", rep, got)
	}
	c := k.commits[2]
	if c.text != "RSS · Harbour Town Gazette: Lighthouse reopens after restoration\nhttps://gazette.example/2026/05/lighthouse\n"+
		"Published 2026-05-05 09:00 UTC\nSummary: Summary of Lighthouse reopens after restoration." ||
		c.meta["source"] != "rss" || c.meta["feed"] != url || c.meta["guid"] != "gazette-1005" || c.meta["summary"] != "llm" {
		t.Fatalf("commit %+v", c)
	}
	f, _ := r.store.Get(url)
	if f.Title != "Harbour Town Gazette" || f.ETag != `"news.rss"` || f.Items != 3 || len(f.Seen) != 5 || !f.NextFetch.Equal(t0.Add(time.Hour)) {
		t.Fatalf("feed state %+v", f)
	}

	// Not due yet: a tick fetches nothing.
	hits := srv.hits.Load()
	if next := r.Tick(ctx); !next.Equal(t0.Add(maxWait)) || srv.hits.Load() != hits {
		t.Fatalf("early tick: next %v, %d requests", next, srv.hits.Load()-hits)
	}
	// An hour later the feed has two new items and an update of a seen one (same GUID).
	srv.file.Store("news2.rss")
	clk.Advance(time.Hour)
	r.Tick(ctx)
	if got := strings.Join(k.titles(3), "|"); got != "RSS · Harbour Town Gazette: Bakery wins regional bread prize|RSS · Harbour Town Gazette: Seal pup rescued at the marina" {
		t.Fatalf("second fetch stored %s", got)
	}
	// An hour later nothing changed: the server answers 304 to the conditional request.
	clk.Advance(time.Hour)
	hits = srv.hits.Load()
	r.Tick(ctx)
	f, _ = r.store.Get(url)
	if srv.hits.Load() != hits+1 || len(k.commits) != 5 || f.Items != 5 || !f.LastOK.Equal(clk.Now()) || f.ETag != `"news2.rss"` {
		t.Fatalf("after a 304: %d requests, %d commits, feed %+v", srv.hits.Load()-hits, len(k.commits), f)
	}
}

func TestFetchWithoutAModelStoresExcerpts(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "blog.atom")
	r, _ := newTestRSS(t, 5)
	k := &fakeKernel{} // no provider
	url := srv.URL + "/blog.atom"
	if err := r.store.Put(&Feed{URL: url, Interval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Fetch(context.Background(), k, url)
	if err != nil || rep.Stored != 2 || rep.LLM != 0 {
		t.Fatalf("report %+v %v", rep, err)
	}
	// Oldest first; the excerpt comes from the content when there is one, else the summary.
	if c := k.commits[0]; c.text != "RSS · Tidal Notes: 潮汐表的读法\nhttps://tidal.example/tide-tables\nPublished 2026-05-04 10:00 UTC\nExcerpt: 如何阅读潮汐表：高潮、低潮和潮差。" ||
		c.meta["summary"] != "excerpt" {
		t.Fatalf("commit %+v", c)
	}
	if c := k.commits[1]; !strings.HasSuffix(c.text, "\nExcerpt: Why spring tides are highest around the equinoxes.") {
		t.Fatalf("commit %+v", c)
	}
}

func TestFetchFailuresBackOff(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, clk := newTestRSS(t, 0)
	k := &fakeKernel{}
	r.connect(context.Background(), k, quiet)
	url := srv.URL + "/news.rss"
	if err := r.store.Put(&Feed{URL: url, Interval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv.status.Store(http.StatusInternalServerError)
	var nexts []string
	for range 3 {
		r.Tick(ctx)
		f, _ := r.store.Get(url)
		nexts = append(nexts, f.NextFetch.Sub(clk.Now()).String())
		if !strings.Contains(f.LastError, "500 Internal Server Error") {
			t.Fatalf("last error %q", f.LastError)
		}
		clk.Advance(f.NextFetch.Sub(clk.Now()))
	}
	if got := strings.Join(nexts, ","); got != "1h0m0s,2h0m0s,4h0m0s" {
		t.Fatalf("backoff %s", got)
	}
	// Retry-After longer than the backoff wins.
	srv.status.Store(http.StatusServiceUnavailable)
	r.Tick(ctx)
	f, _ := r.store.Get(url)
	if f.Failures != 4 || f.NextFetch.Sub(clk.Now()) != 10*time.Hour {
		t.Fatalf("after a 503 with Retry-After: %+v", f)
	}
	// Success resets the backoff.
	srv.status.Store(0)
	clk.Advance(10 * time.Hour)
	r.Tick(ctx)
	if f, _ = r.store.Get(url); f.Failures != 0 || f.LastError != "" || f.NextFetch.Sub(clk.Now()) != time.Hour {
		t.Fatalf("after a success: %+v", f)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		interval time.Duration
		n        int
		retry    time.Duration
		want     time.Duration
	}{
		{time.Hour, 1, 0, time.Hour},
		{time.Hour, 3, 0, 4 * time.Hour},
		{time.Hour, 10, 0, 24 * time.Hour},
		{48 * time.Hour, 3, 0, 48 * time.Hour},
		{time.Hour, 1, 5 * time.Hour, 5 * time.Hour},
	}
	for _, tt := range tests {
		if got := backoff(tt.interval, tt.n, tt.retry); got != tt.want {
			t.Errorf("backoff(%s, %d, %s) = %s, want %s", tt.interval, tt.n, tt.retry, got, tt.want)
		}
	}
}

func TestCommitFailureKeepsWhatWasStored(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, clk := newTestRSS(t, 5)
	k := &fakeKernel{commitErr: func(n int) error {
		if n == 3 {
			return errors.New("memory/commit: the store is busy")
		}
		return nil
	}}
	url := srv.URL + "/news.rss"
	if err := r.store.Put(&Feed{URL: url, Interval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.Fetch(ctx, k, url); err == nil || !strings.Contains(err.Error(), `storing "Fish market moves to the old warehouse" in memory: memory/commit: the store is busy`) {
		t.Fatalf("err %v", err)
	}
	f, _ := r.store.Get(url)
	if f.Items != 2 || len(f.Seen) != 2 || f.Failures != 1 {
		t.Fatalf("after a failed commit %+v", f)
	}
	k.commitErr = nil
	clk.Advance(time.Hour)
	if _, err := r.Fetch(ctx, k, url); err != nil {
		t.Fatal(err)
	}
	if got := len(k.commits); got != 5 {
		t.Fatalf("%d commits, want 5 (each item once)", got)
	}
}

func TestPausedTickFetchesNothing(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, clk := newTestRSS(t, 1)
	k := &fakeKernel{}
	r.connect(context.Background(), k, quiet)
	if err := r.store.Put(&Feed{URL: srv.URL + "/news.rss", Interval: time.Hour}); err != nil {
		t.Fatal(err)
	}
	r.SetPaused(true)
	clk.Advance(5 * time.Hour)
	if next := r.Tick(context.Background()); !next.IsZero() || srv.hits.Load() != 0 {
		t.Fatalf("paused tick: next %v, %d requests", next, srv.hits.Load())
	}
	r.SetPaused(false)
	r.Tick(context.Background())
	if srv.hits.Load() != 1 || len(k.commits) != 1 {
		t.Fatalf("after resume: %d requests, %d commits", srv.hits.Load(), len(k.commits))
	}
}

func TestStore(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "rss")
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]string, maxSeen+10)
	for i := range seen {
		seen[i] = "k" + string(rune('a'+i%26))
	}
	if err := s.Put(&Feed{URL: "https://example.org/feed", Interval: 2 * time.Hour, Seen: seen, Items: 7}); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s2.Get("https://example.org/feed")
	if err != nil || f.Interval != 2*time.Hour || f.Items != 7 || len(f.Seen) != maxSeen {
		t.Fatalf("reopened %+v %v", f, err)
	}
	if _, err := s2.Delete("https://example.org/other"); !errors.Is(err, ErrNotSubscribed) {
		t.Fatalf("delete unknown: %v", err)
	}
	tests := []struct{ name, content, wantErr string }{
		{"newer version", `{"version":2,"feeds":[]}`, "has version 2; this rss plugin reads version 1"},
		{"bad json", `{"version":1,"feeds":[`, "reading"},
		{"bad url", `{"version":1,"feeds":[{"url":"ftp://x/y","interval":3600000000000}]}`, "only http and https"},
		{"bad interval", `{"version":1,"feeds":[{"url":"https://x/y","interval":1}]}`, "interval 1ns is not from 5m0s to 168h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "feeds.json"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenStore(d); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestRunLoop: the scheduler fetches a due feed when the fake clock reaches it.
func TestRunLoop(t *testing.T) {
	t.Parallel()
	srv := newSwitchServer(t, "news.rss")
	r, clk := newTestRSS(t, 1)
	k := &fakeKernel{}
	ctx, cancel := context.WithCancel(context.Background())
	r.connect(ctx, k, quiet)
	url := srv.URL + "/news.rss"
	if err := r.store.Put(&Feed{URL: url, Interval: time.Hour, NextFetch: t0.Add(30 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	for range 30 {
		clk.WaitForWaiter(t)
		clk.Advance(time.Minute)
	}
	clk.WaitForWaiter(t) // the tick at 12:30 is done
	if f, _ := r.store.Get(url); f.LastOK.IsZero() || !f.NextFetch.Equal(t0.Add(90*time.Minute)) {
		t.Fatalf("feed after its time: %+v", f)
	}
	cancel()
	<-done
	if srv.hits.Load() != 1 {
		t.Fatalf("%d requests, want 1", srv.hits.Load())
	}
}
