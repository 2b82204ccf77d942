package kernel_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/kerneltest"
	"github.com/hologramagent/hologram/kernel/llm"
)

// newKernel builds a started kernel on a real SQLite file with a real codec and the memory
// features on (the real tokenizer and lexicon, see memhelp_test.go).
func newKernel(t *testing.T) *kernel.Kernel { return newMemKernel(t, memOptions{}).Kernel }

func TestServiceInProcess(t *testing.T) {
	kerneltest.Run(t, func(t *testing.T) client.Service { return newKernel(t).Service() })
}

func TestServiceOverHTTP(t *testing.T) {
	kerneltest.Run(t, func(t *testing.T) client.Service { return serveHTTP(t, newKernel(t)) })
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

// TestRoleServices: every role the kernel hands out on its own answers as the whole Service does.
func TestRoleServices(t *testing.T) {
	k := newKernel(t)
	ctx := context.Background()
	if h, err := k.System().Health(ctx); err != nil || !h.OK {
		t.Fatalf("System().Health = %+v, %v", h, err)
	}
	if err := k.Chat().Cancel(ctx, "no-such-turn"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Chat().Cancel of an unknown turn: %v", err)
	}
	if ss, err := k.Sessions().Sessions(ctx); err != nil || len(ss) == 0 {
		t.Fatalf("Sessions().Sessions = %v, %v (the main session exists)", ss, err)
	}
	if ps, err := k.Providers().Providers(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Providers().Providers = %v, %v", ps, err)
	}
	if ts, err := k.Plugins().Tools(ctx); err != nil || len(ts) == 0 {
		t.Fatalf("Plugins().Tools = %v, %v", ts, err)
	}
	if _, err := k.Memory().Scenes(ctx); err != nil {
		t.Fatalf("Memory().Scenes: %v", err)
	}
	if st, err := k.Models().Embedding(ctx); err != nil || st.Mode != client.EmbeddingSparse {
		t.Fatalf("Models().Embedding = %+v, %v", st, err)
	}
	if as, err := k.Approvals().Approvals(ctx); err != nil || len(as) != 0 {
		t.Fatalf("Approvals().Approvals = %v, %v", as, err)
	}
	if ms, err := k.Completion().Models(ctx); err != nil || len(ms) != 0 {
		t.Fatalf("Completion().Models = %v, %v (no provider)", ms, err)
	}
}

// plainSealer seals nothing (TestNewNeedsTokens stores no secret).
type plainSealer struct{}

func (plainSealer) SealString(_, s string) (string, error) { return s, nil }
func (plainSealer) OpenString(_, s string) (string, error) { return s, nil }

// TestNewNeedsTokens: without the memory's tokenizer a kernel does not start with its memory
// off; it does not start.
func TestNewNeedsTokens(t *testing.T) {
	k := newMemKernel(t, memOptions{})
	_, err := kernel.New(config.Default(func(string) string { return "" }), kernel.Deps{Store: k.Store, Sealer: plainSealer{},
		NewProvider: func(kernel.ProviderSettings) (llm.Provider, error) { return nil, llm.ErrNoProvider }})
	if err == nil || !strings.Contains(err.Error(), "Tokens") {
		t.Fatalf("New without Tokens: %v", err)
	}
}
