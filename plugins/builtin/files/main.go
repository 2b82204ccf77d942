// Command files is HologramAgent's built-in files plugin: it reads, writes, lists and searches
// files inside the roots the owner configures, and nowhere else. The default root is
// $XDG_DATA_HOME/hologram/files; / and the home directory (or a folder holding it) are refused
// as roots. Path traversal and symbolic links leading out of a root are refused (os.Root does
// the resolving), and so are device files, pipes and sockets, and reads larger than the
// configured limit. Contents over 64 KiB travel through the plugin's shared memory.
//
// Its configuration file is <config dir>/plugins/files.toml (README.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("files", run) }

// run loads the configuration and serves the plugin until the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	cfg, _, err := confine(log, os.Getenv)
	if err != nil {
		return err
	}
	f, err := newFiles(cfg)
	if err != nil {
		return err
	}
	defer f.Close()
	return sdk.Serve(ctx, f.plugin())
}

// confine reads the configuration and confines the process with Landlock to its roots:
// writable, or only readable with read_only. Nothing else of the owner's files can be read.
func confine(log *slog.Logger, getenv func(string) string) (Config, sandbox.Status, error) {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return Config{}, "", err
	}
	perms := sandbox.Permissions{Write: cfg.Roots}
	if cfg.ReadOnly {
		perms = sandbox.Permissions{Read: cfg.Roots}
	}
	st, err := sandbox.Apply(log, getenv, perms)
	return cfg, st, err
}
