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
	"log/slog"
	"os"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("shell", run) }

// run loads the configuration and serves the plugin until the kernel stops it.
func run(ctx context.Context, _ *slog.Logger) error {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	s, err := newShell(cfg, time.Now)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, s.plugin())
}
