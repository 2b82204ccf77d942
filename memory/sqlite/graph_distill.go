package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Distillation into the graph: a batch of facts and adoptions applied in one transaction
// (graph.go holds names, triples and their validity).

// sourceEvent is what distillation needs of a source event.
type sourceEvent struct {
	session string
	time    time.Time
	scope   memory.Scope
}

// ApplyDistillation implements [memory.Graph] in one write transaction.
//
// Events of d.Events that are missing or already distilled are Skipped and drop out of every
// fact's Sources; a fact left with no source is ignored, so a rerun after a crash never
// duplicates. The other events are marked distilled (they stay in L2).
//
// Entities are found by [memory.NameKey] and kind (lower case, "thing" when empty); else, when
// exactly one entity has that name key and either kind is "thing", that one (a "thing" takes
// the specific kind); else a new entity is created. Those created or found by distillation
// (origin llm or rules) take the narrowest scope of the events they come from; owner-made and
// imported ones keep their scope. Names are trimmed with inner white space collapsed, at most
// 200 characters; predicates are [memory.NormalizePredicate]d, at most 100 characters.
//
// A fact equal to a current triple (same subject, predicate and object entities) adds its
// sources to it (Confirmed) and narrows its scope. Otherwise it becomes a new triple
// (ValidFrom: the fact's, or the newest source event's time) with the narrowest scope of its
// sources ([memory.Narrowest]). When its predicate is [memory.SingleValued] or the fact
// Replaces, it supersedes the subject's current triples with the same predicate and another
// object (their ValidTo becomes its ValidFrom, SupersededBy its id), pinned ones excepted; but
// when one of those is newer (a later ValidFrom) the new triple is stored already ended by the
// earliest such one, so out-of-order distillation never overturns a newer fact. Only current
// triples are in the full-text index.
//
// With d.Keep the events stay undistilled (a turn's facts read before cooling distils it).
//
// A fact that Ends (a negation) ends the current, unpinned triples with its subject, predicate
// and object names (ValidTo: its ValidFrom, or the newest source event's time) and creates
// nothing; it counts as Superseded.
//
// An adoption whose block is not held by one of the (not skipped) events is ignored and
// logged; otherwise the block moves to L3, held by the named entity (found or created as
// above, kind "thing"), and a text block becomes the entity's text block when it has none.
// d.Origin is "llm" or "rules" ("" is "rules"); d.At (default now) is the creation time of
// what is created. A fact with an invalid name or predicate, or a source outside d.Events,
// fails the call with [memory.ErrInvalid] and nothing changes.
func (s *Store) ApplyDistillation(ctx context.Context, d memory.Distillation) (memory.DistillResult, error) {
	origin := d.Origin
	if origin == "" {
		origin = originRules
	}
	if origin != originLLM && origin != originRules {
		return memory.DistillResult{}, fmt.Errorf("apply distillation: origin %q is not llm or rules: %w", origin, memory.ErrInvalid)
	}
	inBatch := make(map[int64]bool, len(d.Events))
	for _, id := range d.Events {
		inBatch[id] = true
	}
	facts := make([]normFact, len(d.Facts))
	for i, f := range d.Facts {
		var err error
		if facts[i], err = normalizeFact(f); err != nil {
			return memory.DistillResult{}, fmt.Errorf("apply distillation: fact %d: %w", i, err)
		}
		for _, src := range f.Sources {
			if !inBatch[src] {
				return memory.DistillResult{}, fmt.Errorf("apply distillation: fact %d: source %d is not one of the distilled events: %w",
					i, src, memory.ErrInvalid)
			}
		}
	}
	for i, a := range d.Adopt {
		if _, _, err := normName(a.Entity); err != nil {
			return memory.DistillResult{}, fmt.Errorf("apply distillation: adoption %d: %w", i, err)
		}
	}
	at := d.At
	if at.IsZero() {
		at = s.now()
	}
	var res memory.DistillResult
	err := s.graphWrite(ctx, "apply distillation", at, func(g *gtx) error {
		res = memory.DistillResult{}
		ids := make([]int64, 0, len(inBatch))
		for id := range inBatch {
			ids = append(ids, id)
		}
		fresh := make(map[int64]sourceEvent, len(ids))
		rows, err := g.QueryContext(ctx, `SELECT id, session, time, scope_kind, scope_group FROM events
			WHERE id IN (SELECT value FROM json_each(?)) AND distilled = 0`, idList(ids))
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		for rows.Next() {
			var id, t int64
			var ev sourceEvent
			var k int
			if err := rows.Scan(&id, &ev.session, &t, &k, &ev.scope.Group); err != nil {
				rows.Close()
				return fmt.Errorf("read events: %w", err)
			}
			ev.time, ev.scope.Kind = fromNanos(t), memory.ScopeKind(k)
			fresh[id] = ev
			g.sessions[ev.session] = true
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		res.Skipped = len(ids) - len(fresh)
		freshIDs := make([]int64, 0, len(fresh))
		for id := range fresh {
			freshIDs = append(freshIDs, id)
		}
		if !d.Keep {
			if _, err := g.ExecContext(ctx, `UPDATE events SET distilled = 1 WHERE id IN (SELECT value FROM json_each(?))`,
				idList(freshIDs)); err != nil {
				return fmt.Errorf("mark distilled: %w", err)
			}
		}
		for i, f := range d.Facts {
			if err := g.applyFact(ctx, f, facts[i], fresh, origin, &res); err != nil {
				return fmt.Errorf("fact %d: %w", i, err)
			}
		}
		for i, a := range d.Adopt {
			if err := g.adopt(ctx, a, fresh, origin, &res); err != nil {
				return fmt.Errorf("adoption %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return memory.DistillResult{}, err
	}
	return res, nil
}

// applyFact stores one distilled fact (see ApplyDistillation).
func (g *gtx) applyFact(ctx context.Context, f memory.Fact, n normFact, fresh map[int64]sourceEvent, origin string, res *memory.DistillResult) error {
	var srcs []int64
	var sc memory.Scope
	var newest time.Time
	for _, id := range f.Sources {
		ev, ok := fresh[id]
		if !ok || slices.Contains(srcs, id) {
			continue
		}
		if len(srcs) == 0 {
			sc = ev.scope
		} else {
			sc = memory.Narrowest(sc, ev.scope)
		}
		if ev.time.After(newest) {
			newest = ev.time
		}
		srcs = append(srcs, id)
	}
	if len(srcs) == 0 {
		return nil // every source skipped: a rerun
	}
	slices.Sort(srcs)
	if f.Ends {
		at := f.ValidFrom
		if at.IsZero() {
			at = newest
		}
		return g.endTriples(ctx, n, at, res)
	}
	subj, created, err := g.resolveEntity(ctx, n.subject, n.subjectKind, sc, origin, true)
	if err != nil {
		return err
	}
	if created {
		res.Entities++
	}
	obj, created, err := g.resolveEntity(ctx, n.object, n.objectKind, sc, origin, true)
	if err != nil {
		return err
	}
	if created {
		res.Entities++
	}
	cur, curScope, err := g.currentTriple(ctx, subj, n.predicate, obj)
	if err != nil {
		return err
	}
	if cur != 0 {
		if err := g.addSources(ctx, cur, srcs); err != nil {
			return err
		}
		if ns := memory.Narrowest(curScope, sc); ns != curScope {
			if err := g.setTripleScope(ctx, cur, ns); err != nil {
				return err
			}
		}
		res.Confirmed++
		return nil
	}
	vf := f.ValidFrom
	if vf.IsZero() {
		vf = newest
	}
	_, sup, err := g.insertTriple(ctx, newTriple{
		subject: subj, object: obj, predicate: n.predicate, validFrom: vf, scope: sc, origin: origin,
		sources: srcs, supersede: f.Replaces || memory.SingleValued(n.predicate),
	})
	if err != nil {
		return err
	}
	res.Triples++
	res.Superseded += sup
	return nil
}

// adopt moves a block held by a fresh event to L3 (see ApplyDistillation).
func (g *gtx) adopt(ctx context.Context, a memory.Adoption, fresh map[int64]sourceEvent, origin string, res *memory.DistillResult) error {
	var kind string
	var holder sql.NullInt64
	err := g.QueryRowContext(ctx, `SELECT kind, holder_event FROM blocks WHERE id = ?`, a.Block).Scan(&kind, &holder)
	if errors.Is(err, sql.ErrNoRows) {
		g.s.log.Warn("distillation adopts an unknown block; ignored", "block", a.Block, "entity", a.Entity)
		return nil
	}
	if err != nil {
		return fmt.Errorf("block %s: %w", a.Block, err)
	}
	ev, ok := fresh[holder.Int64]
	if !holder.Valid || !ok {
		g.s.log.Warn("distillation adopts a block no distilled event holds; ignored", "block", a.Block, "entity", a.Entity)
		return nil
	}
	ent, created, err := g.resolveEntity(ctx, a.Entity, kindThing, ev.scope, origin, true)
	if err != nil {
		return err
	}
	if created {
		res.Entities++
	}
	if _, err := g.ExecContext(ctx, `UPDATE blocks SET holder_layer = 3, holder_event = NULL, holder_entity = ? WHERE id = ?`,
		ent, a.Block); err != nil {
		return fmt.Errorf("move block %s to entity %d: %w", a.Block, ent, err)
	}
	if kind == string(memory.BlockText) {
		if _, err := g.ExecContext(ctx, `UPDATE entities SET block_id = ?, updated = ? WHERE id = ? AND block_id IS NULL`,
			a.Block, toNanos(g.now), ent); err != nil {
			return fmt.Errorf("text block of entity %d: %w", ent, err)
		}
	}
	res.Adopted++
	return nil
}
