package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// The L3 graph (memory.Graph) on the Store: entities, triples with provenance and validity, and
// their full-text index (triples_fts).
//
// Names. Entities are found by [memory.NameKey] of their name and by kind. Stored names are
// trimmed with inner white space collapsed, at most maxNameRunes runes; kinds are lower case,
// "thing" when empty, at most maxKindRunes runes; predicates are [memory.NormalizePredicate]d,
// non-empty, at most maxPredicateRunes runes. Anything else is [memory.ErrInvalid].
//
// Validity. A triple is current while valid_to is 0 and superseded_by is NULL; only current
// triples are in triples_fts (rowid = triple id, tokens = the store tokenizer's lower-cased
// tokens of "subject predicate object"). A new triple whose predicate is
// [memory.SingleValued], or whose fact Replaces, supersedes the subject's current triples with
// the same predicate and another object (valid_to = its ValidFrom, superseded_by = its id),
// pinned ones excepted; but when one of them is newer (a later ValidFrom) the new triple is
// stored already ended by the earliest such one, so out-of-order distillation never overturns
// a newer fact.

// Limits of names and paging.
const (
	maxNameRunes       = 200
	maxKindRunes       = 50
	maxPredicateRunes  = 100
	defaultEntityLimit = 100
	maxEntityLimit     = 10_000
	defaultTripleLimit = 100
	maxTripleLimit     = 20_000
	kindThing          = "thing"
)

// Origins of graph rows.
const (
	originLLM    = "llm"
	originRules  = "rules"
	originOwner  = "owner"
	originImport = "import"
)

// currentCond is the SQL condition of a current triple (alias t).
const currentCond = `t.valid_to = 0 AND t.superseded_by IS NULL`

// normName returns the stored form of an entity name and its key.
func normName(name string) (string, string, error) {
	n := strings.Join(strings.Fields(name), " ")
	if n == "" {
		return "", "", fmt.Errorf("empty entity name: %w", memory.ErrInvalid)
	}
	if utf8.RuneCountInString(n) > maxNameRunes {
		return "", "", fmt.Errorf("entity name %.40q… is longer than %d characters: %w", n, maxNameRunes, memory.ErrInvalid)
	}
	return n, memory.NameKey(n), nil
}

// normKind returns the stored form of an entity kind ("thing" when empty).
func normKind(kind string) (string, error) {
	k := memory.NameKey(kind)
	if k == "" {
		return kindThing, nil
	}
	if utf8.RuneCountInString(k) > maxKindRunes {
		return "", fmt.Errorf("entity kind %.40q… is longer than %d characters: %w", k, maxKindRunes, memory.ErrInvalid)
	}
	return k, nil
}

// normPredicate returns the stored form of a predicate.
func normPredicate(p string) (string, error) {
	n := memory.NormalizePredicate(p)
	if n == "" {
		return "", fmt.Errorf("empty predicate: %w", memory.ErrInvalid)
	}
	if utf8.RuneCountInString(n) > maxPredicateRunes {
		return "", fmt.Errorf("predicate %.40q… is longer than %d characters: %w", n, maxPredicateRunes, memory.ErrInvalid)
	}
	return n, nil
}

// normFact is a fact with its names, kinds and predicate in stored form.
type normFact struct {
	subject, subjectKind, predicate, object, objectKind string
}

func normalizeFact(f memory.Fact) (normFact, error) {
	var n normFact
	var err error
	if n.subject, _, err = normName(f.Subject); err != nil {
		return n, fmt.Errorf("subject: %w", err)
	}
	if n.object, _, err = normName(f.Object); err != nil {
		return n, fmt.Errorf("object: %w", err)
	}
	if n.subjectKind, err = normKind(f.SubjectKind); err != nil {
		return n, fmt.Errorf("subject: %w", err)
	}
	if n.objectKind, err = normKind(f.ObjectKind); err != nil {
		return n, fmt.Errorf("object: %w", err)
	}
	if n.predicate, err = normPredicate(f.Predicate); err != nil {
		return n, err
	}
	return n, nil
}

