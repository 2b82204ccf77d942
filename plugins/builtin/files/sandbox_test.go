package main

import (
	"log/slog"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestLandlock: the files plugin, confined as its main confines it (the default root), cannot
// read the key file or write outside its roots, and works within them.
func TestLandlock(t *testing.T) {
	sandboxtest.Check(t, func(log *slog.Logger, getenv func(string) string) (sandbox.Status, string, error) {
		cfg, st, err := confine(log, getenv)
		if err != nil {
			return "", "", err
		}
		return st, cfg.Roots[0], nil
	})
}
