// Command rss is HologramAgent's feed plugin, built on plugins/sdk: the owner subscribes to
// RSS, Atom and JSON feeds (parsed with github.com/mmcdole/gofeed); the plugin fetches them on
// a schedule (per-feed interval, ETag and Last-Modified, backoff on errors), skips items it has
// seen (by GUID, else link), summarises new ones with the owner's model (llm/complete) or, with
// no model configured, keeps an excerpt, and stores them in the owner's private memory. Fetching
// stops while the kernel is paused. Loopback, private and link-local addresses are refused
// unless allow-listed. README.md beside this file documents the tools and the environment.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("rss", run) }

// run serves the plugin until ctx ends or the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	cfg, _, _, err := confine(log, os.Getenv)
	if err != nil {
		return err
	}
	r, err := newRSS(cfg, clock.System{}, log)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, r.plugin())
}

// confine reads the configuration and confines the process with Landlock: it may write only
// its feeds directory (the network stays open: it fetches feeds), and read the system list (TLS roots, resolver, time zones). It returns
// the configuration and that directory.
func confine(log *slog.Logger, getenv func(string) string) (Config, sandbox.Status, string, error) {
	cfg, err := ConfigFromEnv(getenv)
	if err != nil {
		return Config{}, "", "", err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return Config{}, "", "", fmt.Errorf("rss directory: %w", err)
	}
	st, err := sandbox.Apply(log, getenv, sandbox.Permissions{Write: []string{cfg.Dir}, Network: true})
	return cfg, st, cfg.Dir, err
}
