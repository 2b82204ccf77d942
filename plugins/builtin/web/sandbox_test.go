package main

import (
	"log/slog"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestLandlock: the web plugin, confined as its main confines it, cannot read the key file or
// write outside its temporary directory, nor can the programs it runs (chromium); they still
// work in that directory, and ptrace and unshare fail with EPERM.
func TestLandlock(t *testing.T) {
	sandboxtest.CheckCommands(t, func(log *slog.Logger, getenv func(string) string) (sandbox.Status, string, error) {
		_, tmp, st, err := confine(log, func(k string) string {
			if k == "HOLOGRAM_WEB_CHROMIUM" {
				return "/bin/sh" // a program to run, so the programs' permissions apply
			}
			return getenv(k)
		})
		return st, tmp, err
	})
}
