package main

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock tests move by hand: waits fire when Advance reaches them.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waits   map[*fakeWait]bool
	changed chan struct{} // closed and replaced whenever waits change
}

type fakeWait struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, waits: map[*fakeWait]bool{}, changed: make(chan struct{})}
}

// Now implements Clock.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At implements Clock.
func (c *fakeClock) At(t time.Time) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &fakeWait{at: t, ch: make(chan time.Time, 1)}
	if !t.After(c.now) {
		w.ch <- c.now
		return w.ch, func() {}
	}
	c.waits[w] = true
	c.signalLocked()
	return w.ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.waits[w] {
			delete(c.waits, w)
			c.signalLocked()
		}
	}
}

func (c *fakeClock) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves the clock by d and fires the waits it reaches.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for w := range c.waits {
		if !w.at.After(c.now) {
			w.ch <- c.now
			delete(c.waits, w)
		}
	}
	c.signalLocked()
}

// WaitForWaiter blocks until some goroutine waits on the clock (the scheduler is idle), for at
// most 10 s of real time.
func (c *fakeClock) WaitForWaiter(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		n, ch := len(c.waits), c.changed
		c.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("nothing waits on the clock after 10 s")
		}
	}
}
