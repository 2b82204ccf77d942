package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// Reads of the L3 graph: entities, triples, full-text search of triples, cold events.

// entitySelect selects an entity's columns (scanEntity's order) with its text block and its
// mentions: the distinct source events of its current triples.
const entitySelect = `SELECT e.id, e.name, e.kind, coalesce(e.block_id, ''), coalesce(b.text, ''),
	coalesce(b.scope_kind, 0), coalesce(b.scope_group, ''), e.scope_kind, e.scope_group, e.pinned, e.origin,
	e.created, e.updated, e.last_recalled,
	(SELECT count(DISTINCT ts.event) FROM triple_sources ts WHERE ts.triple IN (
		SELECT t.id FROM triples t WHERE t.subject = e.id AND ` + currentCond + `
		UNION ALL SELECT t.id FROM triples t WHERE t.object = e.id AND ` + currentCond + `))
	FROM entities e LEFT JOIN blocks b ON b.id = e.block_id`

// scanEntity reads a row of entitySelect. The text of a block v may not see is left out.
func scanEntity(sc scanner, v memory.Viewer) (memory.Entity, error) {
	var e memory.Entity
	var bk, ek int
	var bGroup string
	var created, updated, recalled int64
	if err := sc.Scan(&e.ID, &e.Name, &e.Kind, &e.BlockID, &e.Text, &bk, &bGroup, &ek, &e.Scope.Group, &e.Pinned,
		&e.Origin, &created, &updated, &recalled, &e.Mentions); err != nil {
		return memory.Entity{}, err
	}
	e.Scope.Kind = memory.ScopeKind(ek)
	if !v.CanSee(memory.Scope{Kind: memory.ScopeKind(bk), Group: bGroup}) {
		e.Text = ""
	}
	e.Created, e.Updated, e.LastRecalled = fromNanos(created), fromNanos(updated), nanosOrZero(recalled)
	return e, nil
}

// entityOn reads one entity through q; ErrNotFound when unknown.
func entityOn(ctx context.Context, q querier, id int64) (memory.Entity, error) {
	e, err := scanEntity(q.QueryRowContext(ctx, entitySelect+` WHERE e.id = ?`, id), memory.OwnerViewer)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Entity{}, fmt.Errorf("entity %d: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return memory.Entity{}, fmt.Errorf("entity %d: %w", id, err)
	}
	return e, nil
}

// Entity implements [memory.Graph] (as the owner sees it).
func (s *Store) Entity(ctx context.Context, id int64) (memory.Entity, error) {
	return entityOn(ctx, s.r, id)
}

// clampLimit applies a query's default and maximum.
func clampLimit(limit, def, most int) int {
	if limit <= 0 {
		return def
	}
	return min(limit, most)
}

// scopeFilter is the SQL condition of an exact scope (alias a).
func scopeFilter(sc memory.Scope, alias string) (string, []any) {
	return alias + "scope_kind = ? AND " + alias + "scope_group = ?", []any{int(sc.Kind), sc.Group}
}

