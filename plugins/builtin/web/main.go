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

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("web", run) }

// run loads the configuration and serves the plugin until the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	cfg, err := LoadConfig(os.Getenv, exec.LookPath)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if cfg.Chromium == "" {
		log.Warn("no chromium found: web_browse will fail until it is installed (apt-get install chromium)")
	}
	p := newWeb(cfg, log).plugin()
	p.Logger = log
	return sdk.Serve(ctx, p)
}
