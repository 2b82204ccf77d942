// Package clocktest is the fake [clock.Clock] of the built-in plugins' tests: time moves only
// when the test says so, and a test can wait until a scheduler waits on the clock. Import it
// from tests only.
package clocktest

import (
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
)

// Fake is a [clock.Clock] a test moves by hand: waits fire when [Fake.Advance] reaches them.
// Safe for concurrent use. Its Now method value serves plugins that take a func() time.Time.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waits   map[*wait]bool
	changed chan struct{} // closed and replaced whenever waits change
}

var _ clock.Clock = (*Fake)(nil)

// wait is one pending [Fake.At].
type wait struct {
	at time.Time
	ch chan time.Time
}

// New returns a fake clock reading now.
func New(now time.Time) *Fake {
	return &Fake{now: now, waits: map[*wait]bool{}, changed: make(chan struct{})}
}

// Now implements [clock.Clock].
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At implements [clock.Clock]: a time not after Now fires at once.
func (c *Fake) At(t time.Time) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &wait{at: t, ch: make(chan time.Time, 1)}
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

// signalLocked wakes WaitForWaiter; c.mu is held.
func (c *Fake) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves the clock by d and fires the waits it reaches.
func (c *Fake) Advance(d time.Duration) {
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
// most 10 s of real time; then it fails t.
func (c *Fake) WaitForWaiter(t testing.TB) {
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
