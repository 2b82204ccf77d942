// Command calendar is HologramAgent's calendar plugin, built on plugins/sdk: the owner's events
// and reminders (create, list by range, update, delete, recurrence), iCalendar import and
// export, and reminders delivered to the owner through owner/notify at their time. Reminders
// stop while the kernel is paused; those that fell due meanwhile are delivered on resume,
// marked late. The calendar lives in $XDG_DATA_HOME/hologram/calendar/calendar.json; README.md
// beside this file documents the tools and the environment variables.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // time zones work without the system's tzdata

	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "calendar:", err)
		os.Exit(1)
	}
}

// run serves the plugin until ctx ends or the kernel stops it.
func run(ctx context.Context) error {
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	c, err := newCalendar(cfg, systemClock{}, sdk.NewLogger(os.Stderr, slog.LevelInfo))
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, c.plugin())
}
