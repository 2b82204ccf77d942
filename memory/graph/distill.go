package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Options configures [NewDistiller].
type Options struct {
	// Graph is the store distilled into (required).
	Graph memory.Graph
	// Extractor reads the facts; nil uses the rules only.
	Extractor Extractor
	// Fallback is used for a batch when Extractor fails (nil means NewRules with default
	// options).
	Fallback Extractor
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// MaxAccesses is the most Peeks an event may have had to be distilled. 0 means 2.
	MaxAccesses int
	// Idle is how long an event must have been neither created nor accessed. 0 means 72 h.
	Idle time.Duration
	// Batch is the most events given to the extractor at once (one session's). 0 means 16.
	Batch int
	// Log receives fallbacks and batch summaries; nil discards.
	Log *slog.Logger
	// Progress, when set, is called after each applied batch with the run's report so far
	// (from the goroutine that runs).
	Progress func(Report)
}

// Report says what a [Distiller.Run] did.
type Report struct {
	Events     int // events distilled (marked distilled, facts or not)
	Batches    int // ApplyDistillation calls
	Entities   int // entities created
	Triples    int // triples created
	Confirmed  int // existing triples that gained sources
	Superseded int
	Adopted    int
	Skipped    int // events the store had already distilled (a concurrent or earlier run)
	// Extractor names what extracted: the extractor's name, or "llm+rules" when the
	// fallback was used for at least one batch.
	Extractor string
}

// Distiller turns cold L2 events into L3 entities and triples (ARCHITECTURE.md §4). Each batch
// is one ApplyDistillation transaction, so a Run can be interrupted at any point and rerun:
// the store skips events already distilled. A Distiller is safe for concurrent use, though
// concurrent Runs only compete for the same events.
type Distiller struct {
	g         memory.Graph
	primary   Extractor
	fallback  Extractor // nil when primary is the rules
	clock     func() time.Time
	maxAccess int
	idle      time.Duration
	batch     int
	log       *slog.Logger
	progress  func(Report)
}

// NewDistiller returns a distiller; it fails when o.Graph is nil.
func NewDistiller(o Options) (*Distiller, error) {
	if o.Graph == nil {
		return nil, errors.New("new distiller: no graph")
	}
	d := &Distiller{
		g: o.Graph, primary: o.Extractor, fallback: o.Fallback, clock: o.Clock,
		maxAccess: o.MaxAccesses, idle: o.Idle, batch: o.Batch, log: o.Log, progress: o.Progress,
	}
	if d.fallback == nil {
		d.fallback = NewRules(RulesOptions{})
	}
	if d.primary == nil {
		d.primary, d.fallback = d.fallback, nil
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	if d.maxAccess <= 0 {
		d.maxAccess = 2
	}
	if d.idle <= 0 {
		d.idle = 72 * time.Hour
	}
	if d.batch <= 0 {
		d.batch = 16
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Run distils cold events (in L2, not distilled, at most MaxAccesses accesses, idle for Idle)
// in batches of one session's events in chronological order, until none is left or limit
// events are done (limit ≤ 0: no bound). When ctx is done it returns what was done with ctx.Err(); the
// batch in progress is not applied, and a later Run does it.
func (d *Distiller) Run(ctx context.Context, limit int) (Report, error) {
	rep := Report{Extractor: d.primary.Name()}
	q := memory.ColdQuery{
		MaxAccesses: d.maxAccess,
		IdleBefore:  d.clock().Add(-d.idle),
		Limit:       d.batch * 8,
	}
	done := map[int64]bool{} // events this run applied (guards against a store that keeps them cold)
	for limit <= 0 || rep.Events < limit {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		evs, err := d.g.ColdEvents(ctx, q)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return rep, ctxErr
			}
			return rep, fmt.Errorf("distil: cold events: %w", err)
		}
		n := len(evs)
		evs = slices.DeleteFunc(evs, func(e memory.Event) bool { return done[e.ID] })
		if len(evs) == 0 {
			if n > 0 {
				d.log.Warn("distillation stops: the store still lists distilled events as cold", "events", n)
			}
			return rep, nil
		}
		if limit > 0 && len(evs) > limit-rep.Events {
			evs = evs[:limit-rep.Events]
		}
		for _, b := range batches(evs, d.batch) {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			if err := d.apply(ctx, b, &rep); err != nil {
				return rep, err
			}
			for _, e := range b {
				done[e.ID] = true
			}
			if d.progress != nil {
				d.progress(rep)
			}
		}
	}
	return rep, nil
}

// apply extracts one batch and applies it.
func (d *Distiller) apply(ctx context.Context, b []memory.Event, rep *Report) error {
	x := d.primary
	facts, adopt, err := x.Extract(ctx, b)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.fallback == nil {
			return fmt.Errorf("distil session %s: %s: %w", b[0].Session, x.Name(), err)
		}
		d.log.Warn("distillation falls back", "session", b[0].Session, "events", len(b),
			"extractor", x.Name(), "fallback", d.fallback.Name(), "err", err)
		x = d.fallback
		facts, adopt, err = x.Extract(ctx, b)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return fmt.Errorf("distil session %s: fallback %s: %w", b[0].Session, x.Name(), err)
		}
		rep.Extractor = d.primary.Name() + "+" + d.fallback.Name()
	}
	ids := make([]int64, len(b))
	in := make(map[int64]bool, len(b))
	for i, e := range b {
		ids[i], in[e.ID] = e.ID, true
	}
	facts = slices.DeleteFunc(facts, func(f memory.Fact) bool {
		for _, s := range f.Sources {
			if !in[s] {
				d.log.Warn("distillation drops a fact citing an event outside its batch",
					"extractor", x.Name(), "event", s, "subject", f.Subject, "predicate", f.Predicate)
				return true
			}
		}
		return len(f.Sources) == 0
	})
	res, err := d.g.ApplyDistillation(ctx, memory.Distillation{
		Events: ids, Facts: facts, Adopt: adopt, Origin: x.Name(), At: d.clock(),
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("distil session %s: apply: %w", b[0].Session, err)
	}
	rep.Batches++
	rep.Events += len(b) - res.Skipped
	rep.Entities += res.Entities
	rep.Triples += res.Triples
	rep.Confirmed += res.Confirmed
	rep.Superseded += res.Superseded
	rep.Adopted += res.Adopted
	rep.Skipped += res.Skipped
	d.log.Debug("distilled", "session", b[0].Session, "events", len(b), "extractor", x.Name(),
		"facts", len(facts), "triples", res.Triples, "confirmed", res.Confirmed)
	return nil
}

// batches groups events (oldest first) by session, in order of each session's first event, and
// cuts each session's events into batches of at most n, keeping their order.
func batches(evs []memory.Event, n int) [][]memory.Event {
	var order []string
	by := map[string][]memory.Event{}
	for _, e := range evs {
		if _, ok := by[e.Session]; !ok {
			order = append(order, e.Session)
		}
		by[e.Session] = append(by[e.Session], e)
	}
	var out [][]memory.Event
	for _, s := range order {
		l := by[s]
		slices.SortStableFunc(l, func(a, b memory.Event) int {
			if c := a.Time.Compare(b.Time); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		for len(l) > 0 {
			k := min(n, len(l))
			out = append(out, l[:k])
			l = l[k:]
		}
	}
	return out
}
