package main

import (
	"log/slog"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestLandlock: the shell plugin, confined as its main confines it (the default root), cannot
// read the key file or write outside its root, nor can the programs it runs; they still work in
// the root, and ptrace and unshare fail with EPERM.
func TestLandlock(t *testing.T) {
	sandboxtest.CheckCommands(t, func(log *slog.Logger, getenv func(string) string) (sandbox.Status, string, error) {
		s, st, err := confine(log, getenv)
		if err != nil {
			return "", "", err
		}
		return st, s.roots[0], nil
	})
}
