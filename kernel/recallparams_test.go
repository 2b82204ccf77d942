package kernel_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestRecallParamsFromConfig: the [memory.recall] keys reach recall (a small passage bound cuts
// a long message to its passage), and an unknown key stops kernel.New naming it.
func TestRecallParamsFromConfig(t *testing.T) {
	tok, lex := sharedAssets(t)
	newKernel := func(t *testing.T, recall map[string]float64) (*kernel.Kernel, error) {
		dir := t.TempDir()
		cfg := config.Default(func(string) string { return "" })
		cfg.DataDir = filepath.Join(dir, "data")
		cfg.Memory.GCInterval.Duration = 0
		cfg.Memory.Recall = recall
		store, err := sqlite.Open(context.Background(), filepath.Join(dir, "hologram.db"), sqlite.Options{Tokenize: tok.Tokens, Expand: lex.Expand})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "key"))
		if err != nil {
			t.Fatal(err)
		}
		k, err := kernel.New(cfg, kernel.Deps{Store: store, Sealer: security.NewCodec(keys), Tokens: tok.Tokens,
			NewProvider: func(kernel.ProviderSettings) (llm.Provider, error) { return nil, llm.ErrNoProvider }})
		if err == nil {
			t.Cleanup(func() { k.Close() })
		}
		return k, err
	}
	t.Run("unknown key", func(t *testing.T) {
		if _, err := newKernel(t, map[string]float64{"passage_tokenz": 5}); err == nil || !strings.Contains(err.Error(), `"passage_tokenz"`) {
			t.Fatalf("kernel.New: %v, want an error naming passage_tokenz", err)
		}
	})
	t.Run("passage bound", func(t *testing.T) {
		k, err := newKernel(t, map[string]float64{"passage_tokens": 12})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := k.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := k.Service().CreateSession(ctx, client.Session{ID: "s", Channel: "test", Scope: "group:g"}); err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("We talked about the weather for a while. ", 12) + "The spare key hides under the blue flowerpot. " +
			strings.Repeat("Then we talked about the weather again. ", 12)
		if _, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: "s", Content: long, Time: time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC)}}); err != nil {
			t.Fatal(err)
		}
		hits, err := k.Recall(ctx, "s", "where is the spare key", 5)
		if err != nil || len(hits) == 0 {
			t.Fatalf("recall: %v, %v", hits, err)
		}
		if p := hits[0].Passage; !strings.Contains(p, "spare key hides under the blue flowerpot") || strings.Contains(p, "weather again") || hits[0].Tokens() > 12 {
			t.Errorf("passage %q (%d tokens)", p, hits[0].Tokens())
		}
	})
}
