package kernel_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/api"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/kerneltest"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// newKernel builds a started kernel on a real SQLite file with a real codec.
func newKernel(t *testing.T) *kernel.Kernel {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{})
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
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, Proxy: ps.Proxy, MaxRetries: -1})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestServiceInProcess(t *testing.T) {
	kerneltest.Run(t, func(t *testing.T) client.Service { return newKernel(t) })
}

func TestServiceOverHTTP(t *testing.T) {
	kerneltest.Run(t, func(t *testing.T) client.Service {
		k := newKernel(t)
		dir, err := os.MkdirTemp("", "ks")
		if err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(dir, "run", "k.sock")
		srv := api.New(k, api.Options{})
		ln, err := srv.ListenUnix(context.Background(), sock)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.ServeUnixListener(ctx, ln) }()
		t.Cleanup(func() { cancel(); <-done; os.RemoveAll(dir) })
		c, err := client.Dial(client.Options{Socket: sock})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

func TestLockDataDir(t *testing.T) {
	dir := t.TempDir()
	l, err := kernel.LockDataDir(dir, "/run/x.sock")
	if err != nil {
		t.Fatal(err)
	}
	_, err = kernel.LockDataDir(dir, "/run/y.sock")
	var le *kernel.LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Socket != "/run/x.sock" {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := kernel.LockDataDir(dir, "/run/y.sock")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
	l2.Release()
}
