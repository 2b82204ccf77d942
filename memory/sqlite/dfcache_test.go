package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestDocFreqCacheStaysExact: document frequencies are cached and kept up to date by appends;
// after rounds of appends and lookups they must equal what a fresh store reads from the index.
func TestDocFreqCacheStaysExact(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	expand := func(text string) []string { return []string{"expanded", "expanded"} } // twice: counted once per event
	s, err := sqlite.Open(ctx, path, sqlite.Options{Expand: expand})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	terms := []string{"alpha", "beta", "gamma", "expanded", "never"}
	for round := 0; round < 5; round++ {
		var evs []memory.Event
		for i := 0; i < 7; i++ {
			evs = append(evs, memory.Event{Session: "a", Role: memory.RoleUser,
				Content: fmt.Sprintf("alpha alpha round%d %s", round, []string{"beta", "gamma beta", "x"}[i%3])})
		}
		if _, err := s.AppendEvents(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.DocFreq(ctx, terms); err != nil { // fills the cache
			t.Fatal(err)
		}
	}
	got, n, err := s.DocFreq(ctx, terms)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := sqlite.Open(ctx, path, sqlite.Options{Expand: expand})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want, wn, err := fresh.DocFreq(ctx, terms)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || n != wn || want[0] != 35 || want[3] != 35 || want[4] != 0 {
		t.Fatalf("cached %v of %d, fresh %v of %d", got, n, want, wn)
	}
}
