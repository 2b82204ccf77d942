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
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("notes", run) }

// run loads the configuration, confines the process to the notes directory and serves the
// plugin until the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	_, dir, err := confine(log, os.Getenv)
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

// confine loads the configuration and confines the process with Landlock: it may write only
// the notes directory (and read the system list); it returns that directory.
func confine(log *slog.Logger, getenv func(string) string) (sandbox.Status, string, error) {
	dir, err := loadConfig(getenv)
	if err != nil {
		return "", "", err
	}
	st, err := sandbox.Apply(log, getenv, sandbox.Permissions{Write: []string{dir}})
	return st, dir, err
}
