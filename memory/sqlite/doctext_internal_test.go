package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// TestDocCacheBounds: the cache never holds more than its entries or bytes, forgets the oldest
// first, skips a document too large to share it with others, and keeps len(order) consistent.
func TestDocCacheBounds(t *testing.T) {
	for _, tc := range []struct {
		name          string
		entries, size int
		docLen        int
		puts          int
		wantKept      int
	}{
		{"by entries", 4, 1 << 20, 10, 10, 4},
		{"by bytes", 100, 16 * (58 + 48), 10, 40, 16}, // 16 documents of 58 bytes (+48 overhead)
		{"below both", 100, 1 << 20, 10, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newDocCache(tc.entries, tc.size)
			for i := 1; i <= tc.puts; i++ {
				c.put([]int64{int64(i)}, []docText{{tokens: strings.Repeat("a", tc.docLen), expansion: strings.Repeat("b", 48)}})
				if len(c.m) > tc.entries || c.bytes > tc.size || len(c.order)-c.head != len(c.m) {
					t.Fatalf("after %d puts: %d entries, %d bytes, order %d-%d", i, len(c.m), c.bytes, len(c.order), c.head)
				}
			}
			if len(c.m) != tc.wantKept {
				t.Fatalf("kept %d entries, want %d", len(c.m), tc.wantKept)
			}
			for i := 1; i <= tc.puts; i++ { // the newest are the ones kept
				_, ok := c.get(int64(i))
				if want := i > tc.puts-tc.wantKept; ok != want {
					t.Fatalf("entry %d cached = %v, want %v", i, ok, want)
				}
			}
			c.reset()
			if _, ok := c.get(int64(tc.puts)); ok || c.bytes != 0 {
				t.Fatal("reset kept entries")
			}
		})
	}
	c := newDocCache(100, 1600)
	c.put([]int64{1}, []docText{{tokens: strings.Repeat("x", 200)}}) // > 1/16 of the bytes
	if _, ok := c.get(1); ok {
		t.Fatal("a document above a sixteenth of the budget was cached")
	}
}

// TestSearchTermsSameHitsColdCache: a search scores from the cache when it holds the candidates
// (filled by the appends) and from the table when it does not (a store just opened): the hits
// and their scores are the same either way, with and without a filter.
func TestSearchTermsSameHitsColdCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	words := []string{"hiking", "mountains", "river", "boat", "coffee", "tea", "garden", "trail"}
	var evs []memory.Event
	for i := range 300 {
		text := fmt.Sprintf("%s %s %s note %d", words[i%8], words[(i*3)%8], words[(i*5+1)%8], i)
		evs = append(evs, memory.Event{Session: []string{"a", "b"}[i%2], Role: memory.RoleUser, Content: text})
	}
	if _, err := s.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	queries := []memory.TextQuery{
		{Terms: []string{"hiking", "river", "note"}, Limit: 20, Viewer: memory.OwnerViewer},
		{Terms: []string{"coffee", "garden"}, Limit: 5, Session: "b", Viewer: memory.OwnerViewer},
		{Terms: []string{"trail", "boat", "tea", "mountains"}, Limit: 50, Layers: []memory.Layer{memory.LayerL1}, Viewer: memory.OwnerViewer},
	}
	search := func(s *Store) [][]memory.TextHit {
		var out [][]memory.TextHit
		for _, q := range queries {
			hits, err := s.SearchTerms(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 {
				t.Fatalf("no hits for %v", q.Terms)
			}
			out = append(out, hits)
		}
		return out
	}
	warm := search(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.docs.m) != 0 {
		t.Fatalf("a store just opened has %d cached documents", len(s.docs.m))
	}
	cold := search(s)
	if len(s.docs.m) == 0 {
		t.Fatal("the cold searches cached nothing")
	}
	for i := range queries {
		same := slices.EqualFunc(warm[i], cold[i], func(a, b memory.TextHit) bool { return a.Event.ID == b.Event.ID && a.Score == b.Score })
		if !same {
			t.Fatalf("query %d: warm and cold hits differ", i)
		}
	}
}
