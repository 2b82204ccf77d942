// Package plugmain is the main() every built-in plugin shares: a context that ends at SIGTERM
// or an interrupt, the plugin's logger (JSON lines on stderr, which the kernel keeps under the
// plugin's name), and the exit: a failure is printed as "<plugin>: <error>" on stderr and the
// process exits 1.
//
// The package imports only the standard library and plugins/sdk: it is linked into the
// plugins' binaries.
package plugmain

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/hologramagent/hologram/plugins/sdk"
)

// Main runs a built-in plugin's process: it calls run with a context that ends at SIGTERM or an
// interrupt and a logger at level info on stderr, and exits 1 when run returns an error,
// printed after the plugin's name. run loads the configuration and serves the plugin
// ([sdk.Serve]) until the kernel stops it.
func Main(name string, run func(ctx context.Context, log *slog.Logger) error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := Run(ctx, name, os.Stderr, run)
	stop()
	if err != nil {
		os.Exit(1)
	}
}

// Run is [Main] without the process around it: it calls run with a logger writing to stderr
// and, when run fails, prints "<name>: <error>" there and returns the error.
func Run(ctx context.Context, name string, stderr io.Writer, run func(ctx context.Context, log *slog.Logger) error) error {
	err := run(ctx, sdk.NewLogger(stderr, slog.LevelInfo))
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
	}
	return err
}
