package host

import "time"

// breaker counts a plugin's crashes in a sliding window (seed-design.md §3.7, done right).
//
// The window is measured from each crash's own time, never from a "last reload" time, so a
// plugin that was never reloaded is counted like any other. Once tripped it holds: no amount of
// time passing clears it; only reset (the owner re-enabling the plugin) does. It is not safe for
// concurrent use; the plugin's mutex guards it.
type breaker struct {
	window  time.Duration
	max     int         // the max-th crash within window trips
	crashes []time.Time // within window, oldest first
	tripped bool
}

// record notes a crash at now and returns the number of crashes within the window (including
// this one) and whether the breaker is now tripped.
func (b *breaker) record(now time.Time) (int, bool) {
	kept := b.crashes[:0]
	for _, t := range b.crashes {
		if now.Sub(t) < b.window {
			kept = append(kept, t)
		}
	}
	b.crashes = append(kept, now)
	if len(b.crashes) >= b.max {
		b.tripped = true
	}
	return len(b.crashes), b.tripped
}

// reset forgets every crash and closes the breaker.
func (b *breaker) reset() {
	b.crashes = nil
	b.tripped = false
}
