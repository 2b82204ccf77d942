package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mmcdole/gofeed"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
	"github.com/hologramagent/hologram/plugins/builtin/internal/toolargs"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Scheduling and processing bounds.
const (
	// maxWait bounds one wait of the scheduler, so a jump of the wall clock is noticed.
	maxWait = time.Minute
	// maxPerFetch bounds the new items one fetch summarises; older new items are marked read.
	maxPerFetch = 20
	// maxBackoff bounds the wait after repeated failures (unless the interval is longer).
	maxBackoff = 24 * time.Hour
	// maxFeeds bounds the subscriptions.
	maxFeeds = 200
)

// KernelAPI is what the plugin asks of the kernel: completions for summaries and memory
// commits (*sdk.Kernel implements it).
type KernelAPI interface {
	Complete(ctx context.Context, req protocol.CompleteParams) (protocol.CompleteResult, error)
	Commit(ctx context.Context, text string, meta map[string]string) (protocol.MemoryCommitResult, error)
}

// rss is the plugin: subscriptions, the fetcher and the fetch scheduler.
type rss struct {
	cfg     Config
	store   *Store
	fetcher *Fetcher
	clock   clock.Clock
	wake    clock.Wake
	fetchMu sync.Mutex // one fetch at a time: the scheduler's and the tools'

	mu     sync.Mutex
	api    KernelAPI
	log    *slog.Logger
	base   context.Context // the plugin's lifetime (Start's ctx): work outside a turn runs in it
	paused bool
}

// newRSS opens the subscriptions of cfg.
func newRSS(cfg Config, clk clock.Clock, log *slog.Logger) (*rss, error) {
	store, err := OpenStore(cfg.Dir)
	if err != nil {
		return nil, err
	}
	return &rss{cfg: cfg, store: store, fetcher: NewFetcher(Guard{Allow: cfg.Allow}, cfg), clock: clk,
		wake: clock.NewWake(), log: log, base: context.Background()}, nil
}

// connect records the kernel the plugin talks to, its logger and its lifetime.
func (r *rss) connect(ctx context.Context, api KernelAPI, log *slog.Logger) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.api, r.log, r.base = api, log, ctx
}

func (r *rss) state() (KernelAPI, *slog.Logger, context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.api, r.log, r.base
}

// SetPaused stops (true) or resumes (false) scheduled fetching.
func (r *rss) SetPaused(paused bool) {
	r.mu.Lock()
	r.paused = paused
	r.mu.Unlock()
	r.poke()
}

// Paused reports whether scheduled fetching is stopped.
func (r *rss) Paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused
}

func (r *rss) poke() { r.wake.Poke() }

// Run fetches feeds on their schedules until ctx ends.
func (r *rss) Run(ctx context.Context) { clock.Loop(ctx, r.clock, r.wake, r.Tick) }

// Tick fetches the feeds that are due and returns when to look again (zero while paused).
func (r *rss) Tick(ctx context.Context) time.Time {
	if r.Paused() {
		return time.Time{}
	}
	api, log, _ := r.state()
	now := r.clock.Now()
	if api == nil {
		return now.Add(maxWait)
	}
	for _, f := range r.store.List() {
		if f.NextFetch.After(now) {
			continue
		}
		if r.Paused() || ctx.Err() != nil {
			return time.Time{}
		}
		rep, err := r.fetch(ctx, api, f.URL, now)
		if errors.Is(err, errNotDue) {
			continue // fetched by a tool call since the list was read
		}
		if err != nil {
			log.Warn("feed fetch failed", "url", f.URL, "err", err, "failures", rep.Failures, "next", rep.Next.Format(time.RFC3339))
			continue
		}
		log.Info("feed fetched", "url", f.URL, "not_modified", rep.NotModified, "new", rep.Stored, "llm", rep.LLM, "skipped", rep.Skipped)
	}
	next := r.clock.Now().Add(maxWait)
	for _, f := range r.store.List() {
		if f.NextFetch.Before(next) {
			next = f.NextFetch
		}
	}
	return next
}

// Report is the outcome of fetching one feed.
type Report struct {
	Title       string
	NotModified bool
	Stored      int // new items stored in memory
	LLM         int // of which the model summarised
	Skipped     int // older new items marked read without storing (beyond the per-fetch bound)
	Failures    int
	Next        time.Time
}

// backoff is the wait before the next fetch after n consecutive failures: the interval, then
// doubling, at most a day (or the interval when that is longer), at least retryAfter.
func backoff(interval time.Duration, n int, retryAfter time.Duration) time.Duration {
	d := interval
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, max(maxBackoff, interval))
	return max(d, retryAfter)
}

