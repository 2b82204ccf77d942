// Command web is HologramAgent's web plugin (a native plugin on plugins/sdk): web_fetch reads a
// page's readable text over HTTP(S); web_browse renders a page in a headless chromium through
// the DevTools protocol, for pages that need JavaScript, and can take a screenshot. Loopback,
// link-local, private-range and unspecified targets are refused unless allow-listed, checked on
// the resolved address at connect time; the kernel's own API is never reachable. It is
// configured through the environment (README.md).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := sdk.NewLogger(os.Stderr, slog.LevelInfo)
	cfg, err := LoadConfig(os.Getenv, exec.LookPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "web: configuration:", err)
		os.Exit(1)
	}
	if cfg.Chromium == "" {
		log.Warn("no chromium found: web_browse will fail until it is installed (apt-get install chromium)")
	}
	p := newWeb(cfg, log).plugin()
	p.Logger = log
	if err := sdk.Serve(ctx, p); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}
