package kernel_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// memAssets are the memory's tokenizer and lexicon built exactly as homed builds them
// (cmd/homed/serve.go newMemoryAssets), shared by every kernel of the test binary: both are safe
// for concurrent use, and loading jieba and WordNet once keeps the suite fast.
var memAssets struct {
	once sync.Once
	tok  *embed.Tokenizer
	lex  *embed.Lexicon
	err  error
}

// sharedAssets returns the tokenizer and lexicon, loaded (jieba included) so that indexing and
// queries tokenise alike from the first event on.
func sharedAssets(t testing.TB) (*embed.Tokenizer, *embed.Lexicon) {
	t.Helper()
	memAssets.once.Do(func() {
		memAssets.lex = embed.NewLexicon(embed.LexiconOptions{})
		memAssets.tok = embed.NewTokenizer(embed.TokenizerOptions{})
		if memAssets.err = memAssets.lex.Load(context.Background()); memAssets.err != nil {
			return
		}
		memAssets.err = memAssets.tok.Load(context.Background())
	})
	if memAssets.err != nil {
		t.Fatalf("memory assets (jieba dictionaries, WordNet: `make deps`): %v", memAssets.err)
	}
	return memAssets.tok, memAssets.lex
}

// memKernel is a started kernel with the memory features on, and the store under it (tests read
// layers and accesses from it directly).
type memKernel struct {
	*kernel.Kernel
	Store *sqlite.Store
}

// memOptions shape [newMemKernel]; zero fields take homed's defaults.
type memOptions struct {
	WindowTokens int // memory.window_tokens
	Recent       int // memory.recent
	// Seen, when set, is called with every text the store and the kernel tokenise (it must be
	// safe for concurrent use).
	Seen func(text string)
	// Clock, when set, is the kernel's and the store's clock.
	Clock func() time.Time
	// Extractor is memory.extractor ("": homed's default, auto).
	Extractor string
	// OCR is the kernel's OCR assets (zero: images keep no text).
	OCR kernel.OCRDeps
}

// newMemKernel builds a started kernel the way homed does: a real SQLite file indexed with the
// real tokenizer and WordNet expansion, the kernel's Tokens set to the same tokenizer, a real
// codec and the OpenAI-compatible provider factory.
func newMemKernel(t testing.TB, o memOptions) memKernel {
	t.Helper()
	tok, lex := sharedAssets(t)
	dir := t.TempDir()
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	if o.WindowTokens > 0 {
		cfg.Memory.WindowTokens = o.WindowTokens
	}
	if o.Recent > 0 {
		cfg.Memory.Recent = o.Recent
	}
	if o.Extractor != "" {
		cfg.Memory.Extractor = o.Extractor
	}
	cfg.Memory.GCInterval.Duration = 0 // tests run memgc on demand
	tokens := tok.Tokens
	if o.Seen != nil {
		tokens = func(text string) ([]string, error) { o.Seen(text); return tok.Tokens(text) }
	}
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{Tokenize: tokens, Expand: lex.Expand, Clock: o.Clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "config", "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(cfg, kernel.Deps{
		Store:  store,
		Sealer: security.NewCodec(keys),
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, Proxy: ps.Proxy, Vision: ps.Vision, MaxRetries: -1})
		},
		Tokens: tokens,
		Clock:  o.Clock,
		OCR:    o.OCR,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return memKernel{Kernel: k, Store: store}
}
