package engine

import (
	"context"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/graph"
)

// turnQueue bounds the batches of new events waiting for their facts: when the worker falls
// behind (a bulk import appends thousands of events), later batches are left to cooling's
// distillation, which reads every event anyway.
const turnQueue = 64

// turnFacts reads the facts of each new user event with the LLM-free rules right after it is
// stored, in the background (never on the turn's path, no LLM call), and applies them to the
// graph as fresh facts with provenance to the event (memory.Distillation.Keep: the events stay
// undistilled, and cooling — the LLM when one is configured — distils them again later; equal
// facts then confirm these).
type turnFacts struct {
	m     *Engine
	rules *graph.Rules
	ch    chan turnBatch

	mu      sync.Mutex
	closed  bool
	pending sync.WaitGroup // batches queued or being applied
	done    chan struct{}
}

// turnBatch is one append's user events, or (flushed set) a marker the worker closes when it
// reaches it: every batch queued before it is applied.
type turnBatch struct {
	evs     []memory.Event
	flushed chan struct{}
}

func newTurnFacts(m *Engine) *turnFacts {
	t := &turnFacts{m: m, rules: m.rules(), ch: make(chan turnBatch, turnQueue), done: make(chan struct{})}
	go t.run()
	return t
}

// add queues the user events of an append; it never blocks.
func (t *turnFacts) add(evs []memory.Event) {
	var user []memory.Event
	for _, e := range evs {
		if e.Role == memory.RoleUser && e.Content != "" && e.ID != 0 {
			user = append(user, e)
		}
	}
	if len(user) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.pending.Add(1)
	select {
	case t.ch <- turnBatch{evs: user}:
	default:
		t.pending.Done()
		t.m.log.Debug("turn facts: queue full, left to cooling", "events", len(user))
	}
}

func (t *turnFacts) run() {
	defer close(t.done)
	for b := range t.ch {
		if b.flushed != nil {
			close(b.flushed)
			continue
		}
		t.apply(b.evs)
		t.pending.Done()
	}
}

// apply extracts and applies one batch (one session's events at a time).
func (t *turnFacts) apply(evs []memory.Event) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	by := map[string][]memory.Event{}
	var order []string
	for _, e := range evs {
		if _, ok := by[e.Session]; !ok {
			order = append(order, e.Session)
		}
		by[e.Session] = append(by[e.Session], e)
	}
	for _, s := range order {
		b := by[s]
		facts, _, err := t.rules.Extract(ctx, b)
		if err != nil || len(facts) == 0 {
			continue
		}
		ids := make([]int64, len(b))
		for i, e := range b {
			ids[i] = e.ID
		}
		if _, err := t.m.store.ApplyDistillation(ctx, memory.Distillation{
			Events: ids, Facts: facts, Origin: graph.OriginRules, At: t.m.clock(), Keep: true,
		}); err != nil {
			t.m.log.Warn("turn facts: apply", "session", s, "events", len(b), "err", err)
		}
	}
}

// wait returns when every batch queued so far is applied (tests and benchmarks, with no turns
// running meanwhile).
func (t *turnFacts) wait() { t.pending.Wait() }

// flush returns when the batches queued before it are applied, whatever is queued meanwhile,
// or when ctx ends. Cooling calls it first, so a pass never races the turns' facts of the
// events it distils (the graph it leaves does not depend on timing).
func (t *turnFacts) flush(ctx context.Context) error {
	marker := turnBatch{flushed: make(chan struct{})}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	select { // the worker drains the queue without the lock, so this send ends
	case t.ch <- marker:
	case <-ctx.Done():
		t.mu.Unlock()
		return ctx.Err()
	}
	t.mu.Unlock()
	select {
	case <-marker.flushed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close stops the worker after the queued batches.
func (t *turnFacts) close() {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.ch)
	}
	t.mu.Unlock()
	<-t.done
}