// itemKey identifies an item across fetches: its GUID, else its link, else its title and date.
func itemKey(it *gofeed.Item) string {
	switch {
	case strings.TrimSpace(it.GUID) != "":
		return "guid:" + strings.TrimSpace(it.GUID)
	case strings.TrimSpace(it.Link) != "":
		return "link:" + strings.TrimSpace(it.Link)
	case strings.TrimSpace(it.Title) != "":
		return "title:" + strings.TrimSpace(it.Title) + "|" + it.Published
	}
	return ""
}

// itemTime is an item's publication (or update) time.
func itemTime(it *gofeed.Item) *time.Time {
	if it.PublishedParsed != nil {
		return it.PublishedParsed
	}
	return it.UpdatedParsed
}

// oldestFirst orders a feed's items oldest first: by date when every item has one, else in
// reverse document order (feeds list the newest first).
func oldestFirst(items []*gofeed.Item) []*gofeed.Item {
	out := slices.Clone(items)
	slices.Reverse(out)
	for _, it := range out {
		if itemTime(it) == nil {
			return out
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return itemTime(out[i]).Before(*itemTime(out[j])) })
	return out
}

// memoryText is what an item becomes in memory.
func memoryText(feedTitle string, it *gofeed.Item, s Summary) string {
	var b strings.Builder
	title := strings.TrimSpace(it.Title)
	if title == "" {
		title = "(untitled)"
	}
	b.WriteString("RSS · " + feedTitle + ": " + collapse(title))
	if it.Link != "" {
		b.WriteString("\n" + strings.TrimSpace(it.Link))
	}
	if t := itemTime(it); t != nil {
		b.WriteString("\nPublished " + t.UTC().Format("2006-01-02 15:04 UTC"))
	}
	label := "Summary"
	if s.Mode == modeExcerpt {
		label = "Excerpt"
	}
	b.WriteString("\n" + label + ": " + s.Text)
	return b.String()
}

// itemText is an item's readable text: its content, else its description.
func itemText(it *gofeed.Item) string {
	if t := PlainText(it.Content); t != "" {
		return t
	}
	return PlainText(it.Description)
}

// Fetch fetches the feed at url now and stores its new items in memory through api: summaries
// by the owner's model, or excerpts. The first successful fetch of a feed (a new
// subscription) stores only the cfg.Initial newest items and marks the others read; later
// ones store at most maxPerFetch. The feed's state (validators, next fetch, backoff) is saved
// either way.
func (r *rss) Fetch(ctx context.Context, api KernelAPI, url string) (Report, error) {
	return r.fetch(ctx, api, url, time.Time{})
}

// errNotDue is fetch's answer when the feed is no longer due at the time the scheduler asked.
var errNotDue = errors.New("not due")

// fetch is Fetch; with a non-zero due it fetches only when the feed is still due then, read
// under the fetch lock, so a tick that listed the feeds before a tool call fetched one (or
// while a subscription was being fetched for the first time) does not fetch it twice.
func (r *rss) fetch(ctx context.Context, api KernelAPI, url string, due time.Time) (Report, error) {
	r.fetchMu.Lock()
	defer r.fetchMu.Unlock()
	_, log, _ := r.state()
	f, err := r.store.Get(url)
	if err != nil {
		return Report{}, err
	}
	if !due.IsZero() && (f.NextFetch.After(due)) {
		return Report{}, errNotDue
	}
	now := r.clock.Now()
	res, err := r.fetcher.Fetch(ctx, f.URL, f.ETag, f.LastModified, now)
	if err != nil {
		return r.failed(f, now, err, nil, 0)
	}
	rep := Report{Title: f.Title, NotModified: res.NotModified}
	if res.NotModified {
		return r.succeeded(f, now, rep, nil, res)
	}
	if rep.Title == "" {
		rep.Title = strings.TrimSpace(res.Feed.Title)
	}
	if rep.Title == "" {
		rep.Title = f.URL
	}
	seen := map[string]bool{}
	for _, k := range f.Seen {
		seen[k] = true
	}
	var fresh []*gofeed.Item
	for _, it := range oldestFirst(res.Feed.Items) {
		if k := itemKey(it); k != "" && !seen[k] {
			seen[k] = true
			fresh = append(fresh, it)
		}
	}
	limit := maxPerFetch
	if f.LastOK.IsZero() {
		limit = r.cfg.Initial
	}
	var done []string
	if len(fresh) > limit {
		rep.Skipped = len(fresh) - limit
		for _, it := range fresh[:rep.Skipped] {
			done = append(done, itemKey(it))
		}
		fresh = fresh[rep.Skipped:]
	}
	complete := Completer(api.Complete)
	for _, it := range fresh {
		s := Summarise(ctx, complete, rep.Title, it.Title, it.Link, itemText(it))
		if s.NoProvider {
			complete = nil // no model: excerpts for the rest too
		}
		if s.Err != nil {
			log.Warn("summary by the model failed; storing an excerpt", "url", f.URL, "item", it.Title, "err", s.Err)
		}
		meta := map[string]string{"source": "rss", "feed": f.URL, "summary": s.Mode}
		if it.Link != "" {
			meta["link"] = it.Link
		}
		if it.GUID != "" {
			meta["guid"] = it.GUID
		}
		if _, err := api.Commit(ctx, memoryText(rep.Title, it, s), meta); err != nil {
			return r.failed(f, now, fmt.Errorf("storing %q in memory: %w", it.Title, err), done, rep.Stored)
		}
		done = append(done, itemKey(it))
		rep.Stored++
		if s.Mode == modeLLM {
			rep.LLM++
		}
	}
	return r.succeeded(f, now, rep, done, res)
}

