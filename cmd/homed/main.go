// Command homed runs the HologramAgent kernel headless: the agent loop, memory and providers,
// served over the HTTP API on a unix socket and optionally on TCP (token + TLS).
//
//	homed [--data DIR] [--socket PATH] [--listen HOST:PORT] [--token-file F]
//	      [--tls-cert F --tls-key F] [--key-file F] [--insecure] [--version]
//
// SIGTERM or SIGINT lets in-flight turns finish (up to 10 s, then cancels them), closes the store
// and exits 0. Under a service manager (systemd's Type=notify: $NOTIFY_SOCKET) homed reports
// READY=1 once the API serves and STOPPING=1 when it begins to stop.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/hologramagent/hologram/kernel/config"
)

// softMemoryLimit is the Go heap's soft limit unless GOMEMLIMIT sets one: past it the garbage
// collector runs sooner instead of letting the heap double. A turn carrying a 10 MiB tool result
// left ≈ 130 MB of garbage at its peak and took homed's VmHWM to 314–323 MB; with the limit,
// 272 MB (benchmarks/limits, docs in benchmarks/reports/limits.md). The limit counts Go memory
// only (jieba and SQLite allocate in C), and homed's live Go heap stays well under it; when it
// does not, the runtime caps the collector's share of CPU rather than thrash.
const softMemoryLimit = 100 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Only homed itself talks to the service manager: plugins and other children do not inherit
	// the socket (sd_notify's unset_environment).
	notifySocket := os.Getenv("NOTIFY_SOCKET")
	os.Unsetenv("NOTIFY_SOCKET")
	env := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return notifySocket
		}
		return os.Getenv(k)
	}
	tuneGC(env)
	os.Exit(run(ctx, os.Args[1:], env, os.Stdout, os.Stderr))
}

// run is homed's whole life; it returns the exit code.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	cfg, rest, err := config.Load("homed", args, env)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, strings.TrimSpace(strings.TrimPrefix(err.Error(), flag.ErrHelp.Error())))
		fmt.Fprintln(stdout, "\nCommands:\n  version\n    \tprint the version\n\nBenchmarks are a separate program: hologram-bench.")
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "homed: %v\n", err)
		return 2
	}
	if cfg.Version {
		fmt.Fprintf(stdout, "homed %s\n", daemon.Version())
		return 0
	}
	if len(rest) > 0 {
		switch rest[0] {
		case "version":
			fmt.Fprintf(stdout, "homed %s\n", daemon.Version())
			return 0
		}
		fmt.Fprintf(stderr, "homed: unknown command %q (commands: version; benchmarks are hologram-bench)\n", rest[0])
		return 2
	}
	n, err := newNotifier(env("NOTIFY_SOCKET"))
	if err != nil {
		fmt.Fprintf(stderr, "homed: %v\n", err)
		return 2
	}
	if err := serve(daemon.WithNotify(ctx, n.notify), cfg, env, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "homed: %v\n", err)
		return 1
	}
	return 0
}