// nanosOrZero converts a stored time where 0 means "none" (the zero time.Time).
func nanosOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return fromNanos(n)
}

// gtx is one graph write transaction and what its commit must bring up to date.
type gtx struct {
	*sql.Tx
	s   *Store
	now time.Time
	// sessions whose cached History tails must go (their events or blocks changed).
	sessions map[string]bool
	// Index statistics to subtract (events left the full-text index) and whether the
	// document-frequency cache must be reset.
	docs     int
	terms    float64
	dfsReset bool
}

// graphWrite runs fn in one write transaction, with cacheMu held (graph writes change events
// and the blocks their cached tails reference), commits it and then brings the caches and
// index statistics up to date. Errors are prefixed with what.
func (s *Store) graphWrite(ctx context.Context, what string, now time.Time, fn func(g *gtx) error) error {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", what, err)
	}
	defer tx.Rollback()
	g := &gtx{Tx: tx, s: s, now: now, sessions: make(map[string]bool)}
	if err := fn(g); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", what, err)
	}
	if len(g.sessions) > 0 {
		sessions := make([]string, 0, len(g.sessions))
		for id := range g.sessions {
			sessions = append(sessions, id)
		}
		s.invalidateSessions(sessions...)
	}
	if g.docs != 0 || g.terms != 0 {
		s.stats.add(-g.docs, -g.terms)
	}
	if g.dfsReset {
		s.dfs.reset()
		s.epDFs.reset() // events left episodes too (episodes_event_delete)
	}
	s.ckpt.committed()
	return nil
}

// blockSessions marks the sessions of the events that reference the blocks held by entities
// (their cached tails carry those blocks' holders).
func (g *gtx) blockSessions(ctx context.Context, entities ...int64) error {
	rows, err := g.QueryContext(ctx, `SELECT DISTINCT e.session FROM blocks b
		JOIN event_blocks eb ON eb.block = b.id JOIN events e ON e.id = eb.event
		WHERE b.holder_entity IN (SELECT value FROM json_each(?))`, idList(entities))
	if err != nil {
		return fmt.Errorf("sessions of blocks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("sessions of blocks: %w", err)
		}
		g.sessions[id] = true
	}
	return rows.Err()
}

// entityRef is what entity resolution needs of a stored entity.
type entityRef struct {
	id     int64
	kind   string
	scope  memory.Scope
	origin string
}

// derived reports whether an entity's origin is distillation (its scope follows its events).
func derived(origin string) bool { return origin == originLLM || origin == originRules }

