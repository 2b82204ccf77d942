package main

import (
	"log/slog"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestLandlock: the rss plugin, confined as its main confines it, cannot read the key file
// or write outside its directory, and works within it.
func TestLandlock(t *testing.T) {
	sandboxtest.Check(t, func(log *slog.Logger, getenv func(string) string) (sandbox.Status, string, error) {
		_, st, dir, err := confine(log, getenv)
		return st, dir, err
	})
}
