//go:build !nokernel

package main

import (
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// Fyne's test driver runs fyne.Do at once on the calling goroutine, so a view model's
// background goroutine would update widgets while the test reads them (a data race). A queued
// app queues them instead, and the test's helpers run the queue on the test's goroutine: every
// widget is then touched by one goroutine, as with a real driver's event loop.

type uiQueue struct {
	mu sync.Mutex
	q  []func()
}

func (u *uiQueue) do(fn func()) {
	u.mu.Lock()
	u.q = append(u.q, fn)
	u.mu.Unlock()
}

// drain runs what is queued (and what that queues); a nil queue holds nothing.
func (u *uiQueue) drain() {
	if u == nil {
		return
	}
	for {
		u.mu.Lock()
		q := u.q
		u.q = nil
		u.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, fn := range q {
			fn()
		}
	}
}

type queuedApp struct {
	fyne.App
	u *uiQueue
}

type queuedDriver struct {
	fyne.Driver
	u *uiQueue
}

func (d queuedDriver) DoFromGoroutine(fn func(), wait bool) {
	if !wait {
		d.u.do(fn)
		return
	}
	done := make(chan struct{})
	d.u.do(func() { fn(); close(done) })
	<-done
}

func (qa *queuedApp) Driver() fyne.Driver { return queuedDriver{Driver: qa.App.Driver(), u: qa.u} }

// testUI is the queue of the running test's queued app (nil when it uses the plain test app).
var testUI *uiQueue

// newQueuedApp is a fresh test app whose fyne.Do calls wait for the test's helpers to run them.
func newQueuedApp(t *testing.T) *queuedApp {
	qa := &queuedApp{App: test.NewTempApp(t), u: &uiQueue{}}
	fyne.SetCurrentApp(qa)
	testUI = qa.u
	t.Cleanup(func() { qa.u.drain(); testUI = nil })
	return qa
}