// resolveEntity finds the entity named name of kind kind, or creates it (scope sc, origin
// origin) and reports whether it did. Lookup: the same name key and kind; else the single entity
// with that name key where either kind is "thing" (a "thing" is upgraded to the specific kind);
// else a new entity. With narrow, an entity that came from distillation (origin llm or rules)
// narrows its scope to sc (it then comes from events of scope sc too); owner-made and imported
// entities keep the owner's scope.
func (g *gtx) resolveEntity(ctx context.Context, name, kind string, sc memory.Scope, origin string, narrow bool) (int64, bool, error) {
	name, key, err := normName(name)
	if err != nil {
		return 0, false, err
	}
	if kind, err = normKind(kind); err != nil {
		return 0, false, err
	}
	rows, err := g.QueryContext(ctx, `SELECT id, kind, scope_kind, scope_group, origin FROM entities
		WHERE name_key = ?1 AND (kind = ?2 OR kind = 'thing' OR ?2 = 'thing') ORDER BY id`, key, kind)
	if err != nil {
		return 0, false, fmt.Errorf("find entity %q: %w", name, err)
	}
	var found []entityRef
	for rows.Next() {
		var r entityRef
		var sk int
		if err := rows.Scan(&r.id, &r.kind, &sk, &r.scope.Group, &r.origin); err != nil {
			rows.Close()
			return 0, false, fmt.Errorf("find entity %q: %w", name, err)
		}
		r.scope.Kind = memory.ScopeKind(sk)
		found = append(found, r)
	}
	if err := rows.Close(); err != nil {
		return 0, false, fmt.Errorf("find entity %q: %w", name, err)
	}
	var hit *entityRef
	for i := range found {
		if found[i].kind == kind {
			hit = &found[i]
		}
	}
	if hit == nil && len(found) == 1 {
		hit = &found[0]
	}
	if hit == nil {
		res, err := g.ExecContext(ctx, `INSERT INTO entities (name, name_key, kind, scope_kind, scope_group, origin, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, name, key, kind, int(sc.Kind), sc.Group, origin, toNanos(g.now), toNanos(g.now))
		if err != nil {
			return 0, false, fmt.Errorf("create entity %q: %w", name, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return 0, false, fmt.Errorf("create entity %q: %w", name, err)
		}
		return id, true, nil
	}
	newKind, newScope := hit.kind, hit.scope
	if hit.kind == kindThing && kind != kindThing {
		newKind = kind
	}
	if narrow && derived(hit.origin) {
		newScope = memory.Narrowest(hit.scope, sc)
	}
	if newKind != hit.kind || newScope != hit.scope {
		if _, err := g.ExecContext(ctx, `UPDATE entities SET kind = ?, scope_kind = ?, scope_group = ?, updated = ? WHERE id = ?`,
			newKind, int(newScope.Kind), newScope.Group, toNanos(g.now), hit.id); err != nil {
			return 0, false, fmt.Errorf("update entity %d: %w", hit.id, err)
		}
	}
	return hit.id, false, nil
}

// tripleTokens is the full-text form of a triple: the store tokenizer's tokens of
// "subject predicate object", lower case, space-joined.
func (s *Store) tripleTokens(subject, predicate, object string) (string, error) {
	toks, err := s.tok(subject + " " + predicate + " " + object)
	if err != nil {
		return "", fmt.Errorf("tokenize triple: %w", err)
	}
	var b strings.Builder
	for _, t := range toks {
		for _, f := range strings.Fields(strings.ToLower(t)) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f)
		}
	}
	return b.String(), nil
}

// indexTriple (re)writes the full-text row of a current triple.
func (g *gtx) indexTriple(ctx context.Context, id int64) error {
	var subj, pred, obj string
	if err := g.QueryRowContext(ctx, `SELECT s.name, t.predicate, o.name FROM triples t
		JOIN entities s ON s.id = t.subject JOIN entities o ON o.id = t.object WHERE t.id = ?`, id).Scan(&subj, &pred, &obj); err != nil {
		return fmt.Errorf("index triple %d: %w", id, err)
	}
	toks, err := g.s.tripleTokens(subj, pred, obj)
	if err != nil {
		return fmt.Errorf("index triple %d: %w", id, err)
	}
	if _, err := g.ExecContext(ctx, `DELETE FROM triples_fts WHERE rowid = ?`, id); err != nil {
		return fmt.Errorf("index triple %d: %w", id, err)
	}
	if _, err := g.ExecContext(ctx, `INSERT INTO triples_fts (rowid, tokens) VALUES (?, ?)`, id, toks); err != nil {
		return fmt.Errorf("index triple %d: %w", id, err)
	}
	return nil
}

// reindexEntityTriples rewrites the full-text rows of the current triples of entities (after a
// rename or a merge).
func (g *gtx) reindexEntityTriples(ctx context.Context, entities ...int64) error {
	ids, err := g.int64s(ctx, `SELECT t.id FROM triples t WHERE (t.subject IN (SELECT value FROM json_each(?1))
		OR t.object IN (SELECT value FROM json_each(?1))) AND `+currentCond+` ORDER BY t.id`, idList(entities))
	if err != nil {
		return fmt.Errorf("re-index triples: %w", err)
	}
	for _, id := range ids {
		if err := g.indexTriple(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// int64s runs a query returning one integer column.
func (g *gtx) int64s(ctx context.Context, query string, args ...any) ([]int64, error) {
	return queryInt64s(ctx, g.Tx, query, args...)
}

func queryInt64s(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// newTriple is a triple to store.
type newTriple struct {
	subject, object int64
	predicate       string
	validFrom       time.Time
	scope           memory.Scope
	pinned          bool
	origin          string
	sources         []int64
	// supersede: the predicate is single-valued or the fact Replaces.
	supersede bool
	// skip is a triple left out of superseding (the one EditTriple replaces itself).
	skip int64
}

// insertTriple stores t with its sources and, when t.supersede, supersedes the subject's other
// current triples with the same predicate (pinned ones excepted) or, when one of them is newer,
// stores t already ended by it (see ApplyDistillation). It returns the new id and
// the number of triples superseded.
func (g *gtx) insertTriple(ctx context.Context, t newTriple) (int64, int, error) {
	type other struct {
		id     int64
		from   int64
		pinned bool
	}
	var others []other
	if t.supersede {
		rows, err := g.QueryContext(ctx, `SELECT t.id, t.valid_from, t.pinned FROM triples t
			WHERE t.subject = ? AND t.predicate = ? AND t.object != ? AND t.id != ? AND `+currentCond+` ORDER BY t.id`,
			t.subject, t.predicate, t.object, t.skip)
		if err != nil {
			return 0, 0, fmt.Errorf("find superseded triples: %w", err)
		}
		for rows.Next() {
			var o other
			if err := rows.Scan(&o.id, &o.from, &o.pinned); err != nil {
				rows.Close()
				return 0, 0, fmt.Errorf("find superseded triples: %w", err)
			}
			others = append(others, o)
		}
		if err := rows.Close(); err != nil {
			return 0, 0, fmt.Errorf("find superseded triples: %w", err)
		}
	}
	from := toNanos(t.validFrom)
	var endedBy *other // the earliest newer current triple: t is older than it
	for i := range others {
		if o := &others[i]; o.from > from && (endedBy == nil || o.from < endedBy.from) {
			endedBy = o
		}
	}
	var validTo int64
	var supBy sql.NullInt64
	if endedBy != nil {
		validTo, supBy = endedBy.from, sql.NullInt64{Int64: endedBy.id, Valid: true}
	}
	res, err := g.ExecContext(ctx, `INSERT INTO triples (subject, predicate, object, valid_from, valid_to, scope_kind,
		scope_group, pinned, superseded_by, origin, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.subject, t.predicate, t.object, from, validTo, int(t.scope.Kind), t.scope.Group, t.pinned, supBy,
		t.origin, toNanos(g.now))
	if err != nil {
		return 0, 0, fmt.Errorf("insert triple: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, 0, fmt.Errorf("insert triple: %w", err)
	}
	if err := g.addSources(ctx, id, t.sources); err != nil {
		return 0, 0, err
	}
	if endedBy != nil {
		return id, 0, nil
	}
	if err := g.indexTriple(ctx, id); err != nil {
		return 0, 0, err
	}
	n := 0
	for _, o := range others {
		if o.pinned {
			continue
		}
		if err := g.supersede(ctx, o.id, id, t.validFrom); err != nil {
			return 0, 0, err
		}
		n++
	}
	return id, n, nil
}

// endTriples ends (valid_to = at) the current, unpinned triples subject —predicate→ object of a
// negated fact, whatever the entities' kinds; it creates nothing.
func (g *gtx) endTriples(ctx context.Context, n normFact, at time.Time, res *memory.DistillResult) error {
	_, skey, err := normName(n.subject)
	if err != nil {
		return err
	}
	_, okey, err := normName(n.object)
	if err != nil {
		return err
	}
	rows, err := g.QueryContext(ctx, `SELECT t.id FROM triples t
		JOIN entities s ON s.id = t.subject JOIN entities o ON o.id = t.object
		WHERE s.name_key = ? AND o.name_key = ? AND t.predicate = ? AND t.pinned = 0 AND `+currentCond,
		skey, okey, n.predicate)
	if err != nil {
		return fmt.Errorf("find ended triples: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("find ended triples: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("find ended triples: %w", err)
	}
	for _, id := range ids {
		if _, err := g.ExecContext(ctx, `UPDATE triples SET valid_to = ? WHERE id = ?`, toNanos(at), id); err != nil {
			return fmt.Errorf("end triple %d: %w", id, err)
		}
		if _, err := g.ExecContext(ctx, `DELETE FROM triples_fts WHERE rowid = ?`, id); err != nil {
			return fmt.Errorf("end triple %d: %w", id, err)
		}
		res.Superseded++
	}
	return nil
}

// supersede ends triple old at time at, superseded by triple by, and drops it from the index.
func (g *gtx) supersede(ctx context.Context, old, by int64, at time.Time) error {
	if _, err := g.ExecContext(ctx, `UPDATE triples SET valid_to = ?, superseded_by = ? WHERE id = ?`,
		toNanos(at), by, old); err != nil {
		return fmt.Errorf("supersede triple %d: %w", old, err)
	}
	if _, err := g.ExecContext(ctx, `DELETE FROM triples_fts WHERE rowid = ?`, old); err != nil {
		return fmt.Errorf("supersede triple %d: %w", old, err)
	}
	return nil
}

// addSources records events as sources of a triple (already recorded ones are kept).
func (g *gtx) addSources(ctx context.Context, triple int64, events []int64) error {
	if len(events) == 0 {
		return nil
	}
	if _, err := g.ExecContext(ctx, `INSERT OR IGNORE INTO triple_sources (triple, event)
		SELECT ?, value FROM json_each(?)`, triple, idList(events)); err != nil {
		return fmt.Errorf("sources of triple %d: %w", triple, err)
	}
	return nil
}

// currentTriple returns the id and scope of the current triple subject —predicate→ object
// (id 0 when there is none).
func (g *gtx) currentTriple(ctx context.Context, subject int64, predicate string, object int64) (int64, memory.Scope, error) {
	var id int64
	var sk int
	var sc memory.Scope
	err := g.QueryRowContext(ctx, `SELECT t.id, t.scope_kind, t.scope_group FROM triples t
		WHERE t.subject = ? AND t.predicate = ? AND t.object = ? AND `+currentCond+` ORDER BY t.id LIMIT 1`,
		subject, predicate, object).Scan(&id, &sk, &sc.Group)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, memory.Scope{}, nil
	}
	if err != nil {
		return 0, memory.Scope{}, fmt.Errorf("find triple: %w", err)
	}
	sc.Kind = memory.ScopeKind(sk)
	return id, sc, nil
}

// setTripleScope stores a triple's scope.
func (g *gtx) setTripleScope(ctx context.Context, id int64, sc memory.Scope) error {
	if _, err := g.ExecContext(ctx, `UPDATE triples SET scope_kind = ?, scope_group = ? WHERE id = ?`,
		int(sc.Kind), sc.Group, id); err != nil {
		return fmt.Errorf("scope of triple %d: %w", id, err)
	}
	return nil
}

// sourceScope is the narrowest scope of a triple's remaining source events (ok false when it
// has none).
func (g *gtx) sourceScope(ctx context.Context, triple int64) (memory.Scope, bool, error) {
	rows, err := g.QueryContext(ctx, `SELECT DISTINCT e.scope_kind, e.scope_group FROM triple_sources ts
		JOIN events e ON e.id = ts.event WHERE ts.triple = ?`, triple)
	if err != nil {
		return memory.Scope{}, false, fmt.Errorf("scope of triple %d: %w", triple, err)
	}
	defer rows.Close()
	var sc memory.Scope
	ok := false
	for rows.Next() {
		var s memory.Scope
		var k int
		if err := rows.Scan(&k, &s.Group); err != nil {
			return memory.Scope{}, false, fmt.Errorf("scope of triple %d: %w", triple, err)
		}
		s.Kind = memory.ScopeKind(k)
		if !ok {
			sc, ok = s, true
		} else {
			sc = memory.Narrowest(sc, s)
		}
	}
	return sc, ok, rows.Err()
}

var _ memory.Graph = (*Store)(nil)
