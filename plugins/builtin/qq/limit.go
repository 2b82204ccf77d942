package main

import (
	"sync"
	"time"
)

// Limiter passes at most n messages per partner in any window of length per (a sliding
// window). Time comes from now, so tests never sleep. Safe for concurrent use.
type Limiter struct {
	n   int
	per time.Duration
	now func() time.Time

	mu   sync.Mutex
	seen map[string][]time.Time // per partner, the times passed within the window, oldest first
}

// NewLimiter returns a limiter of n per per.
func NewLimiter(n int, per time.Duration, now func() time.Time) *Limiter {
	return &Limiter{n: n, per: per, now: now, seen: map[string][]time.Time{}}
}

// Allow reports whether a message of partner passes now, and counts it when it does.
func (l *Limiter) Allow(partner string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	cut := now.Add(-l.per)
	ts := l.seen[partner]
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	ts = ts[i:]
	if len(ts) >= l.n {
		l.seen[partner] = ts
		return false
	}
	l.seen[partner] = append(ts, now)
	if len(l.seen) > 4096 {
		l.prune(cut)
	}
	return true
}

// prune forgets partners with nothing in the window.
func (l *Limiter) prune(cut time.Time) {
	for p, ts := range l.seen {
		if len(ts) == 0 || !ts[len(ts)-1].After(cut) {
			delete(l.seen, p)
		}
	}
}
