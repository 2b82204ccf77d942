//go:build nokernel

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
)

// startKernel, in the client variant, attaches to the kernel running on cfg.DataDir (its lock
// file names the socket) or on the default socket; there is no kernel to start.
func startKernel(ctx context.Context, cfg config.Config, _ func(string) string, _, _ io.Writer, onError func(error)) (client.Service, func(), error) {
	socket := lockedSocket(cfg.DataDir)
	if socket == "" {
		socket = cfg.Socket
	}
	c, err := attachSocket(ctx, socket, onError)
	if err != nil {
		return nil, nil, fmt.Errorf("this is the client build of hologram (no kernel inside) and no kernel answers on %s: "+
			"start homed, or give --remote URL --token-file F: %w", socket, err)
	}
	return c, func() { c.Close() }, nil
}

// lockedSocket reads the socket a running kernel wrote into DATA/lock ("" when none).
func lockedSocket(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, "lock"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "socket="); ok {
			return v
		}
	}
	return ""
}

func productVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
