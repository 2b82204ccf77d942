package kernel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/api"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/kerneltest"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// embKernel is a started kernel with dense embeddings set up, its store and data dir.
type embKernel struct {
	*kernel.Kernel
	Store *sqlite.Store
	Dir   string
}

// embOptions shape newEmbKernel.
type embOptions struct {
	Dir    string // the data dir ("" a new one): reuse it to restart a kernel on the same data
	Deps   kernel.EmbeddingDeps
	Clock  func() time.Time
	Recent int // memory.recent (0: homed's default)
}

// newEmbKernel builds and starts a kernel the way homed does (real SQLite, the real tokenizer,
// a real codec), with the dense-embedding dependencies given; it is closed when the test ends.
func newEmbKernel(t testing.TB, o embOptions) embKernel {
	t.Helper()
	tok, lex := sharedAssets(t)
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(o.Dir, "data")
	cfg.Memory.GCInterval.Duration = 0
	if o.Recent > 0 {
		cfg.Memory.Recent = o.Recent
	}
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{Tokenize: tok.Tokens, Expand: lex.Expand, Clock: o.Clock})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(o.Dir, "config", "key"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(cfg, kernel.Deps{
		Store: store, Sealer: security.NewCodec(keys), Tokens: tok.Tokens, Clock: o.Clock, Embedding: o.Deps,
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, MaxRetries: -1})
		},
	})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { // both are safe to close twice (a test may restart on the same data)
		k.Close()
		store.Close()
	})
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return embKernel{Kernel: k, Store: store, Dir: o.Dir}
}

// managerOnly is a model manager over dir with no ONNX Runtime (as when the library is missing).
func managerOnly(t testing.TB, dir string) kernel.EmbeddingDeps {
	t.Helper()
	m, err := embed.NewManager(embed.ManagerOptions{Dir: filepath.Join(dir, "models"), Hubs: []string{"http://127.0.0.1:9"}})
	if err != nil {
		t.Fatal(err)
	}
	return kernel.EmbeddingDeps{Models: m, RuntimeErr: embed.ErrORTNotFound}
}

// serveHTTP serves a kernel's API on a unix socket and returns an HTTP client for it.
func serveHTTP(t testing.TB, k *kernel.Kernel) *client.HTTP {
	t.Helper()
	dir, err := os.MkdirTemp("", "ke")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "run", "k.sock")
	srv := api.New(k.Service(), api.Options{})
	ln, err := srv.ListenUnix(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeUnixListener(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done; os.RemoveAll(dir) })
	c, err := client.Dial(client.Options{Socket: sock, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmbeddingConformance(t *testing.T) {
	withManager := func(t *testing.T) *kernel.Kernel {
		dir := t.TempDir()
		return newEmbKernel(t, embOptions{Dir: dir, Deps: managerOnly(t, dir)}).Kernel
	}
	t.Run("in process", func(t *testing.T) {
		kerneltest.RunEmbedding(t, func(t *testing.T) client.Service { return withManager(t).Service() })
	})
	t.Run("over HTTP", func(t *testing.T) {
		kerneltest.RunEmbedding(t, func(t *testing.T) client.Service { return serveHTTP(t, withManager(t)) })
	})
	t.Run("without a model manager", func(t *testing.T) {
		kerneltest.RunEmbedding(t, func(t *testing.T) client.Service { return newEmbKernel(t, embOptions{}).Kernel.Service() })
	})
}

// TestEmbeddingWithoutRuntime: without ONNX Runtime the kernel is sparse, its status says so
// (and where the library was looked for), and installing or using a model is unavailable with
// that message, while listing works.
func TestEmbeddingWithoutRuntime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	deps := managerOnly(t, dir)
	deps.RuntimeErr = errors.New("ONNX Runtime library not found: looked in /usr/lib/hologram/onnxruntime, build/onnxruntime")
	k := newEmbKernel(t, embOptions{Dir: dir, Deps: deps})
	st, err := k.Service().Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingSparse || !strings.Contains(st.Reason, "looked in /usr/lib/hologram/onnxruntime") {
		t.Fatalf("Embedding = %+v, %v", st, err)
	}
	if _, err := k.Service().EmbeddingModels(ctx); err != nil {
		t.Fatalf("EmbeddingModels without a runtime: %v", err)
	}
	_, err = k.Service().InstallModel(ctx, "bge-small-zh-v1.5", nil)
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "needs ONNX Runtime, which was not found: ONNX Runtime library not found") {
		t.Fatalf("InstallModel without a runtime = %v", err)
	}
	// A model chosen earlier (its setting survives) cannot load: sparse, with the reason.
	if err := k.Store.SetSetting(ctx, "embedding.active", `{"model":"bge-small-zh-v1.5"}`); err != nil {
		t.Fatal(err)
	}
	k.Close()
	k.Store.Close()
	k2 := newEmbKernel(t, embOptions{Dir: dir, Deps: deps})
	if err := k2.SettleEmbedding(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = k2.Service().Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingSparse || st.Model != "bge-small-zh-v1.5" || !strings.Contains(st.Reason, "not installed") {
		t.Fatalf("Embedding with a chosen model that is not installed = %+v, %v", st, err)
	}
	if snap := k2.State().Snapshot(); !containsStr(snap.Pending, kernel.FacilityDense) {
		t.Errorf("the dense facility should stay pending (not ready) when its model cannot load: %+v", snap)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
