package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestWindowCacheStaysInStepWithTheStore: the in-memory L1 candidates of a session (kept so a
// turn does not reload its window) must equal what the store holds after appends, sinks and
// recalls back to L1, term for term.
func TestWindowCacheStaysInStepWithTheStore(t *testing.T) {
	ctx := context.Background()
	tokens := memory.DefaultTokenize
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Tokenize: tokens})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := New(Options{Store: store, Tokens: tokens, Config: Config{WindowTokens: 256, Recent: 4, HistoryLimit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := store.CreateSession(ctx, memory.Session{ID: "main"}); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		l1, err := store.LayerEvents(ctx, "main", memory.LayerL1)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(l1))
		for i, e := range l1 {
			ids[i] = e.ID
		}
		indexed, err := store.Events(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		sw := m.sessWins["main"]
		if sw == nil {
			t.Fatalf("%s: no window loaded", step)
		}
		if len(sw.cands) != len(indexed) {
			t.Fatalf("%s: cache holds %d events, the store's L1 %d", step, len(sw.cands), len(indexed))
		}
		for i, h := range indexed {
			c := sw.cands[i]
			want := sw.vocab.Lookup(strings.Fields(h.Indexed))
			if c.Event.ID != h.Event.ID || !slices.Equal(c.Terms, want) {
				t.Fatalf("%s: item %d is event %d with terms %v, the store has %d with %v", step, i, c.Event.ID, c.Terms, h.Event.ID, want)
			}
		}
	}
	ingest := func(from, n int) {
		var evs []memory.Event
		for i := from; i < from+n; i++ {
			c := fmt.Sprintf("note %d about topic%d and common words", i, i%7)
			evs = append(evs, memory.Event{Session: "main", Role: memory.RoleUser, Content: c, Time: time.Now(), Tokens: len(c) / 4})
		}
		stored, err := store.AppendEvents(ctx, evs)
		if err != nil {
			t.Fatal(err)
		}
		m.Appended(stored) // as the kernel's writes do
	}
	ingest(0, 30)
	if _, err := m.ContextWindow(ctx, "main", "topic3"); err != nil { // loads, then sinks most
		t.Fatal(err)
	}
	check("after the first window")
	ingest(30, 10)
	check("after appends")
	if _, err := m.ContextWindow(ctx, "main", "topic5 note"); err != nil {
		t.Fatal(err)
	}
	check("after a second sink")
	// Bring cold events back as coldcontext_query does.
	hits, err := m.Recall(ctx, "main", "topic1", 3, []memory.Layer{memory.LayerL2}, nil)
	if err != nil || len(hits) == 0 {
		t.Fatalf("recall: %v %v", hits, err)
	}
	if _, err := m.ColdQuery(ctx, "main", "topic1", 3); err != nil {
		t.Fatal(err)
	}
	check("after recall to L1")
}
