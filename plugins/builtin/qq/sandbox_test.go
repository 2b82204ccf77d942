package main

import (
	"log/slog"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestLandlock: the qq plugin, confined as its main confines it, can read neither the key file
// nor write anywhere.
func TestLandlock(t *testing.T) {
	t.Setenv("HOLOGRAM_QQ_URL", "ws://127.0.0.1:1")
	sandboxtest.Check(t, func(log *slog.Logger, getenv func(string) string) (sandbox.Status, string, error) {
		_, st, err := confine(log, getenv)
		return st, "", err
	})
}
