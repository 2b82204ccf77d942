package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// DirLock is the exclusive lock a kernel holds on its data directory (flock on DATA/lock). The
// lock file records the holder's pid and socket so a second kernel can name them.
type DirLock struct {
	f *os.File
}

// LockedError is returned by LockDataDir when another kernel holds the lock.
type LockedError struct {
	DataDir string
	PID     int
	Socket  string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another kernel (pid %d) is already running on %s, serving %s", e.PID, e.DataDir, e.Socket)
}

// LockDataDir creates dataDir (0700) and takes its exclusive lock, recording pid and socket.
// It fails with *LockedError when another live process holds it.
func LockDataDir(dataDir, socket string) (*DirLock, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	path := filepath.Join(dataDir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			le := &LockedError{DataDir: dataDir}
			b, _ := os.ReadFile(path)
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "pid="); ok {
					le.PID, _ = strconv.Atoi(v)
				}
				if v, ok := strings.CutPrefix(line, "socket="); ok {
					le.Socket = v
				}
			}
			return nil, le
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(fmt.Sprintf("pid=%d\nsocket=%s\n", os.Getpid(), socket)), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("writing lock file: %w", err)
		}
	}
	return &DirLock{f: f}, nil
}

// Release drops the lock. Safe to call more than once.
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
