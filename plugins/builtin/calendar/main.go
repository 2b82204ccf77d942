// Command calendar is HologramAgent's calendar plugin, built on plugins/sdk: the owner's events
// and reminders (create, list by range, update, delete, recurrence), iCalendar import and
// export, and reminders delivered to the owner through owner/notify at their time. Reminders
// stop while the kernel is paused; those that fell due meanwhile are delivered on resume,
// marked late. The calendar lives in <the kernel's data dir>/calendar/calendar.json; README.md
// beside this file documents the tools and the environment variables.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	_ "time/tzdata" // time zones work without the system's tzdata

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("calendar", run) }

// run serves the plugin until ctx ends or the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	cfg, _, _, err := confine(log, os.Getenv)
	if err != nil {
		return err
	}
	c, err := newCalendar(cfg, clock.System{}, log)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, c.plugin())
}

// confine reads the configuration and confines the process with Landlock: it may write only
// its calendar directory, and read the system list (TLS roots, resolver, time zones). It returns
// the configuration and that directory.
func confine(log *slog.Logger, getenv func(string) string) (Config, sandbox.Status, string, error) {
	cfg, err := ConfigFromEnv(getenv)
	if err != nil {
		return Config{}, "", "", err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return Config{}, "", "", fmt.Errorf("calendar directory: %w", err)
	}
	st, err := sandbox.Apply(log, getenv, sandbox.Permissions{Write: []string{cfg.Dir}})
	return cfg, st, cfg.Dir, err
}
