package host

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startLocked starts cmd in a process group of its own (Setpgid), with Pdeathsig SIGKILL so that
// the child dies with the host, and then waits for it, all on one goroutine locked to its OS thread. started receives cmd.Start's
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
		// Its own group, so that stop and crash can signal every process the plugin started
		// (signalGroup): a wrapper script's backgrounded server would otherwise outlive it,
		// holding its pipes, and sit in homed's group, where a terminal's Ctrl-C reaches it.
		cmd.SysProcAttr.Setpgid = true
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		wait(cmd.Wait())
	}()
}

// signalGroup sends sig to the plugin's process group (the group's id is the plugin's pid, see
// startLocked). It reaches the descendants that stayed in the group even after the plugin itself
// has been reaped: Linux does not reuse a pid while a process group of that id has members.
// ESRCH (nobody left) is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, sig); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}
