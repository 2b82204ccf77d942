package sqlite

import (
	"sync"

	"github.com/hologramagent/hologram/memory"
)

// tailCache keeps the most recent events of the busiest sessions in memory so that assembling a
// turn's context does not read the same rows from SQLite on every turn. It is write-through: the
// Store is the only writer of its file (one kernel per data dir), and AppendEvents adds committed
// events here after the commit. A generation per session keeps a History that read the database
// while an append committed from installing a stale tail.
type tailCache struct {
	mu   sync.Mutex
	cap  int // events kept per session
	max  int // sessions kept
	tick uint64
	byID map[string]*tail
	gens map[string]uint64
}

type tail struct {
	evs  []memory.Event // chronological, at most cap
	all  bool           // evs holds every event of the session
	used uint64
}

func newTailCache(perSession, sessions int) *tailCache {
	return &tailCache{cap: perSession, max: sessions, byID: map[string]*tail{}, gens: map[string]uint64{}}
}

// get returns the last limit events (limit ≤ cap) when cached.
func (c *tailCache) get(session string, limit int) ([]memory.Event, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.byID[session]
	if t == nil || limit > c.cap || (limit <= 0 && !t.all) || (len(t.evs) < limit && !t.all) {
		return nil, false
	}
	if limit <= 0 {
		limit = len(t.evs)
	}
	c.tick++
	t.used = c.tick
	evs := t.evs[max(0, len(t.evs)-limit):]
	out := make([]memory.Event, len(evs))
	for i, e := range evs {
		e.ToolCalls = cloneCalls(e.ToolCalls)
		out[i] = e
	}
	return out, true
}

// generation is read before a database load; install only succeeds if no append happened since.
func (c *tailCache) generation(session string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[session]
}

// install caches the last cap events just read from the database; complete says evs holds every
// event of the session. A read that is neither complete nor a full tail is not cached.
func (c *tailCache) install(session string, gen uint64, evs []memory.Event, complete bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[session] != gen || (!complete && len(evs) < c.cap) {
		return
	}
	if len(c.byID) >= c.max {
		var victim string
		var oldest uint64
		for id, t := range c.byID {
			if victim == "" || t.used < oldest {
				victim, oldest = id, t.used
			}
		}
		delete(c.byID, victim)
	}
	keep := evs[max(0, len(evs)-c.cap):]
	t := &tail{evs: make([]memory.Event, len(keep)), all: complete && len(evs) <= c.cap}
	for i, e := range keep {
		e.ToolCalls = cloneCalls(e.ToolCalls)
		t.evs[i] = e
	}
	c.tick++
	t.used = c.tick
	c.byID[session] = t
}

// appended records committed events (in commit order).
func (c *tailCache) appended(evs []memory.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range evs {
		c.gens[e.Session]++
		t := c.byID[e.Session]
		if t == nil {
			continue
		}
		e.ToolCalls = cloneCalls(e.ToolCalls)
		t.evs = append(t.evs, e)
		if len(t.evs) > c.cap {
			t.all = false
		}
		if len(t.evs) >= 2*c.cap { // compact now and then, not on every append
			t.evs = append(t.evs[:0:0], t.evs[len(t.evs)-c.cap:]...)
		}
	}
}

func cloneCalls(c []memory.ToolCall) []memory.ToolCall {
	if len(c) == 0 {
		return nil
	}
	return append([]memory.ToolCall(nil), c...)
}
