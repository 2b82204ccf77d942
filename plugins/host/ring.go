package host

import "sync"

// ring keeps the last lines a plugin wrote to stderr. It is safe for concurrent use.
type ring struct {
	mu    sync.Mutex
	lines []LogLine // circular once full
	next  int       // where the next line goes once full
	size  int
}

// newRing returns a ring holding at most size lines.
func newRing(size int) *ring {
	if size < 1 {
		size = 1
	}
	return &ring{size: size}
}

// add appends l, dropping the oldest line when full.
func (r *ring) add(l LogLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < r.size {
		r.lines = append(r.lines, l)
		return
	}
	r.lines[r.next] = l
	r.next = (r.next + 1) % r.size
}

// last returns the last n lines, oldest first (all of them when n <= 0).
func (r *ring) last(n int) []LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]LogLine, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	out = append(out, r.lines[:r.next]...)
	if n > 0 && n < len(out) {
		out = out[len(out)-n:]
	}
	return out
}
