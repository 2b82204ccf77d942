//go:build !linux

package host

import (
	"os/exec"
	"syscall"
)

// startLocked starts cmd and waits for it on one goroutine. Only Linux has Pdeathsig; elsewhere
// an orphaned plugin sees its stdin close when the host dies and is expected to exit.
func startLocked(cmd *exec.Cmd, started chan<- error, wait func(error)) {
	go func() {
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		wait(cmd.Wait())
	}()
}

// signalGroup is a no-op where plugins do not get their own process group; the caller also
// signals the plugin itself.
func signalGroup(int, syscall.Signal) error { return nil }
