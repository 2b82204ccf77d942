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
	"path/filepath"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() { plugmain.Main("web", run) }

// run loads the configuration and serves the plugin until the kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	cfg, tmp, _, err := confine(log, os.Getenv)
	if err != nil {
		return err
	}
	if cfg.Chromium == "" {
		log.Warn("no chromium found: web_browse will fail until it is installed (apt-get install chromium)")
	}
	w := newWeb(cfg, log)
	w.browser.tmpDir = tmp
	p := w.plugin()
	p.Logger = log
	return sdk.Serve(ctx, p)
}

// confine reads the configuration, empties the plugin's private temporary directory
// (<data dir>/web/tmp, or $HOLOGRAM_WEB_DIR/tmp: the browser profiles and chromium's TMPDIR) and
// confines the process with Landlock and seccomp; chromium inherits both. The network stays
// open (the guard filters addresses); on disk the plugin may write only that directory, and
// read and execute what chromium needs of the system ([sandbox.Commands] and chromium's own
// directory) — never the owner's home or the kernel's files. It returns the configuration, the
// temporary directory and the status.
func confine(log *slog.Logger, getenv func(string) string) (Config, string, sandbox.Status, error) {
	cfg, err := LoadConfig(getenv, exec.LookPath)
	if err != nil {
		return Config{}, "", "", fmt.Errorf("configuration: %w", err)
	}
	dir, err := plugconf.StateDir(getenv, "HOLOGRAM_WEB_DIR", "web")
	if err != nil {
		return Config{}, "", "", fmt.Errorf("configuration: %w", err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return Config{}, "", "", fmt.Errorf("emptying the temporary directory: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return Config{}, "", "", fmt.Errorf("creating the temporary directory: %w", err)
	}
	// chromium and its helpers write their temporary files, caches and settings there.
	os.Setenv("TMPDIR", tmp)
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "config"))
	perms := sandbox.Permissions{Write: []string{tmp}, Network: true}
	if cfg.Chromium != "" {
		// chromium reads its own processes' /proc entries (fds, status, cpu info): /proc is
		// readable, but Landlock keeps other processes' memory and environment out (ptrace
		// access to a process outside the domain is refused, seccomp refuses ptrace itself).
		perms = sandbox.Commands.With(sandbox.Permissions{Read: []string{"/proc"}}).With(perms)
		if real, err := filepath.EvalSymlinks(cfg.Chromium); err == nil {
			perms.Exec = append(perms.Exec, filepath.Dir(real))
		}
	}
	st, err := sandbox.Apply(log, getenv, perms)
	return cfg, tmp, st, err
}
