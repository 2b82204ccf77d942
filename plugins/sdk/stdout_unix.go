//go:build unix

package sdk

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// protectStdout reserves the process's stdout for the protocol: it returns a private duplicate
// of fd 1 for the frames, then points fd 1 at stderr (dup3) and os.Stdout at os.Stderr. From
// then on whatever the plugin (or a C library) prints to stdout lands in its log, never in the
// protocol stream.
func protectStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(unix.Stdout), unix.F_DUPFD_CLOEXEC, 10)
	if err != nil {
		return nil, fmt.Errorf("duplicating stdout: %w", err)
	}
	if err := unix.Dup3(unix.Stderr, unix.Stdout, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pointing stdout at stderr: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "protocol-stdout"), nil
}