// succeeded saves a successful fetch of f.
func (r *rss) succeeded(f *Feed, now time.Time, rep Report, done []string, res Fetched) (Report, error) {
	rep.Next = now.Add(f.Interval)
	err := r.store.Update(f.URL, func(s *Feed) {
		if s.Title == "" && rep.Title != s.URL {
			s.Title = rep.Title
		}
		if !res.NotModified {
			s.ETag, s.LastModified = res.ETag, res.LastModified
		}
		s.LastFetch, s.LastOK, s.NextFetch = now, now, rep.Next
		s.Failures, s.LastError = 0, ""
		s.Items += rep.Stored
		s.Seen = append(s.Seen, done...)
	})
	return rep, err
}

// failed saves a failed fetch of f (keeping the items in done as read, stored of them in
// memory) and returns cause.
func (r *rss) failed(f *Feed, now time.Time, cause error, done []string, stored int) (Report, error) {
	var retry time.Duration
	var he *HTTPError
	if errors.As(cause, &he) {
		retry = he.RetryAfter
	}
	rep := Report{Title: f.Title, Failures: f.Failures + 1}
	rep.Next = now.Add(backoff(f.Interval, rep.Failures, retry))
	err := r.store.Update(f.URL, func(s *Feed) {
		s.LastFetch, s.NextFetch = now, rep.Next
		s.Failures, s.LastError = rep.Failures, cause.Error()
		s.Items += stored
		s.Seen = append(s.Seen, done...)
	})
	return rep, errors.Join(cause, err)
}

// detach returns a context for work a tool starts that belongs to no turn (memory written
// outside a turn is owner-private), cancelled when the tool's ctx is.
func (r *rss) detach(toolCtx context.Context) (context.Context, func()) {
	_, _, base := r.state()
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(toolCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// plugin is the rss plugin's definition.
func (r *rss) plugin() sdk.Plugin {
	str := `{"type":"string"}`
	return sdk.Plugin{
		Name:    "rss",
		Version: "1.0.0",
		Instructions: "The rss plugin follows the owner's RSS, Atom and JSON feeds: new items are summarised into the owner's " +
			"private memory on a schedule, so recall finds them.",
		Tools: []sdk.Tool{
			{Name: "rss_subscribe", Description: "Subscribes to an RSS, Atom or JSON feed: fetches it now and then on a schedule; new items are summarised into the owner's memory.",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"url":` + str +
					`,"interval":{"type":"string","description":"fetch interval, e.g. 30m, 2h (default ` + r.cfg.Interval.String() + `)"},"title":` + str + `},"required":["url"]}`),
				Run: r.subscribe},
			{Name: "rss_unsubscribe", Description: "Stops following a feed (what is in memory stays).",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"url":` + str + `},"required":["url"]}`),
				Run:         r.unsubscribe},
			{Name: "rss_list", Description: "Lists the subscribed feeds with their state.",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{}}`), ReadOnly: true, Run: r.list},
			{Name: "rss_fetch", Description: "Fetches one subscribed feed (or all) now.",
				InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"url":` + str + `}}`), Run: r.fetchNow},
		},
		OnPause: func(_ context.Context, k *sdk.Kernel, paused bool) {
			r.SetPaused(paused)
			k.Logger().Info("scheduled fetching "+map[bool]string{true: "paused", false: "resumed"}[paused], "paused", paused)
		},
		Start: func(ctx context.Context, k *sdk.Kernel) error {
			r.connect(ctx, k, k.Logger())
			if k.Paused() {
				r.SetPaused(true)
			}
			k.Logger().Info("rss started", "dir", r.cfg.Dir, "feeds", len(r.store.List()), "paused", k.Paused())
			r.Run(ctx)
			return nil
		},
	}
}

// describe says what a fetch did.
func (rep Report) describe() string {
	if rep.NotModified {
		return "not modified since the last fetch"
	}
	s := fmt.Sprintf("%d new items stored in memory (%d summarised by the model, %d as excerpts)", rep.Stored, rep.LLM, rep.Stored-rep.LLM)
	if rep.Skipped > 0 {
		s += fmt.Sprintf("; %d older items marked as read", rep.Skipped)
	}
	return s
}

