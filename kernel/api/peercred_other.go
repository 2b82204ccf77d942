//go:build !linux

package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
)

// peerCred is only implemented on Linux; elsewhere every unix connection is refused.
func peerCred(*net.UnixConn) (int, int, error) {
	return 0, 0, fmt.Errorf("peer credentials on this system: %w", errors.ErrUnsupported)
}

// fileOwner is only implemented on Linux; elsewhere ServeUnix refuses to start.
func fileOwner(fs.FileInfo) (int, error) {
	return 0, fmt.Errorf("file owner on this system: %w", errors.ErrUnsupported)
}
