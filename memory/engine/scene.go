package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/scene"
)

// topicsPerTurn is how many of a message's most specific terms become topic features.
const topicsPerTurn = 3

// sceneObserver feeds the scene tracker from the kernel's writes, in a background worker so a
// turn never waits for it: a turn is one occurrence (its user message, tools and reply, observed
// when the reply without tool calls arrives); the messages of one ingest call are one occurrence
// per session and partner. The worker yields to the kernel's own work: it observes only after a
// quiet moment (obsQuiet without new events) and stops again when new events come, unless more
// than obsMaxQueued batches wait, so that it does not compete with a burst of turns or an ingest
// for the store's one writer, and still keeps up with an endless stream.
type sceneObserver struct {
	m *Engine

	mu      sync.Mutex
	queue   [][]obsEvent
	last    time.Time // when the newest queued batch came
	busy    bool
	urgent  int           // flush callers waiting: no quiet moment is awaited
	wake    chan struct{} // wakes a waiting worker (flush)
	idle    *sync.Cond
	pending map[string]*turnObs // by turn id, until its reply
}

// The observer's pacing (wall time: it schedules work, it decides nothing).
const (
	obsQuiet     = 200 * time.Millisecond
	obsMaxQueued = 2000 // batches (appends); past it the worker observes without yielding
)

// turnObs collects one turn's events.
type turnObs struct {
	session string
	ids     []int64
	text    []int64 // the events whose words give the topics (the user's message; ingested ones)
	tools   []string
	ev      obsEvent // the user event
}

func newSceneObserver(m *Engine) *sceneObserver {
	o := &sceneObserver{m: m, pending: map[string]*turnObs{}, wake: make(chan struct{}, 1)}
	o.idle = sync.NewCond(&o.mu)
	return o
}

// obsEvent is what observation needs of a stored event: a queue behind a fast ingest holds
// these, not whole events.
type obsEvent struct {
	ID       int64
	Session  string
	TurnID   string
	Role     memory.Role
	Partner  string
	ToolName string
	Calls    bool
	Time     time.Time
}

// maxTopicEvents bounds the events of one occurrence whose words are read for its topics.
const maxTopicEvents = 50

// appended queues newly stored events.
func (o *sceneObserver) appended(evs []memory.Event) {
	batch := make([]obsEvent, len(evs))
	for i, e := range evs {
		batch[i] = obsEvent{ID: e.ID, Session: e.Session, TurnID: e.TurnID, Role: e.Role, Partner: e.Partner, ToolName: e.ToolName,
			Calls: len(e.ToolCalls) > 0, Time: e.Time}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queue = append(o.queue, batch)
	o.last = time.Now()
	if !o.busy {
		o.busy = true
		go o.run()
	}
}

// flush waits until every queued event has been observed (tests and benchmarks).
func (o *sceneObserver) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.urgent++
	defer func() { o.urgent-- }()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	for o.busy {
		o.idle.Wait()
	}
}

func (o *sceneObserver) run() {
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.busy = false
			o.idle.Broadcast()
			o.mu.Unlock()
			return
		}
		if wait := time.Until(o.last.Add(obsQuiet)); o.urgent == 0 && len(o.queue) <= obsMaxQueued && wait > 0 {
			o.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-o.wake:
				t.Stop()
			}
			continue
		}
		evs := o.queue[0]
		o.queue = o.queue[1:]
		o.mu.Unlock()
		o.observe(context.Background(), evs)
	}
}

// observe turns events into scene occurrences. A turn is one occurrence; the messages of one
// ingest call (a channel's burst, an import) are one occurrence per session and partner.
func (o *sceneObserver) observe(ctx context.Context, evs []obsEvent) {
	type key struct{ session, partner string }
	var ingested []*turnObs
	byKey := map[key]*turnObs{}
	for _, e := range evs {
		if e.TurnID == "" { // an ingested message (channel input, import, /v1 history)
			if e.Role != memory.RoleUser && e.Role != memory.RoleAssistant {
				continue
			}
			k := key{e.Session, e.Partner}
			t := byKey[k]
			if t == nil {
				t = &turnObs{session: e.Session, ev: e}
				byKey[k] = t
				ingested = append(ingested, t)
			}
			t.ids = append(t.ids, e.ID)
			if len(t.text) < maxTopicEvents {
				t.text = append(t.text, e.ID)
			}
			continue
		}
		t := o.pending[e.TurnID]
		if t == nil {
			if len(o.pending) > 1000 { // turns that never finished
				clear(o.pending)
			}
			t = &turnObs{session: e.Session, ev: e}
			o.pending[e.TurnID] = t
		}
		t.ids = append(t.ids, e.ID)
		switch {
		case e.Role == memory.RoleUser:
			t.text, t.ev = []int64{e.ID}, e
		case e.Role == memory.RoleTool:
			t.tools = append(t.tools, e.ToolName)
		case e.Role == memory.RoleAssistant && !e.Calls:
			delete(o.pending, e.TurnID)
			o.occurrence(ctx, t)
		}
	}
	for _, t := range ingested {
		o.occurrence(ctx, t)
	}
}

// occurrence observes one occurrence and tags its events with the scene.
func (o *sceneObserver) occurrence(ctx context.Context, t *turnObs) {
	terms := func() ([]string, error) {
		hits, err := o.m.store.Events(ctx, t.text) // the words the store indexed them under
		var terms []string
		for _, h := range hits {
			terms = append(terms, strings.Fields(h.Indexed)...)
		}
		return terms, err
	}
	obs, key, err := o.m.sceneObs(ctx, t.session, t.ev.Partner, terms, t.tools, t.ev.Time)
	if err == nil {
		_, err = o.m.scenes.Observe(ctx, obs, key, t.ids)
	}
	if err != nil {
		o.m.log.Warn("scene observation failed", "session", t.session, "err", err)
	}
}

// sceneObs builds the fingerprint observation of a message in a session, and the declared
// scene key of channel sessions ("chan:<channel>/peer:<partner>"). terms (nil: none) gives the
// message's index terms for its topics; a declared scene does not need them.
func (m *Engine) sceneObs(ctx context.Context, session, partner string, terms func() ([]string, error), tools []string, at time.Time) (scene.Obs, string, error) {
	s, err := m.session(ctx, session)
	if err != nil {
		return scene.Obs{}, "", err
	}
	obs := scene.Obs{Channel: s.channel, Partner: partner, Tools: tools}
	if obs.Partner == "" {
		obs.Partner = s.partner
	}
	obs.Time = at
	if at.IsZero() {
		obs.Time = m.clock()
	}
	if s.channel != "" && s.partner != "" {
		return obs, "chan:" + s.channel + "/peer:" + s.partner, nil
	}
	if terms != nil {
		ts, err := terms()
		if err != nil {
			return scene.Obs{}, "", err
		}
		if len(ts) > 0 {
			df := func(q []string) ([]int, int, error) { return m.store.DocFreq(ctx, q) }
			if obs.Topics, err = scene.Topics(ts, df, topicsPerTurn); err != nil {
				return scene.Obs{}, "", err
			}
		}
	}
	return obs, "", nil
}
