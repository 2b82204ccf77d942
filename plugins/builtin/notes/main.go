// Command notes is HologramAgent's built-in notes plugin: Markdown notes under
// $XDG_DATA_HOME/hologram/notes (one <id>.md file each), created, read, edited, deleted,
// listed and searched by text. Every create and edit is committed to memory, owner-private on
// channel plugin:notes, so the agent's recall finds the note later.
//
// Its configuration file is <config dir>/plugins/notes.toml (README.md).
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("notes", run) }

// run loads the configuration and serves the plugin until the kernel stops it.
func run(ctx context.Context, _ *slog.Logger) error {
	dir, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	n, err := newNotes(dir, time.Now)
	if err != nil {
		return err
	}
	defer n.Close()
	return sdk.Serve(ctx, n.plugin())
}
