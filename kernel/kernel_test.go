package kernel_test

import (
	"errors"
	"os"
	"testing"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
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
