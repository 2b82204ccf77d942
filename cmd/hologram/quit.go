package main

import (
	"log/slog"
	"sync"
	"time"
)

// quitGrace is how long the UI loop may take to end after a SIGTERM/SIGINT asked it to. Fyne
// 2.7's GLFW driver can stall there for good: once its loop stopped, the main goroutine waits
// for a lifecycle event whose callback another goroutine queued on the main-thread queue the
// stopped loop no longer drains. A clean shutdown takes well under a second; the grace leaves
// room for a loaded machine and still ends before a service manager's own stop timeout.
const quitGrace = 5 * time.Second

// shutdowner runs the app's shutdown (tray shortcut, instance socket, kernel) at most once: from
// run after the UI loop returned, or from the quit watchdog when the loop stalled.
type shutdowner struct {
	once sync.Once
	fn   func()
}

func (s *shutdowner) shutdown() { s.once.Do(s.fn) }

// watchQuit waits for quitting (a signal asked the UI to end) and then for runDone (the UI loop
// returned). If the loop has not returned within grace it shuts down and calls exit, so a stalled
// toolkit cannot keep the process, its kernel and its socket alive. It returns when runDone is
// closed or exit was called.
func watchQuit(quitting, runDone <-chan struct{}, grace time.Duration, s *shutdowner, log *slog.Logger, exit func(int)) {
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
		s.shutdown()
		exit(0)
	}
}
