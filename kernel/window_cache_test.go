package kernel

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestWindowCacheStaysInStepWithTheStore: the in-memory L1 candidates of a session (kept so a
// turn does not reload its window) must equal what the store holds after appends, sinks and
// recalls back to L1, term for term.
func TestWindowCacheStaysInStepWithTheStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Memory.WindowTokens, cfg.Memory.Recent = 256, 4
	tokens := memory.DefaultTokenize
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "m.db"), sqlite.Options{Tokenize: tokens})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(cfg, Deps{Store: store, Sealer: security.NewCodec(keys), Tokens: tokens,
		NewProvider: func(ProviderSettings) (llm.Provider, error) { return nil, llm.ErrNoProvider }})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.Start(ctx); err != nil {
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
		k.mem.mu.Lock()
		defer k.mem.mu.Unlock()
		sw := k.mem.sessWins["main"]
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
		var evs []IngestEvent
		for i := from; i < from+n; i++ {
			evs = append(evs, IngestEvent{Session: "main", Content: fmt.Sprintf("note %d about topic%d and common words", i, i%7)})
		}
		if _, err := k.Ingest(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	ingest(0, 30)
	if _, err := k.mem.contextWindow(ctx, "main", "topic3"); err != nil { // loads, then sinks most
		t.Fatal(err)
	}
	check("after the first window")
	ingest(30, 10)
	check("after appends")
	if _, err := k.mem.contextWindow(ctx, "main", "topic5 note"); err != nil {
		t.Fatal(err)
	}
	check("after a second sink")
	// Bring cold events back as coldcontext_query does.
	hits, err := k.mem.recall(ctx, "main", "topic1", 3, []memory.Layer{memory.LayerL2}, nil)
	if err != nil || len(hits) == 0 {
		t.Fatalf("recall: %v %v", hits, err)
	}
	tr := coldQueryTool{k.mem}
	if _, err := tr.Run(agent.WithTurn(ctx, agent.TurnRequest{Session: "main"}), []byte(`{"query":"topic1","k":3}`)); err != nil {
		t.Fatal(err)
	}
	check("after recall to L1")
}
