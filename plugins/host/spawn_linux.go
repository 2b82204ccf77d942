package host

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startLocked starts cmd with Pdeathsig SIGKILL so that the child dies with the host, and
// then waits for it, all on one goroutine locked to its OS thread. started receives cmd.Start's
// result; wait is called with cmd.Wait's result once the child has exited.
//
// Pdeathsig is per thread, not per process: Linux sends the signal when the thread that forked
// the child exits, and the Go runtime may retire an idle thread at any time. So the goroutine
// calls runtime.LockOSThread before forking and stays locked, blocked in cmd.Wait, for the
// child's whole life; it never unlocks, so the runtime destroys the thread when the goroutine
// returns, after the child has been reaped. One OS thread per running plugin is the price.
func startLocked(cmd *exec.Cmd, started chan<- error, wait func(error)) {
	go func() {
		runtime.LockOSThread()
		// Deliberately no UnlockOSThread: see above.
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		wait(cmd.Wait())
	}()
}
