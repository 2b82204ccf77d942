package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"syscall"
)

// peerCred returns the uid and the pid of the process at the other end of c (SO_PEERCRED, as
// of its connect).
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, 0, fmt.Errorf("raw conn: %w", err)
	}
	var (
		cred    *syscall.Ucred
		credErr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, 0, fmt.Errorf("raw control: %w", err)
	}
	if credErr != nil {
		return 0, 0, fmt.Errorf("getsockopt SO_PEERCRED: %w", credErr)
	}
	return int(cred.Uid), int(cred.Pid), nil
}

// fileOwner returns the uid owning a file.
func fileOwner(fi fs.FileInfo) (int, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("file owner unknown")
	}
	return int(st.Uid), nil
}
