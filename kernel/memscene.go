package kernel

import (
	"context"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/scene"
)

// topicsPerTurn is how many of a message's most specific terms become topic features.
const topicsPerTurn = 3

// sceneObserver feeds the scene tracker from the kernel's writes, in a background worker so a
// turn never waits for it: a turn is one occurrence (its user message, tools and reply, observed
// when the reply without tool calls arrives); an ingested message is one occurrence by itself.
type sceneObserver struct {
	m *mem

	mu      sync.Mutex
	queue   [][]memory.Event
	busy    bool
	idle    *sync.Cond
	pending map[string]*turnObs // by turn id, until its reply
}

// turnObs collects one turn's events.
type turnObs struct {
	session string
	ids     []int64
	input   string
	tools   []string
	ev      memory.Event // the user event
}

func newSceneObserver(m *mem) *sceneObserver {
	o := &sceneObserver{m: m, pending: map[string]*turnObs{}}
	o.idle = sync.NewCond(&o.mu)
	return o
}

// appended queues newly stored events.
func (o *sceneObserver) appended(evs []memory.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queue = append(o.queue, evs)
	if !o.busy {
		o.busy = true
		go o.run()
	}
}

// flush waits until every queued event has been observed (tests and benchmarks).
func (o *sceneObserver) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
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
		evs := o.queue[0]
		o.queue = o.queue[1:]
		o.mu.Unlock()
		o.observe(context.Background(), evs)
	}
}

// observe turns events into scene occurrences.
func (o *sceneObserver) observe(ctx context.Context, evs []memory.Event) {
	for _, e := range evs {
		if e.TurnID == "" { // an ingested message (channel input, import, /v1 history)
			if e.Role == memory.RoleUser || e.Role == memory.RoleAssistant {
				o.occurrence(ctx, &turnObs{session: e.Session, ids: []int64{e.ID}, input: e.Content, ev: e})
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
			t.input, t.ev = e.Content, e
		case e.Role == memory.RoleTool:
			t.tools = append(t.tools, e.ToolName)
		case e.Role == memory.RoleAssistant && len(e.ToolCalls) == 0:
			delete(o.pending, e.TurnID)
			o.occurrence(ctx, t)
		}
	}
}

// occurrence observes one occurrence and tags its events with the scene.
func (o *sceneObserver) occurrence(ctx context.Context, t *turnObs) {
	obs, key, err := o.m.sceneObs(ctx, t.session, t.ev.Partner, t.input, t.tools, t.ev.Time)
	if err == nil {
		_, err = o.m.scenes.Observe(ctx, obs, key, t.ids)
	}
	if err != nil {
		o.m.k.log.Warn("scene observation failed", "session", t.session, "err", err)
	}
}

// sceneObs builds the fingerprint observation of a message in a session, and the declared
// scene key of channel sessions ("chan:<channel>/peer:<partner>").
func (m *mem) sceneObs(ctx context.Context, session, partner, text string, tools []string, at time.Time) (scene.Obs, string, error) {
	s, err := m.store.GetSession(ctx, session)
	if err != nil {
		return scene.Obs{}, "", err
	}
	obs := scene.Obs{Channel: s.Channel, Partner: partner, Tools: tools}
	if obs.Partner == "" {
		obs.Partner = s.Partner
	}
	obs.Time = at
	if at.IsZero() {
		obs.Time = m.k.clock()
	}
	if text != "" {
		terms, err := m.tok(text)
		if err != nil {
			return scene.Obs{}, "", err
		}
		if obs.Topics, err = scene.Topics(terms, func(ts []string) ([]int, int, error) { return m.store.DocFreq(ctx, ts) }, topicsPerTurn); err != nil {
			return scene.Obs{}, "", err
		}
	}
	key := ""
	if s.Channel != "" && s.Partner != "" {
		key = "chan:" + s.Channel + "/peer:" + s.Partner
	}
	return obs, key, nil
}
