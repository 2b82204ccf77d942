// Package clock is the time source of the built-in plugins that act on a schedule (calendar
// reminders, feed fetching): a [Clock] the plugin reads and waits on, the [System] clock it
// runs with, and [Loop], the schedule loop that wakes at the time its tick asks for or at a
// [Wake] poke. Tests inject the fake of plugins/builtin/internal/clock/clocktest, so no test
// sleeps for a schedule.
//
// The package imports only the standard library: it is linked into the plugins' binaries.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and wakes a scheduler. Implementations are safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// At returns a channel that receives once the clock reaches t, and a func that releases
	// the wait (call it when the wait is abandoned).
	At(t time.Time) (<-chan time.Time, func())
}

// System is the real clock.
type System struct{}

var _ Clock = System{}

// Now implements [Clock].
func (System) Now() time.Time { return time.Now() }

// At implements [Clock].
func (System) At(t time.Time) (<-chan time.Time, func()) {
	tm := time.NewTimer(time.Until(t))
	return tm.C, func() { tm.Stop() }
}

// Wake is a schedule loop's doorbell: [Wake.Poke] makes [Loop] run its tick again at once. Make
// it with [NewWake]; it is safe for concurrent use.
type Wake chan struct{}

// NewWake returns a doorbell that holds one pending poke.
func NewWake() Wake { return make(Wake, 1) }

// Poke rings the doorbell; a poke while one is pending merges with it.
func (w Wake) Poke() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// Loop runs tick until ctx ends: after each call it waits on c until the time tick returned
// (the zero time: no time, only a poke), or until wake is poked, whichever comes first.
func Loop(ctx context.Context, c Clock, wake Wake, tick func(context.Context) time.Time) {
	for {
		next := tick(ctx)
		var at <-chan time.Time
		release := func() {}
		if !next.IsZero() {
			at, release = c.At(next)
		}
		select {
		case <-ctx.Done():
			release()
			return
		case <-at:
		case <-wake:
		}
		release()
	}
}
