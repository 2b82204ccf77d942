package sqlite

import (
	"sync"
	"time"

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
		out[i] = cloneEvent(e)
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
		t.evs[i] = cloneEvent(e)
	}
	c.tick++
	t.used = c.tick
	c.byID[session] = t
}

// appended records committed events. Callers call it in commit order (Store.cacheMu).
func (c *tailCache) appended(evs []memory.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range evs {
		c.gens[e.Session]++
		t := c.byID[e.Session]
		if t == nil || (len(t.evs) > 0 && e.ID <= t.evs[len(t.evs)-1].ID) {
			continue // not cached, or a History that read after the commit installed it already
		}
		t.evs = append(t.evs, cloneEvent(e))
		if len(t.evs) > c.cap {
			t.all = false
		}
		if len(t.evs) >= 2*c.cap { // compact now and then, not on every append
			t.evs = append(t.evs[:0:0], t.evs[len(t.evs)-c.cap:]...)
		}
	}
}

// changed records committed changes of events' layer or accesses: set is applied to every cached
// copy of each changed event, and the generation of each touched session moves on so that a
// History that read the database before the commit does not install its stale tail.
func (c *tailCache) changed(changes []eventChange) {
	if len(changes) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	byID := make(map[int64]eventChange, len(changes))
	sessions := make(map[string]bool)
	for _, ch := range changes {
		byID[ch.id] = ch
		sessions[ch.session] = true
	}
	for session := range sessions {
		c.gens[session]++
		t := c.byID[session]
		if t == nil {
			continue
		}
		for i := range t.evs {
			if ch, ok := byID[t.evs[i].ID]; ok {
				ch.apply(&t.evs[i])
			}
		}
	}
}

// invalidate drops the cached tails of sessions whose events changed in ways changed cannot
// express (events deleted, scenes or blocks set).
func (c *tailCache) invalidate(sessions ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range sessions {
		c.gens[s]++
		delete(c.byID, s)
	}
}

// eventChange is the stored state of an event after SetLayer or Touch.
type eventChange struct {
	id         int64
	session    string
	layer      memory.Layer
	accesses   int
	lastAccess int64 // unix nanos; 0 = never
}

func (ch eventChange) apply(e *memory.Event) {
	if e.Layer != ch.layer { // the blocks the event holds moved with it (SetLayer)
		for i := range e.Blocks {
			if b := &e.Blocks[i]; b.Holder.Event == e.ID && b.Holder.Layer.Valid() {
				b.Holder.Layer = ch.layer
			}
		}
	}
	e.Layer, e.Accesses = ch.layer, ch.accesses
	e.LastAccess = time.Time{}
	if ch.lastAccess != 0 {
		e.LastAccess = fromNanos(ch.lastAccess)
	}
}

// cloneEvent returns e with its own ToolCalls, Blocks (and their Data) and Meta, so callers
// cannot change the cache through what they were given.
func cloneEvent(e memory.Event) memory.Event {
	e.ToolCalls = cloneCalls(e.ToolCalls)
	e.Meta = cloneMeta(e.Meta)
	e.Blocks = cloneBlocks(e.Blocks)
	return e
}

func cloneBlocks(bs []memory.Block) []memory.Block {
	if len(bs) == 0 {
		return nil
	}
	out := append([]memory.Block(nil), bs...)
	for i := range out {
		if out[i].Data != nil {
			out[i].Data = append([]byte(nil), out[i].Data...)
		}
	}
	return out
}

func cloneCalls(c []memory.ToolCall) []memory.ToolCall {
	if len(c) == 0 {
		return nil
	}
	return append([]memory.ToolCall(nil), c...)
}
