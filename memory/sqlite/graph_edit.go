package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hologramagent/hologram/memory"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// The owner's edits of the L3 graph: entities, triples, pins, merges, deletions, recalls.

// isUnique reports whether err is a UNIQUE constraint violation.
func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique
}

// PutEntity implements [memory.Graph]. ID 0 creates an entity (Origin "owner" unless set to
// "llm", "rules" or "import"; Pinned as given); another ID edits that entity's name, kind, text
// and scope (ErrNotFound when unknown) and keeps its triples. Name and kind are normalised as
// in distillation; another entity with the same name key and kind is [memory.ErrExists]; the
// scope must be valid. The text lives in a text block held by the entity (scope: the
// entity's), created when the text becomes non-empty, updated, and deleted when it becomes
// empty (white space only counts as empty).
func (s *Store) PutEntity(ctx context.Context, e memory.Entity) (memory.Entity, error) {
	name, key, err := normName(e.Name)
	if err != nil {
		return memory.Entity{}, fmt.Errorf("put entity: %w", err)
	}
	kind, err := normKind(e.Kind)
	if err != nil {
		return memory.Entity{}, fmt.Errorf("put entity: %w", err)
	}
	if err := e.Scope.Validate(); err != nil {
		return memory.Entity{}, fmt.Errorf("put entity %q: scope: %w", name, err)
	}
	origin := e.Origin
	switch origin {
	case "":
		origin = originOwner
	case originOwner, originImport, originLLM, originRules:
	default:
		return memory.Entity{}, fmt.Errorf("put entity %q: unknown origin %q: %w", name, origin, memory.ErrInvalid)
	}
	var out memory.Entity
	err = s.graphWrite(ctx, "put entity", s.now(), func(g *gtx) error {
		id := e.ID
		var blockID sql.NullString
		renamed := false
		if id == 0 {
			res, err := g.ExecContext(ctx, `INSERT INTO entities (name, name_key, kind, scope_kind, scope_group, pinned, origin, created, updated)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, name, key, kind, int(e.Scope.Kind), e.Scope.Group, e.Pinned, origin,
				toNanos(g.now), toNanos(g.now))
			if isUnique(err) {
				return fmt.Errorf("entity %q of kind %q: %w", name, kind, memory.ErrExists)
			}
			if err != nil {
				return err
			}
			if id, err = res.LastInsertId(); err != nil {
				return err
			}
		} else {
			var oldName string
			err := g.QueryRowContext(ctx, `SELECT name, block_id FROM entities WHERE id = ?`, id).Scan(&oldName, &blockID)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("entity %d: %w", id, memory.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("entity %d: %w", id, err)
			}
			renamed = oldName != name
			_, err = g.ExecContext(ctx, `UPDATE entities SET name = ?, name_key = ?, kind = ?, scope_kind = ?, scope_group = ?,
				updated = ? WHERE id = ?`, name, key, kind, int(e.Scope.Kind), e.Scope.Group, toNanos(g.now), id)
			if isUnique(err) {
				return fmt.Errorf("entity %q of kind %q: %w", name, kind, memory.ErrExists)
			}
			if err != nil {
				return fmt.Errorf("entity %d: %w", id, err)
			}
		}
		if err := g.setEntityText(ctx, id, blockID, e.Text, e.Scope); err != nil {
			return err
		}
		if renamed {
			if err := g.reindexEntityTriples(ctx, id); err != nil {
				return err
			}
		}
		var err error
		out, err = entityOn(ctx, g, id)
		return err
	})
	if err != nil {
		return memory.Entity{}, err
	}
	return out, nil
}

// setEntityText creates, updates or deletes the text block of entity id (current block: cur).
func (g *gtx) setEntityText(ctx context.Context, id int64, cur sql.NullString, text string, sc memory.Scope) error {
	empty := strings.TrimSpace(text) == ""
	switch {
	case cur.Valid && empty:
		if err := g.blockSessions(ctx, id); err != nil {
			return err
		}
		if _, err := g.ExecContext(ctx, `UPDATE entities SET block_id = NULL WHERE id = ?`, id); err != nil {
			return fmt.Errorf("text of entity %d: %w", id, err)
		}
		if _, err := g.ExecContext(ctx, `DELETE FROM blocks WHERE id = ?`, cur.String); err != nil {
			return fmt.Errorf("text of entity %d: %w", id, err)
		}
	case cur.Valid:
		if _, err := g.ExecContext(ctx, `UPDATE blocks SET text = ?, size = ?, scope_kind = ?, scope_group = ? WHERE id = ?`,
			text, len(text), int(sc.Kind), sc.Group, cur.String); err != nil {
			return fmt.Errorf("text of entity %d: %w", id, err)
		}
	case !empty:
		bid := newBlockID()
		if _, err := g.ExecContext(ctx, `INSERT INTO blocks (id, kind, text, size, scope_kind, scope_group, holder_layer,
			holder_entity, created) VALUES (?, 'text', ?, ?, ?, ?, 3, ?, ?)`,
			bid, text, len(text), int(sc.Kind), sc.Group, id, toNanos(g.now)); err != nil {
			return fmt.Errorf("text of entity %d: %w", id, err)
		}
		if _, err := g.ExecContext(ctx, `UPDATE entities SET block_id = ? WHERE id = ?`, bid, id); err != nil {
			return fmt.Errorf("text of entity %d: %w", id, err)
		}
	}
	return nil
}

// AddTriple implements [memory.Graph]: an owner-made ("owner", the default) or imported
// ("import") triple without sources, of scope sc, between the entities f names (resolved as in
// distillation; created with scope sc and this origin; existing ones keep their scope).
// ValidFrom is f.ValidFrom or now; f.Sources are ignored. A single-valued predicate or
// f.Replaces supersedes as in [Store.ApplyDistillation] (pinned triples excepted). When an equal current
// triple exists it is returned unchanged.
func (s *Store) AddTriple(ctx context.Context, f memory.Fact, origin string, sc memory.Scope) (memory.Triple, error) {
	switch origin {
	case "":
		origin = originOwner
	case originOwner, originImport:
	default:
		return memory.Triple{}, fmt.Errorf("add triple: origin %q is not owner or import: %w", origin, memory.ErrInvalid)
	}
	if err := sc.Validate(); err != nil {
		return memory.Triple{}, fmt.Errorf("add triple: scope: %w", err)
	}
	n, err := normalizeFact(f)
	if err != nil {
		return memory.Triple{}, fmt.Errorf("add triple: %w", err)
	}
	var out memory.Triple
	err = s.graphWrite(ctx, "add triple", s.now(), func(g *gtx) error {
		subj, _, err := g.resolveEntity(ctx, n.subject, n.subjectKind, sc, origin, false)
		if err != nil {
			return err
		}
		obj, _, err := g.resolveEntity(ctx, n.object, n.objectKind, sc, origin, false)
		if err != nil {
			return err
		}
		id, _, err := g.currentTriple(ctx, subj, n.predicate, obj)
		if err != nil {
			return err
		}
		if id == 0 {
			vf := f.ValidFrom
			if vf.IsZero() {
				vf = g.now
			}
			if id, _, err = g.insertTriple(ctx, newTriple{
				subject: subj, object: obj, predicate: n.predicate, validFrom: vf, scope: sc, origin: origin,
				supersede: f.Replaces || memory.SingleValued(n.predicate),
			}); err != nil {
				return err
			}
		}
		out, err = tripleOn(ctx, g, id)
		return err
	})
	if err != nil {
		return memory.Triple{}, err
	}
	return out, nil
}

// EditTriple implements [memory.Graph]: the owner's correction of a current triple (pinned or
// not). The new triple has f's subject, predicate and object (entities resolved as in
// distillation, created with the old triple's scope, origin "owner"), the old triple's sources,
// scope and pin, origin "owner", and ValidFrom f.ValidFrom or else the old triple's; the old
// one ends now, superseded by it. When an equal current triple already exists, the old
// triple's sources join it and it supersedes the old one instead. A single-valued predicate or
// f.Replaces supersedes the subject's other triples as in [Store.ApplyDistillation]. Unknown id:
// [memory.ErrNotFound]; a triple that is no longer current: [memory.ErrInvalid].
func (s *Store) EditTriple(ctx context.Context, id int64, f memory.Fact) (memory.Triple, error) {
	n, err := normalizeFact(f)
	if err != nil {
		return memory.Triple{}, fmt.Errorf("edit triple %d: %w", id, err)
	}
	var out memory.Triple
	err = s.graphWrite(ctx, fmt.Sprintf("edit triple %d", id), s.now(), func(g *gtx) error {
		old, err := tripleOn(ctx, g, id)
		if err != nil {
			return err
		}
		if !old.Current() {
			return fmt.Errorf("triple %d is no longer current: %w", id, memory.ErrInvalid)
		}
		subj, _, err := g.resolveEntity(ctx, n.subject, n.subjectKind, old.Scope, originOwner, false)
		if err != nil {
			return err
		}
		obj, _, err := g.resolveEntity(ctx, n.object, n.objectKind, old.Scope, originOwner, false)
		if err != nil {
			return err
		}
		vf := f.ValidFrom
		if vf.IsZero() {
			vf = old.ValidFrom
		}
		nid, curScope, err := g.currentTriple(ctx, subj, n.predicate, obj)
		if err != nil {
			return err
		}
		if nid == id {
			nid = 0 // the same edge: still a new triple that supersedes the old one
		}
		if nid != 0 {
			if err := g.addSources(ctx, nid, old.Sources); err != nil {
				return err
			}
			if ns := memory.Narrowest(curScope, old.Scope); ns != curScope {
				if err := g.setTripleScope(ctx, nid, ns); err != nil {
					return err
				}
			}
		} else if nid, _, err = g.insertTriple(ctx, newTriple{
			subject: subj, object: obj, predicate: n.predicate, validFrom: vf, scope: old.Scope, pinned: old.Pinned,
			origin: originOwner, sources: old.Sources, skip: id,
			supersede: f.Replaces || memory.SingleValued(n.predicate),
		}); err != nil {
			return err
		}
		if err := g.supersede(ctx, id, nid, g.now); err != nil {
			return err
		}
		out, err = tripleOn(ctx, g, nid)
		return err
	})
	if err != nil {
		return memory.Triple{}, err
	}
	return out, nil
}

// Pin implements [memory.Graph]: kind "entity" or "triple" ([memory.ErrInvalid] otherwise);
// an unknown id is [memory.ErrNotFound]. Pinned entities are never deleted as orphans by
// Forget; pinned triples are never superseded by distillation nor deleted by Forget.
func (s *Store) Pin(ctx context.Context, kind string, id int64, pinned bool) error {
	if kind != "entity" && kind != "triple" {
		return fmt.Errorf("pin: kind %q is not entity or triple: %w", kind, memory.ErrInvalid)
	}
	return s.graphWrite(ctx, fmt.Sprintf("pin %s %d", kind, id), s.now(), func(g *gtx) error {
		var res sql.Result
		var err error
		if kind == "entity" {
			res, err = g.ExecContext(ctx, `UPDATE entities SET pinned = ?, updated = ? WHERE id = ?`, pinned, toNanos(g.now), id)
		} else {
			res, err = g.ExecContext(ctx, `UPDATE triples SET pinned = ? WHERE id = ?`, pinned, id)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("%s %d: %w", kind, id, memory.ErrNotFound)
		}
		return nil
	})
}

// MergeEntities implements [memory.Graph]: every triple of from is re-pointed to into; current
// triples that thereby become equal merge into the oldest (sources joined, pinned if either
// was, the narrowest scope, the earliest ValidFrom); the blocks from holds move to into; into
// takes the narrowest of both scopes, is pinned if either was, keeps its text block or else
// takes from's; from is deleted. Unknown ids: [memory.ErrNotFound]; into == from:
// [memory.ErrInvalid].
func (s *Store) MergeEntities(ctx context.Context, into, from int64) (memory.Entity, error) {
	if into == from {
		return memory.Entity{}, fmt.Errorf("merge entity %d into itself: %w", from, memory.ErrInvalid)
	}
	var out memory.Entity
	err := s.graphWrite(ctx, fmt.Sprintf("merge entity %d into %d", from, into), s.now(), func(g *gtx) error {
		a, err := entityOn(ctx, g, into)
		if err != nil {
			return err
		}
		b, err := entityOn(ctx, g, from)
		if err != nil {
			return err
		}
		if err := g.blockSessions(ctx, from); err != nil {
			return err
		}
		for _, stmt := range []string{
			`UPDATE triples SET subject = ?1 WHERE subject = ?2`,
			`UPDATE triples SET object = ?1 WHERE object = ?2`,
			`UPDATE blocks SET holder_entity = ?1 WHERE holder_entity = ?2`,
		} {
			if _, err := g.ExecContext(ctx, stmt, into, from); err != nil {
				return err
			}
		}
		if err := g.mergeDuplicates(ctx, into); err != nil {
			return err
		}
		sc := memory.Narrowest(a.Scope, b.Scope)
		block := a.BlockID
		if block == "" {
			block = b.BlockID
		}
		if _, err := g.ExecContext(ctx, `DELETE FROM entities WHERE id = ?`, from); err != nil {
			return err
		}
		if _, err := g.ExecContext(ctx, `UPDATE entities SET scope_kind = ?, scope_group = ?, pinned = ?, block_id = nullif(?, ''),
			updated = ? WHERE id = ?`, int(sc.Kind), sc.Group, a.Pinned || b.Pinned, block, toNanos(g.now), into); err != nil {
			return err
		}
		if err := g.reindexEntityTriples(ctx, into); err != nil {
			return err
		}
		out, err = entityOn(ctx, g, into)
		return err
	})
	if err != nil {
		return memory.Entity{}, err
	}
	return out, nil
}

// mergeDuplicates merges the current triples of entity that are equal (same subject,
// predicate, object) into the oldest of each group.
func (g *gtx) mergeDuplicates(ctx context.Context, entity int64) error {
	rows, err := g.QueryContext(ctx, `SELECT t.id, t.subject, t.predicate, t.object, t.valid_from, t.scope_kind,
		t.scope_group, t.pinned FROM triples t WHERE (t.subject = ?1 OR t.object = ?1) AND `+currentCond+` ORDER BY t.id`, entity)
	if err != nil {
		return fmt.Errorf("merge triples: %w", err)
	}
	type edge struct {
		s, o int64
		p    string
	}
	type row struct {
		id     int64
		from   int64
		scope  memory.Scope
		pinned bool
	}
	groups := make(map[edge][]row)
	var order []edge
	for rows.Next() {
		var e edge
		var r row
		var k int
		if err := rows.Scan(&r.id, &e.s, &e.p, &e.o, &r.from, &k, &r.scope.Group, &r.pinned); err != nil {
			rows.Close()
			return fmt.Errorf("merge triples: %w", err)
		}
		r.scope.Kind = memory.ScopeKind(k)
		if groups[e] == nil {
			order = append(order, e)
		}
		groups[e] = append(groups[e], r)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("merge triples: %w", err)
	}
	for _, e := range order {
		rs := groups[e]
		if len(rs) < 2 {
			continue
		}
		keep := rs[0]
		for _, r := range rs[1:] {
			keep.scope = memory.Narrowest(keep.scope, r.scope)
			keep.pinned = keep.pinned || r.pinned
			keep.from = min(keep.from, r.from)
			for _, stmt := range []string{
				`INSERT OR IGNORE INTO triple_sources (triple, event) SELECT ?1, event FROM triple_sources WHERE triple = ?2`,
				`UPDATE triples SET superseded_by = ?1 WHERE superseded_by = ?2`,
				`DELETE FROM triples WHERE id = ?2`,
			} {
				if _, err := g.ExecContext(ctx, stmt, keep.id, r.id); err != nil {
					return fmt.Errorf("merge triple %d into %d: %w", r.id, keep.id, err)
				}
			}
		}
		if _, err := g.ExecContext(ctx, `UPDATE triples SET scope_kind = ?, scope_group = ?, pinned = ?, valid_from = ? WHERE id = ?`,
			int(keep.scope.Kind), keep.scope.Group, keep.pinned, keep.from, keep.id); err != nil {
			return fmt.Errorf("merge triples into %d: %w", keep.id, err)
		}
	}
	return nil
}

// DeleteEntity implements [memory.Graph]: the entity, every triple it is part of (with their
// sources and index rows) and the blocks it holds go (events that brought those blocks lose
// their reference). Unknown id: [memory.ErrNotFound].
func (s *Store) DeleteEntity(ctx context.Context, id int64) error {
	return s.graphWrite(ctx, fmt.Sprintf("delete entity %d", id), s.now(), func(g *gtx) error {
		if err := g.blockSessions(ctx, id); err != nil {
			return err
		}
		res, err := g.ExecContext(ctx, `DELETE FROM entities WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("entity %d: %w", id, memory.ErrNotFound)
		}
		return nil
	})
}

// Recalled implements [memory.Graph]: the entities' last recall becomes t unless it is already
// later. Unknown ids are skipped (a recalled entity may have been deleted since).
func (s *Store) Recalled(ctx context.Context, ids []int64, t time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, `UPDATE entities SET last_recalled = max(last_recalled, ?)
		WHERE id IN (SELECT value FROM json_each(?))`, toNanos(t), idList(ids)); err != nil {
		return fmt.Errorf("recalled: %w", err)
	}
	s.ckpt.committed()
	return nil
}