// Entities implements [memory.Graph]: in id order after q.After, at most q.Limit (default 100,
// at most 10,000). Name matches by [memory.NameKey]; Kind exactly (lower-cased); Scope
// exactly; Viewer by [memory.Viewer.CanSee] (the owner sees all). Text keeps the entities whose
// name or text (the text v may see) contains it, case-insensitively.
func (s *Store) Entities(ctx context.Context, q memory.EntityQuery) ([]memory.Entity, error) {
	limit := clampLimit(q.Limit, defaultEntityLimit, maxEntityLimit)
	where := []string{"e.id > ?"}
	args := []any{q.After}
	if cond, cargs := visibility(q.Viewer, "e."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	if q.Name != "" {
		where, args = append(where, "e.name_key = ?"), append(args, memory.NameKey(q.Name))
	}
	if q.Kind != "" {
		where, args = append(where, "e.kind = ?"), append(args, memory.NameKey(q.Kind))
	}
	if q.Scope != nil {
		cond, cargs := scopeFilter(*q.Scope, "e.")
		where, args = append(where, cond), append(args, cargs...)
	}
	cond := strings.Join(where, " AND ")
	if q.Text != "" {
		// Unicode case folding happens in Go (SQLite's lower() folds ASCII only): the
		// candidates stream in id order until limit of them match.
		ids, err := s.entitiesWithText(ctx, cond, args, strings.ToLower(q.Text), q.Viewer, limit)
		if err != nil {
			return nil, fmt.Errorf("entities: %w", err)
		}
		if len(ids) == 0 {
			return nil, nil
		}
		cond, args = "e.id IN (SELECT value FROM json_each(?))", []any{idList(ids)}
	}
	rows, err := s.r.QueryContext(ctx, entitySelect+` WHERE `+cond+` ORDER BY e.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("entities: %w", err)
	}
	defer rows.Close()
	var out []memory.Entity
	for rows.Next() {
		e, err := scanEntity(rows, q.Viewer)
		if err != nil {
			return nil, fmt.Errorf("entities: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("entities: %w", err)
	}
	return out, nil
}

// entitiesWithText returns the ids of the first limit entities matching cond whose name or
// visible text contains text (lower case).
func (s *Store) entitiesWithText(ctx context.Context, cond string, args []any, text string, v memory.Viewer, limit int) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT e.id, e.name, coalesce(b.text, ''), coalesce(b.scope_kind, 0),
		coalesce(b.scope_group, '') FROM entities e LEFT JOIN blocks b ON b.id = e.block_id
		WHERE `+cond+` ORDER BY e.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() && len(ids) < limit {
		var id int64
		var name, body, group string
		var kind int
		if err := rows.Scan(&id, &name, &body, &kind, &group); err != nil {
			return nil, err
		}
		if !v.CanSee(memory.Scope{Kind: memory.ScopeKind(kind), Group: group}) {
			body = ""
		}
		if strings.Contains(strings.ToLower(name), text) || strings.Contains(strings.ToLower(body), text) {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// tripleSelect selects a triple's columns (scanTriple's order) with its entities' names.
const (
	tripleCols = `t.id, t.subject, s.name, t.predicate, t.object, o.name, t.valid_from, t.valid_to,
	t.scope_kind, t.scope_group, t.pinned, coalesce(t.superseded_by, 0), t.origin, t.created`
	tripleNames  = ` JOIN entities s ON s.id = t.subject JOIN entities o ON o.id = t.object`
	tripleSelect = `SELECT ` + tripleCols + ` FROM triples t` + tripleNames
)

// scanTriple reads a row of tripleSelect, plus extra destinations.
func scanTriple(sc scanner, extra ...any) (memory.Triple, error) {
	var t memory.Triple
	var from, to, created int64
	var k int
	dest := append([]any{&t.ID, &t.Subject, &t.SubjectName, &t.Predicate, &t.Object, &t.ObjectName, &from, &to,
		&k, &t.Scope.Group, &t.Pinned, &t.SupersededBy, &t.Origin, &created}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return memory.Triple{}, err
	}
	t.ValidFrom, t.ValidTo, t.Created, t.Scope.Kind = nanosOrZero(from), nanosOrZero(to), fromNanos(created), memory.ScopeKind(k)
	return t, nil
}

// fillSources sets the Sources of triples (ascending event ids).
func fillSources(ctx context.Context, q querier, ts []memory.Triple) error {
	if len(ts) == 0 {
		return nil
	}
	ids := make([]int64, len(ts))
	at := make(map[int64]int, len(ts))
	for i, t := range ts {
		ids[i], at[t.ID] = t.ID, i
	}
	rows, err := q.QueryContext(ctx, `SELECT triple, event FROM triple_sources
		WHERE triple IN (SELECT value FROM json_each(?)) ORDER BY triple, event`, idList(ids))
	if err != nil {
		return fmt.Errorf("sources: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tr, ev int64
		if err := rows.Scan(&tr, &ev); err != nil {
			return fmt.Errorf("sources: %w", err)
		}
		i := at[tr]
		ts[i].Sources = append(ts[i].Sources, ev)
	}
	return rows.Err()
}

// tripleOn reads one triple with its sources through q; ErrNotFound when unknown.
func tripleOn(ctx context.Context, q querier, id int64) (memory.Triple, error) {
	t, err := scanTriple(q.QueryRowContext(ctx, tripleSelect+` WHERE t.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Triple{}, fmt.Errorf("triple %d: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return memory.Triple{}, fmt.Errorf("triple %d: %w", id, err)
	}
	ts := []memory.Triple{t}
	if err := fillSources(ctx, q, ts); err != nil {
		return memory.Triple{}, fmt.Errorf("triple %d: %w", id, err)
	}
	return ts[0], nil
}

// Triples implements [memory.Graph]: in id order after q.After, at most q.Limit (default 100,
// at most 20,000); current triples only unless q.History; Entity as subject or object; Scope
// exactly; Since by creation time; Viewer by [memory.Viewer.CanSee] on the triple's scope.
// Sources are sorted ascending.
func (s *Store) Triples(ctx context.Context, q memory.TripleQuery) ([]memory.Triple, error) {
	limit := clampLimit(q.Limit, defaultTripleLimit, maxTripleLimit)
	where := []string{"t.id > ?"}
	args := []any{q.After}
	if cond, cargs := visibility(q.Viewer, "t."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	if !q.History {
		where = append(where, currentCond)
	}
	if q.Entity != 0 {
		where, args = append(where, "(t.subject = ? OR t.object = ?)"), append(args, q.Entity, q.Entity)
	}
	if q.EndpointUpTo != 0 {
		// The expression of the triples_span index, so the range is an index range.
		where, args = append(where, "max(t.subject, t.object) > ? AND max(t.subject, t.object) <= ?"), append(args, q.EndpointAfter, q.EndpointUpTo)
	}
	if q.Scope != nil {
		cond, cargs := scopeFilter(*q.Scope, "t.")
		where, args = append(where, cond), append(args, cargs...)
	}
	if !q.Since.IsZero() {
		where, args = append(where, "t.created >= ?"), append(args, toNanos(q.Since))
	}
	if q.Scene != "" {
		where = append(where, "EXISTS (SELECT 1 FROM triple_sources ts JOIN events e ON e.id = ts.event WHERE ts.triple = t.id AND e.scene = ?)")
		args = append(args, q.Scene)
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("triples: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil) // the triples and their sources from one snapshot
	if err != nil {
		return nil, fmt.Errorf("triples: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, tripleSelect+` WHERE `+strings.Join(where, " AND ")+` ORDER BY t.id LIMIT ?`,
		append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("triples: %w", err)
	}
	var out []memory.Triple
	for rows.Next() {
		t, err := scanTriple(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("triples: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("triples: %w", err)
	}
	if err := fillSources(ctx, tx, out); err != nil {
		return nil, fmt.Errorf("triples: %w", err)
	}
	return out, nil
}

// SearchTriples implements [memory.Graph]: terms are index tokens (as [memory.TextQuery]'s);
// a triple matches when its "subject predicate object" tokens hold any of them (FTS5, each
// term a quoted phrase, OR-ed). Only current triples v may see are returned, best first by
// FTS5's bm25() (Score = -bm25, higher is better), then by id; limit <= 0 means 100, at most
// 20,000. No terms, no hits.
func (s *Store) SearchTriples(ctx context.Context, terms []string, v memory.Viewer, limit int) ([]memory.TripleHit, error) {
	match := orPhrases(termPhrases(terms))
	if match == "" {
		return nil, nil
	}
	limit = clampLimit(limit, defaultTripleLimit, maxTripleLimit)
	where := []string{"triples_fts MATCH ?", currentCond}
	args := []any{match}
	if cond, cargs := visibility(v, "t."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("search triples: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("search triples: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+tripleCols+`, bm25(triples_fts) FROM triples_fts JOIN triples t ON t.id = triples_fts.rowid`+
		tripleNames+` WHERE `+strings.Join(where, " AND ")+` ORDER BY bm25(triples_fts), t.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("search triples: %w", err)
	}
	var hits []memory.TripleHit
	for rows.Next() {
		var bm25 float64
		t, err := scanTriple(rows, &bm25)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("search triples: %w", err)
		}
		hits = append(hits, memory.TripleHit{Triple: t, Score: -bm25})
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("search triples: %w", err)
	}
	ts := make([]memory.Triple, len(hits))
	for i, h := range hits {
		ts[i] = h.Triple
	}
	if err := fillSources(ctx, tx, ts); err != nil {
		return nil, fmt.Errorf("search triples: %w", err)
	}
	for i := range hits {
		hits[i].Triple = ts[i]
	}
	return hits, nil
}

// ColdEvents implements [memory.Graph]: events in L2, not distilled, with at most q.MaxAccesses
// accesses, neither created nor accessed since q.IdleBefore (required), oldest first (by time,
// then id), at most q.Limit (default 100), with their blocks.
func (s *Store) ColdEvents(ctx context.Context, q memory.ColdQuery) ([]memory.Event, error) {
	if q.IdleBefore.IsZero() {
		return nil, fmt.Errorf("cold events: no IdleBefore: %w", memory.ErrInvalid)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("cold events: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil) // the events and their blocks from one snapshot
	if err != nil {
		return nil, fmt.Errorf("cold events: %w", err)
	}
	defer tx.Rollback()
	evs, err := queryEventsWith(ctx, tx, `SELECT `+eventCols+` FROM events
		WHERE layer = 2 AND distilled = 0 AND accesses <= ? AND max(time, last_access) < ?
		ORDER BY time, id LIMIT ?`, q.MaxAccesses, toNanos(q.IdleBefore), limit)
	if err != nil {
		return nil, fmt.Errorf("cold events: %w", err)
	}
	return evs, nil
}

// CountEntities implements [memory.Graph].
func (s *Store) CountEntities(ctx context.Context, v memory.Viewer, scope *memory.Scope) (int, error) {
	where := []string{"1"}
	var args []any
	if cond, cargs := visibility(v, "e."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	if scope != nil {
		cond, cargs := scopeFilter(*scope, "e.")
		where, args = append(where, cond), append(args, cargs...)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM entities e WHERE `+strings.Join(where, " AND "), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count entities: %w", err)
	}
	return n, nil
}
