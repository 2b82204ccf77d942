package sqlite_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// corpus generates English-like synthetic text: 50,000 pseudo-words drawn by a Zipf law, 8 to 40
// of them per event.
type corpus struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	words []string
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	syll := []string{"ka", "to", "ri", "men", "sa", "lo", "ver", "an", "di", "que", "po", "el", "stra", "nu", "ib", "or"}
	seen := make(map[string]bool)
	var words []string
	for len(words) < 50_000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return &corpus{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(words)-1)), words: words}
}

func (c *corpus) word() string { return c.words[c.zipf.Uint64()] }

func (c *corpus) text() string {
	n := 8 + c.rng.IntN(33)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.word()
	}
	return strings.Join(ws, " ")
}

// fill stores n events in 4 sessions with mixed scopes, in batches of 1,000.
func fill(b *testing.B, s *sqlite.Store, c *corpus, n int) {
	b.Helper()
	ctx := context.Background()
	scopes := []memory.Scope{{}, {Kind: memory.ScopePublic}, {Kind: memory.ScopeGroup, Group: "g1"}, {Kind: memory.ScopeGroup, Group: "g2"}}
	for i, id := range []string{"s0", "s1", "s2", "s3"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id, Scope: scopes[i]}); err != nil {
			b.Fatal(err)
		}
	}
	for done := 0; done < n; done += 1000 {
		batch := make([]memory.Event, min(1000, n-done))
		for i := range batch {
			k := c.rng.IntN(4)
			batch[i] = memory.Event{Session: []string{"s0", "s1", "s2", "s3"}[k], Role: memory.RoleUser, Content: c.text(), Scope: scopes[k]}
		}
		if _, err := s.AppendEvents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// reportLatency reports the p50 and p95 of ds in milliseconds.
func reportLatency(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	if len(ds) == 0 {
		return
	}
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkSearchTerms100k: 100,000 events, 6 Zipf-drawn terms per query, Limit 200, owner and
// group viewers. Run with -cpu 1 for the one-core figure.
func BenchmarkSearchTerms100k(b *testing.B) {
	ctx := context.Background()
	s := openAt(b, filepath.Join(b.TempDir(), "m.db"))
	c := newCorpus(1)
	fill(b, s, c, 100_000)
	queries := make([][]string, 256)
	for i := range queries {
		for range 6 {
			queries[i] = append(queries[i], c.word())
		}
	}
	for _, v := range []struct {
		name   string
		viewer memory.Viewer
	}{{"owner", memory.OwnerViewer}, {"group", memory.Viewer{Group: "g1"}}} {
		b.Run(v.name, func(b *testing.B) {
			var ds []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: queries[i%len(queries)], Viewer: v.viewer, Limit: 200})
				ds = append(ds, time.Since(start))
				if err != nil || len(hits) == 0 {
					b.Fatalf("SearchTerms = %d hits, %v", len(hits), err)
				}
				i++
			}
			reportLatency(b, ds)
		})
	}
}

// BenchmarkIngest appends one event per AppendEvents call (each call one commit).
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	s := openAt(b, filepath.Join(b.TempDir(), "m.db"))
	c := newCorpus(2)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 1024)
	for i := range texts {
		texts[i] = c.text()
	}
	i := 0
	start := time.Now()
	for b.Loop() {
		if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: texts[i%len(texts)]}}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkSetLayer moves one event of 2,000 between L1 and L2 per call (each call one commit),
// as the L1 window does when it sinks an event after a turn.
func BenchmarkSetLayer(b *testing.B) {
	ctx := context.Background()
	s := openAt(b, filepath.Join(b.TempDir(), "m.db"))
	c := newCorpus(3)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		b.Fatal(err)
	}
	batch := make([]memory.Event, 2000)
	for i := range batch {
		batch[i] = memory.Event{Session: "a", Role: memory.RoleUser, Content: c.text()}
	}
	evs, err := s.AppendEvents(ctx, batch)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		l := memory.LayerL2
		if (i/len(evs))%2 == 1 {
			l = memory.LayerL1
		}
		if err := s.SetLayer(ctx, []int64{evs[i%len(evs)].ID}, l); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
