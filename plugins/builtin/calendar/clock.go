package main

import "time"

// Clock tells the time and wakes the reminder scheduler. The plugin uses the system clock;
// tests inject a fake one, so no test sleeps for a schedule.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// At returns a channel that receives once the clock reaches t, and a func that releases
	// the wait (call it when the wait is abandoned).
	At(t time.Time) (<-chan time.Time, func())
}

// systemClock is the real clock.
type systemClock struct{}

// Now implements Clock.
func (systemClock) Now() time.Time { return time.Now() }

// At implements Clock.
func (systemClock) At(t time.Time) (<-chan time.Time, func()) {
	tm := time.NewTimer(time.Until(t))
	return tm.C, func() { tm.Stop() }
}
