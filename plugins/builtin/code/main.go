// Command code is HologramAgent's built-in code plugin: code_run runs Python, JavaScript, bash
// or Go in a sandbox that cannot reach the owner — bubblewrap when installed (every namespace
// unshared, only /usr, a few /etc files, three devices, its own /proc, a private /tmp and the
// session's workspace), then, in a re-exec of this binary (code-sandbox-exec), Landlock,
// seccomp (no socket() without the network) and rlimits, and a pids cgroup where one is
// writable. A timeout kills everything the run started. Each session has a workspace of its
// own (code_files, code_reset); every run is recorded with its code and result.
//
// The plugin itself is not confined by the plugin-wide Landlock: it starts bubblewrap, which
// needs namespaces and mounts the built-in plugins' seccomp filter refuses.
//
// Its configuration file is <config dir>/plugins/code.toml (README.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugmain"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == execArg {
		os.Exit(sandboxExec(os.Args[2:]))
	}
	plugmain.Main("code", run)
}

// run loads the configuration, finds the sandbox's layers and serves the plugin until the
// kernel stops it.
func run(ctx context.Context, log *slog.Logger) error {
	c, err := newCode(os.Getenv)
	if err != nil {
		return err
	}
	return sdk.Serve(ctx, c.plugin())
}

// newCode loads the configuration and finds the sandbox's layers.
func newCode(getenv func(string) string) (*code, error) {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return nil, err
	}
	b, err := newBox(cfg)
	if err != nil {
		return nil, err
	}
	return &code{box: b, rec: newRecorder(cfg.data)}, nil
}
