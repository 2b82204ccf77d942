package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
)

// Restoring a backup into an empty store: rows written in one transaction, indexes rebuilt and
// references checked before the commit (dump.go reads a snapshot).

// BeginRestore implements [backup.Sink]: it opens the write transaction a restore runs in, with
// foreign keys checked at commit (records may reference later ones), and refuses, wrapping
// [backup.ErrNotEmpty], a store that holds events, entities, triples or blocks. Writers wait
// for the restore to commit or roll back.
func (s *Store) BeginRestore(ctx context.Context) (backup.Restorer, error) {
	s.cacheMu.Lock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		s.cacheMu.Unlock()
		return nil, fmt.Errorf("restore: begin: %w", err)
	}
	rs := &restorer{s: s, ctx: ctx, tx: tx, sessions: map[string]bool{}}
	var events, entities, triples, blocks int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM entities),
		(SELECT count(*) FROM triples), (SELECT count(*) FROM blocks)`).Scan(&events, &entities, &triples, &blocks); err != nil {
		rs.Rollback()
		return nil, fmt.Errorf("restore: %w", err)
	}
	if events+entities+triples+blocks > 0 {
		rs.Rollback()
		return nil, fmt.Errorf("%w, and this one holds %d events, %d entities, %d triples and %d blocks "+
			"(restore into a new data directory): %s", backup.ErrNotEmpty, events, entities, triples, blocks, s.path)
	}
	if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		rs.Rollback()
		return nil, fmt.Errorf("restore: %w", err)
	}
	for _, st := range []struct {
		p   **sql.Stmt
		sql string
	}{
		{&rs.session, `INSERT INTO sessions (id, title, system_prompt, model, created, updated, channel, partner, scope_kind, scope_group)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET title = excluded.title, system_prompt = excluded.system_prompt,
				model = excluded.model, created = excluded.created, updated = excluded.updated, channel = excluded.channel,
				partner = excluded.partner, scope_kind = excluded.scope_kind, scope_group = excluded.scope_group`},
		{&rs.event, `INSERT INTO events (id, session, turn_id, time, role, content, reasoning, tool_calls, tool_call_id,
			tool_name, tool_status, channel, partner, scene, scope_kind, scope_group, tokens, meta, layer, accesses,
			last_access, distilled, parent, off_branch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&rs.fts, `INSERT INTO events_fts (rowid, tokens, expansion) VALUES (?, ?, ?)`},
		{&rs.ref, `INSERT INTO event_blocks (event, block, pos) VALUES (?, ?, ?)`},
		{&rs.block, `INSERT INTO blocks (id, kind, name, mime, text, data, size, scope_kind, scope_group, holder_layer,
			holder_event, holder_entity, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&rs.entity, `INSERT INTO entities (id, name, name_key, kind, block_id, scope_kind, scope_group, pinned, origin,
			created, updated, last_recalled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&rs.triple, `INSERT INTO triples (id, subject, predicate, object, valid_from, valid_to, scope_kind, scope_group,
			pinned, superseded_by, origin, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&rs.source, `INSERT INTO triple_sources (triple, event) VALUES (?, ?)`},
	} {
		if *st.p, err = tx.PrepareContext(ctx, st.sql); err != nil {
			rs.Rollback()
			return nil, fmt.Errorf("restore: prepare: %w", err)
		}
	}
	return rs, nil
}

// restorer is one restore transaction. It holds s.cacheMu from BeginRestore to Commit or
// Rollback, so no other cached-event write interleaves.
type restorer struct {
	s   *Store
	ctx context.Context
	tx  *sql.Tx

	session, event, fts, ref, block, entity, triple, source *sql.Stmt

	sessions map[string]bool // sessions whose cached tails the restore makes stale
	branched bool            // some event came with a parent or off its branch (a backup from schema 6 on)
	deferred []int64         // events with blocks, indexed at Commit (their blocks' text counts)
	done     bool
}

func (rs *restorer) Session(sess memory.Session) error {
	if err := memory.ValidateSession(sess); err != nil {
		return err
	}
	if err := sess.Scope.Validate(); err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	if _, err := rs.session.ExecContext(rs.ctx, sess.ID, sess.Title, sess.SystemPrompt, sess.Model,
		toNanos(sess.Created), toNanos(sess.Updated), sess.Channel, sess.Partner, int(sess.Scope.Kind), sess.Scope.Group); err != nil {
		return err
	}
	rs.sessions[sess.ID] = true
	return nil
}

// Event stores e as AppendEvents would, with its id, and indexes it the same way: its indexed
// text's tokens, its blocks' text tokens after them, and the expansion. An event with blocks is
// indexed at Commit, when the blocks are there.
func (rs *restorer) Event(e memory.Event) error {
	if err := memory.ValidateEvent(e); err != nil {
		return err
	}
	if !e.Layer.Valid() {
		return fmt.Errorf("layer %d is not L1 or L2: %w", int(e.Layer), memory.ErrInvalid)
	}
	if e.ID <= 0 || e.Time.IsZero() {
		return fmt.Errorf("event needs a positive id and a time: %w", memory.ErrInvalid)
	}
	var calls, meta sql.NullString
	if len(e.ToolCalls) > 0 {
		b, err := json.Marshal(e.ToolCalls)
		if err != nil {
			return fmt.Errorf("tool calls: %w", err)
		}
		calls = sql.NullString{String: string(b), Valid: true}
	}
	if len(e.Meta) > 0 {
		b, err := json.Marshal(e.Meta)
		if err != nil {
			return fmt.Errorf("meta: %w", err)
		}
		meta = sql.NullString{String: string(b), Valid: true}
	}
	if _, err := rs.event.ExecContext(rs.ctx, e.ID, e.Session, e.TurnID, toNanos(e.Time), string(e.Role), e.Content,
		e.Reasoning, calls, e.ToolCallID, e.ToolName, e.ToolStatus, e.Channel, e.Partner, e.Scene, int(e.Scope.Kind),
		e.Scope.Group, e.Tokens, meta, int(e.Layer), e.Accesses, lastAccessNanos(e.LastAccess), e.Distilled,
		e.Parent, e.OffBranch); err != nil {
		return err
	}
	if e.Parent != 0 || e.OffBranch {
		rs.branched = true
	}
	rs.sessions[e.Session] = true
	for pos, b := range e.Blocks {
		if _, err := rs.ref.ExecContext(rs.ctx, e.ID, b.ID, pos); err != nil {
			return fmt.Errorf("block %d (%q): %w", pos, b.ID, err)
		}
	}
	if len(e.Blocks) > 0 {
		rs.deferred = append(rs.deferred, e.ID)
		return nil
	}
	return rs.index(e)
}

// index writes an event's full-text row as AppendEvents does; e.Blocks carry the texts of the
// blocks it brought.
func (rs *restorer) index(e memory.Event) error {
	toks, err := memory.IndexTokens(rs.s.tok, e)
	if err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	if toks, err = rs.s.blockTokens(toks, e.Blocks); err != nil {
		return fmt.Errorf("tokenize blocks: %w", err)
	}
	if _, err := rs.fts.ExecContext(rs.ctx, e.ID, toks, rs.s.expansion(e)); err != nil {
		return fmt.Errorf("full-text index: %w", err)
	}
	return nil
}

func (rs *restorer) Block(b memory.Block) error {
	if err := b.Scope.Validate(); err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	var event, entity sql.NullInt64
	switch {
	case b.Holder.Layer.Valid() && b.Holder.Event > 0 && b.Holder.Entity == 0:
		event = sql.NullInt64{Int64: b.Holder.Event, Valid: true}
	case b.Holder.Layer == memory.LayerL3 && b.Holder.Entity > 0 && b.Holder.Event == 0:
		entity = sql.NullInt64{Int64: b.Holder.Entity, Valid: true}
	default:
		return fmt.Errorf("holder %+v: want layer 1 or 2 with an event, or layer 3 with an entity: %w", b.Holder, memory.ErrInvalid)
	}
	var data []byte
	if len(b.Data) > 0 {
		data = b.Data
	}
	_, err := rs.block.ExecContext(rs.ctx, b.ID, string(b.Kind), b.Name, b.MIME, b.Text, data, b.Size,
		int(b.Scope.Kind), b.Scope.Group, int(b.Holder.Layer), event, entity, toNanos(b.Created))
	return err
}

func (rs *restorer) Entity(e memory.Entity) error {
	if err := e.Scope.Validate(); err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	var block sql.NullString
	if e.BlockID != "" {
		block = sql.NullString{String: e.BlockID, Valid: true}
	}
	_, err := rs.entity.ExecContext(rs.ctx, e.ID, e.Name, memory.NameKey(e.Name), e.Kind, block, int(e.Scope.Kind),
		e.Scope.Group, e.Pinned, e.Origin, toNanos(e.Created), toNanos(e.Updated), setZero(e.LastRecalled))
	return err
}

func (rs *restorer) Triple(t memory.Triple) error {
	if err := t.Scope.Validate(); err != nil {
		return fmt.Errorf("scope: %w", err)
	}
	var by sql.NullInt64
	if t.SupersededBy != 0 {
		by = sql.NullInt64{Int64: t.SupersededBy, Valid: true}
	}
	if _, err := rs.triple.ExecContext(rs.ctx, t.ID, t.Subject, t.Predicate, t.Object, setZero(t.ValidFrom),
		setZero(t.ValidTo), int(t.Scope.Kind), t.Scope.Group, t.Pinned, by, t.Origin, toNanos(t.Created)); err != nil {
		return err
	}
	for _, ev := range t.Sources {
		if _, err := rs.source.ExecContext(rs.ctx, t.ID, ev); err != nil {
			return fmt.Errorf("source event %d: %w", ev, err)
		}
	}
	return nil
}

// Scene stores a scene with its id, replacing a stored scene with the same id or key (declared
// scenes exist before any event does).
func (rs *restorer) Scene(sc memory.Scene) error {
	if err := checkScene(sc); err != nil {
		return err
	}
	features := []byte("{}")
	if len(sc.Features) > 0 {
		var err error
		if features, err = json.Marshal(sc.Features); err != nil {
			return fmt.Errorf("features: %w", err)
		}
	}
	if _, err := rs.tx.ExecContext(rs.ctx, `DELETE FROM scenes WHERE id = ? OR key = ?`, sc.ID, sc.Key); err != nil {
		return err
	}
	_, err := rs.tx.ExecContext(rs.ctx, `INSERT INTO scenes (id, key, declared, features, strength, occurrences, seen, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sc.ID, sc.Key, sc.Declared, string(features), sc.Strength, sc.Occurrences,
		toNanos(sc.Seen), toNanos(sc.Created))
	return err
}

func (rs *restorer) Setting(key, value string) error {
	_, err := rs.tx.ExecContext(rs.ctx, `INSERT INTO settings (key, value, updated) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated`, key, value, toNanos(rs.s.now()))
	return err
}

// Commit checks every reference (an error names the first broken record), indexes the events
// that brought blocks and the current triples, commits, and brings the store's caches and index
// statistics up to date.
func (rs *restorer) Commit() error {
	if rs.done {
		return errors.New("restore: already finished")
	}
	if err := rs.checkReferences(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := restoreBranches(rs.ctx, rs.tx, rs.branched); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := rs.indexDeferred(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := rebuildEpisodes(rs.ctx, rs.tx); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := rs.indexTriples(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := rs.tx.Commit(); err != nil {
		return fmt.Errorf("restore: commit: %w", err)
	}
	rs.done = true
	defer rs.s.cacheMu.Unlock()
	rs.closeStmts()
	s := rs.s
	s.dfs.reset()
	s.epDFs.reset()
	s.docs.reset() // the restored events may reuse the ids of events deleted before
	sessions := make([]string, 0, len(rs.sessions))
	for id := range rs.sessions {
		sessions = append(sessions, id)
	}
	s.invalidateSessions(sessions...)
	if rs.branched {
		s.branched.Store(true)
	}
	s.stats.mu.Lock()
	s.stats.docs, s.stats.terms = 0, 0
	s.stats.mu.Unlock()
	if err := s.loadStats(context.WithoutCancel(rs.ctx)); err != nil {
		return fmt.Errorf("restore: committed, but: %w", err)
	}
	s.ckpt.committed()
	return nil
}

// Rollback implements [backup.Restorer].
func (rs *restorer) Rollback() error {
	if rs.done {
		return nil
	}
	rs.done = true
	defer rs.s.cacheMu.Unlock()
	rs.closeStmts()
	if err := rs.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("restore: rollback: %w", err)
	}
	return nil
}

func (rs *restorer) closeStmts() {
	for _, st := range []*sql.Stmt{rs.session, rs.event, rs.fts, rs.ref, rs.block, rs.entity, rs.triple, rs.source} {
		if st != nil {
			st.Close()
		}
	}
}

// indexDeferred indexes the events that brought blocks, with their blocks' texts in order.
func (rs *restorer) indexDeferred() error {
	for len(rs.deferred) > 0 {
		batch := rs.deferred[:min(len(rs.deferred), 500)]
		rs.deferred = rs.deferred[len(batch):]
		rows, err := rs.tx.QueryContext(rs.ctx, `SELECT `+prefixCols("e.")+`,
			(SELECT json_group_array(b.text ORDER BY eb.pos) FROM event_blocks eb JOIN blocks b ON b.id = eb.block WHERE eb.event = e.id),
			(SELECT count(*) FROM event_blocks eb WHERE eb.event = e.id)
			FROM events e WHERE e.id IN (SELECT value FROM json_each(?)) ORDER BY e.id`, idList(batch))
		if err != nil {
			return fmt.Errorf("index events: %w", err)
		}
		var evs []memory.Event
		for rows.Next() {
			var texts string
			var refs int
			e, err := scanEvent(hitScanner{rows, []any{&texts, &refs}})
			if err != nil {
				rows.Close()
				return fmt.Errorf("index events: %w", err)
			}
			var ts []string
			if err := json.Unmarshal([]byte(texts), &ts); err != nil {
				rows.Close()
				return fmt.Errorf("index events: event %d: %w", e.ID, err)
			}
			if len(ts) != refs {
				rows.Close()
				return fmt.Errorf("events id %d: it brought %d blocks, and %d of them are not in the backup", e.ID, refs, refs-len(ts))
			}
			for _, t := range ts {
				e.Blocks = append(e.Blocks, memory.Block{Text: t})
			}
			evs = append(evs, e)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("index events: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("index events: %w", err)
		}
		for _, e := range evs {
			if err := rs.index(e); err != nil {
				return fmt.Errorf("events id %d: %w", e.ID, err)
			}
		}
	}
	return nil
}

// checkReferences finds the first broken reference and names its record; the deferred foreign
// keys would fail the commit anyway, without saying where.
func (rs *restorer) checkReferences() error {
	checks := []struct{ query, msg string }{
		{`SELECT e.id, e.session FROM events e WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session) LIMIT 1`,
			"events id %s: session %q is not in the backup"},
		{`SELECT eb.event, eb.block FROM event_blocks eb WHERE NOT EXISTS (SELECT 1 FROM blocks b WHERE b.id = eb.block) LIMIT 1`,
			"events id %s: block %q is not in the backup"},
		{`SELECT b.id, b.holder_event FROM blocks b WHERE b.holder_event IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = b.holder_event) LIMIT 1`,
			"blocks id %s: holder event %s is not in the backup"},
		{`SELECT b.id, b.holder_entity FROM blocks b WHERE b.holder_entity IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = b.holder_entity) LIMIT 1`,
			"blocks id %s: holder entity %s is not in the backup"},
		{`SELECT e.id, e.block_id FROM entities e WHERE e.block_id IS NOT NULL AND NOT EXISTS
			(SELECT 1 FROM blocks b WHERE b.id = e.block_id AND b.holder_entity = e.id) LIMIT 1`,
			"entities id %s: text block %q is not in the backup, or not held by the entity"},
		{`SELECT t.id, t.subject FROM triples t WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = t.subject) LIMIT 1`,
			"triples id %s: subject entity %s is not in the backup"},
		{`SELECT t.id, t.object FROM triples t WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = t.object) LIMIT 1`,
			"triples id %s: object entity %s is not in the backup"},
		{`SELECT t.id, t.superseded_by FROM triples t WHERE t.superseded_by IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM triples n WHERE n.id = t.superseded_by) LIMIT 1`,
			"triples id %s: superseding triple %s is not in the backup"},
		{`SELECT ts.triple, ts.event FROM triple_sources ts WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = ts.event) LIMIT 1`,
			"triples id %s: source event %s is not in the backup"},
	}
	for _, c := range checks {
		var a, b string
		err := rs.tx.QueryRowContext(rs.ctx, c.query).Scan(&a, &b)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("check references: %w", err)
		}
		return fmt.Errorf(c.msg, a, b)
	}
	// Anything the checks above do not know (a later migration's keys).
	var table, parent string
	var rowid sql.NullInt64
	var fk int
	err := rs.tx.QueryRowContext(rs.ctx, `SELECT "table", rowid, parent, fkid FROM pragma_foreign_key_check`).Scan(&table, &rowid, &parent, &fk)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check references: %w", err)
	}
	return fmt.Errorf("%s row %d refers to a missing %s row", table, rowid.Int64, parent)
}

// indexTriples writes the full-text rows of the current triples, as the graph writes them.
func (rs *restorer) indexTriples() error {
	ids, err := queryInt64s(rs.ctx, rs.tx, `SELECT t.id FROM triples t WHERE `+currentCond+` ORDER BY t.id`)
	if err != nil {
		return fmt.Errorf("index triples: %w", err)
	}
	g := &gtx{Tx: rs.tx, s: rs.s, now: rs.s.now(), sessions: map[string]bool{}}
	for _, id := range ids {
		if err := g.indexTriple(rs.ctx, id); err != nil {
			return fmt.Errorf("triples id %d: %w", id, err)
		}
	}
	return nil
}
