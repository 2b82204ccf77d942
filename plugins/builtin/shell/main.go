// Command shell is HologramAgent's built-in shell plugin: it runs the commands the owner's
// allow-list permits (an argv, or a shell line when an entry says so), each only after the
// owner approved it, with a timeout, an output cap and a working directory inside a configured
// root. The allow-list is empty by default, so every command is refused with a message saying
// how to allow it; the kernel does not start the plugin until the owner enables it.
//
// Its configuration file is <config dir>/plugins/shell.toml (README.md).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("shell", run) }

// run loads the configuration, confines the process and serves the plugin until the kernel
// stops it.
func run(ctx context.Context, log *slog.Logger) error {
	s, _, err := confine(log, os.Getenv)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, s.plugin())
}

// confine loads the configuration, empties the plugin's private temporary directory (the
// commands' TMPDIR) and confines the process with Landlock and seccomp; the commands it runs
// inherit both. They may read and execute the system's programs and libraries ([sandbox.Commands])
// and the absolute programs of the allow-list (and git's own settings, ~/.gitconfig and
// ~/.config/git, read only), write only the roots and the temporary
// directory, and use the network (an allowed curl or git fetch needs it). The owner's key file,
// the kernel's database and the rest of $HOME stay out of reach.
func confine(log *slog.Logger, getenv func(string) string) (*shell, sandbox.Status, error) {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return nil, "", err
	}
	s, err := newShell(cfg, time.Now)
	if err != nil {
		return nil, "", err
	}
	if err := os.RemoveAll(cfg.tmp); err != nil {
		return nil, "", fmt.Errorf("emptying the temporary directory: %w", err)
	}
	if err := os.MkdirAll(cfg.tmp, 0o700); err != nil {
		return nil, "", fmt.Errorf("creating the temporary directory: %w", err)
	}
	s.tmp = cfg.tmp
	own := sandbox.Permissions{Write: append(slices.Clone(s.roots), cfg.tmp), Network: true}
	if filepath.IsAbs(cfg.home) { // git dies on a config file it may not read
		own.Read = append(own.Read, filepath.Join(cfg.home, ".gitconfig"), filepath.Join(cfg.home, ".config", "git"))
	}
	for _, a := range cfg.Allow {
		if filepath.IsAbs(a.Program) {
			own.Read = append(own.Read, a.Program)
		}
	}
	st, err := sandbox.Apply(log, getenv, sandbox.Commands.With(own))
	return s, st, err
}
