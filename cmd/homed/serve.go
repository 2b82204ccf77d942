package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/kernel/config"
)

// serve runs the kernel (cmd/internal/daemon, the composition root homed shares with the
// desktop app) and serves the API until ctx is done.
func serve(ctx context.Context, cfg config.Config, env func(string) string, stdout, stderr io.Writer) error {
	d, err := daemon.Start(ctx, "homed", cfg, env, stdout, stderr)
	if err != nil {
		return err
	}
	var apiErr error
	select {
	case <-ctx.Done():
		d.Log.Info("stopping: finishing in-flight turns", "grace", daemon.DrainGrace)
	case apiErr = <-d.Err():
	}
	if err := d.Stop(); err != nil {
		return err
	}
	if apiErr != nil {
		return fmt.Errorf("api: %w", apiErr)
	}
	d.Log.Info("homed stopped")
	return nil
}
