package main

import (
	"log/slog"
	"time"
)

// quitGrace is how long the UI loop may take to end after a SIGTERM/SIGINT asked it to. Fyne
// 2.7's GLFW driver can stall there for good: once its loop stopped, the main goroutine waits
// for a lifecycle event whose callback another goroutine queued on the main-thread queue the
// stopped loop no longer drains. A clean shutdown takes well under a second; the grace leaves
// room for a loaded machine and still ends before a service manager's own stop timeout.
const quitGrace = 5 * time.Second

// watchQuit waits for quitting (a signal asked the UI to end) and then for runDone (the UI loop
// returned). If the loop has not returned within grace it calls shutdown (the app's, run at most
// once: run calls it too after the loop) and exit, so a stalled toolkit cannot keep the process,
// its kernel and its socket alive. It returns when runDone is closed or exit was called.
func watchQuit(quitting, runDone <-chan struct{}, grace time.Duration, shutdown func(), log *slog.Logger, exit func(int)) {
	select {
	case <-runDone:
		return
	case <-quitting:
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-runDone:
	case <-t.C:
		log.Warn("the window toolkit did not end its loop after the quit signal; stopping without it", "grace", grace)
		shutdown()
		exit(0)
	}
}
