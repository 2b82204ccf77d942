//go:build !nokernel

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
)

// startKernel starts the kernel in-process on cfg.DataDir, serving its socket for waiter and
// other clients. When another kernel holds the data dir, it attaches to that one instead.
func startKernel(ctx context.Context, cfg config.Config, env func(string) string, stdout, stderr io.Writer, onError func(error)) (client.Service, func(), error) {
	d, err := daemon.Start(ctx, "hologram", cfg, env, stdout, stderr)
	if errors.Is(err, daemon.ErrRunning) {
		socket := cfg.Socket
		var le *kernel.LockedError
		if errors.As(err, &le) && le.Socket != "" {
			socket = le.Socket
		}
		slog.Info("a kernel already runs on this data dir: attaching to it", "data", cfg.DataDir, "socket", socket)
		c, aerr := attachSocket(ctx, socket, onError)
		if aerr != nil {
			return nil, nil, fmt.Errorf("%w, but its socket does not answer: %w", err, aerr)
		}
		return c, func() { c.Close() }, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return d.Kernel.Service(), func() {
		if err := d.Stop(); err != nil {
			slog.Warn("stopping the kernel", "err", err)
		}
	}, nil
}

func productVersion() string {
	if version != "" {
		return version
	}
	return daemon.Version()
}
