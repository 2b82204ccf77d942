package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/graph"
)

// CoolAll cools and distils everything now: every L1 event of every session sinks to L2 now, idle or
// not (the recent ones too, so the next turn of a session starts from recall), and every cold
// event is distilled at once rather than after distill_idle; then scenes decay, as in a pass
// of MemoryGC. It never overlaps a MemoryGC pass.
// Progress phases of [Engine.CoolAll].
const (
	PhaseCooling    = "cooling"    // done of total sessions
	PhaseDistilling = "distilling" // done events (the total is unknown)
)

// CoolAll's progress is called with a phase, how far it is and (when known) of how many.
func (m *Engine) CoolAll(ctx context.Context, progress func(phase string, done, total int)) (GCReport, error) {
	if progress == nil {
		progress = func(string, int, int) {}
	}
	m.gcMu.Lock()
	defer m.gcMu.Unlock()
	t0 := time.Now()
	var rep GCReport
	if err := m.turns.flush(ctx); err != nil {
		return rep, fmt.Errorf("memory cool-all: the turns' facts: %w", err)
	}
	sessions, err := m.store.ListSessions(ctx)
	if err != nil {
		return rep, fmt.Errorf("cool all: %w", err)
	}
	for i, s := range sessions {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		n, err := m.coolSession(ctx, s.ID)
		if err != nil {
			return rep, fmt.Errorf("cool all: session %s: %w", s.ID, err)
		}
		rep.Cooled += n
		progress(PhaseCooling, i+1, len(sessions))
	}
	d, err := m.distillerWith(func(o *graph.Options) {
		// Idle for a nanosecond: everything cold, however recent.
		o.Idle = time.Nanosecond
		o.Progress = func(r graph.Report) {
			progress(PhaseDistilling, r.Events, 0)
		}
	})
	if err != nil {
		return rep, fmt.Errorf("cool all: %w", err)
	}
	dr, err := d.Run(ctx, 0)
	rep.Distilled, rep.Entities, rep.Triples, rep.Confirmed, rep.Superseded, rep.Extractor =
		dr.Events, dr.Entities, dr.Triples, dr.Confirmed, dr.Superseded, dr.Extractor
	if err != nil {
		return rep, fmt.Errorf("cool all: distillation: %w", err)
	}
	if rep.Decayed, err = m.scenes.Decay(ctx); err != nil {
		return rep, fmt.Errorf("cool all: scene decay: %w", err)
	}
	rep.Took = time.Since(t0)
	m.log.Info("memory cooled all", "cooled", rep.Cooled, "distilled", rep.Distilled, "entities", rep.Entities,
		"triples", rep.Triples, "extractor", rep.Extractor, "ms", rep.Took.Milliseconds())
	return rep, nil
}

// coolSession sinks every L1 event of a session to L2.
func (m *Engine) coolSession(ctx context.Context, session string) (int, error) {
	evs, err := m.store.LayerEvents(ctx, session, memory.LayerL1)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.store.SetLayer(ctx, ids, memory.LayerL2); err != nil {
		return 0, err
	}
	for _, id := range ids {
		delete(m.recalled, id)
	}
	m.dropFromWindows(ids)
	delete(m.windows, session)
	return len(ids), nil
}