func (r *rss) subscribe(toolCtx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ URL, Interval, Title string }
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	u, err := ValidateURL(a.URL)
	if err != nil {
		return sdk.Result{}, err
	}
	interval := r.cfg.Interval
	if strings.TrimSpace(a.Interval) != "" {
		if interval, err = ParseInterval(a.Interval); err != nil {
			return sdk.Result{}, err
		}
	}
	if _, err := r.store.Get(u.String()); err == nil {
		return sdk.Result{}, fmt.Errorf("already subscribed to %s", u)
	}
	if len(r.store.List()) >= maxFeeds {
		return sdk.Result{}, fmt.Errorf("already %d subscriptions, the most this plugin keeps", maxFeeds)
	}
	// Not due for the scheduler while this call fetches it the first time.
	now := r.clock.Now()
	f := &Feed{URL: u.String(), Title: strings.TrimSpace(a.Title), Interval: interval, Added: now, NextFetch: now.Add(interval)}
	if err := r.store.Put(f); err != nil {
		return sdk.Result{}, err
	}
	ctx, done := r.detach(toolCtx)
	defer done()
	rep, err := r.Fetch(ctx, k, f.URL)
	if err != nil {
		if _, derr := r.store.Delete(f.URL); derr != nil {
			err = errors.Join(err, derr)
		}
		return sdk.Result{}, fmt.Errorf("not subscribed: %w", err)
	}
	r.poke()
	return sdk.Text(fmt.Sprintf("subscribed to %s (%s), fetched every %s: %s", rep.Title, f.URL, interval, rep.describe())), nil
}

func (r *rss) unsubscribe(_ context.Context, _ *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ URL string }
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	u, err := ValidateURL(a.URL)
	if err != nil {
		return sdk.Result{}, err
	}
	f, err := r.store.Delete(u.String())
	if err != nil {
		return sdk.Result{}, err
	}
	r.poke()
	return sdk.Text(fmt.Sprintf("unsubscribed from %s; the %d items it brought stay in memory", f.URL, f.Items)), nil
}

func (r *rss) list(_ context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{}
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	feeds := r.store.List()
	if len(feeds) == 0 {
		return sdk.Text("no subscriptions"), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d subscriptions", len(feeds))
	if k.Paused() {
		b.WriteString(" (scheduled fetching is paused)")
	}
	for _, f := range feeds {
		title := f.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(&b, "\n- %s <%s> every %s, %d items in memory", title, f.URL, f.Interval, f.Items)
		switch {
		case f.LastFetch.IsZero():
			b.WriteString("; not fetched yet")
		case f.LastError != "":
			fmt.Fprintf(&b, "; %d failed fetches, the last at %s: %s", f.Failures, f.LastFetch.Format("2006-01-02 15:04"), f.LastError)
		default:
			fmt.Fprintf(&b, "; fetched %s", f.LastOK.Format("2006-01-02 15:04"))
		}
		if !f.NextFetch.IsZero() {
			fmt.Fprintf(&b, "; next %s", f.NextFetch.Format("2006-01-02 15:04"))
		}
	}
	return sdk.Text(b.String()), nil
}

func (r *rss) fetchNow(toolCtx context.Context, k *sdk.Kernel, args json.RawMessage) (sdk.Result, error) {
	var a struct{ URL string }
	if err := toolargs.DecodeWhole(args, &a); err != nil {
		return sdk.Result{}, err
	}
	var urls []string
	if strings.TrimSpace(a.URL) != "" {
		u, err := ValidateURL(a.URL)
		if err != nil {
			return sdk.Result{}, err
		}
		if _, err := r.store.Get(u.String()); err != nil {
			return sdk.Result{}, err
		}
		urls = []string{u.String()}
	} else {
		for _, f := range r.store.List() {
			urls = append(urls, f.URL)
		}
		if len(urls) == 0 {
			return sdk.Result{}, errors.New("no subscriptions to fetch (rss_subscribe adds one)")
		}
	}
	ctx, done := r.detach(toolCtx)
	defer done()
	var b strings.Builder
	failed := 0
	for _, u := range urls {
		rep, err := r.Fetch(ctx, k, u)
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if err != nil {
			failed++
			fmt.Fprintf(&b, "%s: failed: %v (next try %s)", u, err, rep.Next.Format("2006-01-02 15:04"))
			continue
		}
		fmt.Fprintf(&b, "%s: %s", rep.Title, rep.describe())
	}
	r.poke()
	if failed == len(urls) {
		return sdk.Result{}, errors.New(b.String())
	}
	return sdk.Text(b.String()), nil
}
