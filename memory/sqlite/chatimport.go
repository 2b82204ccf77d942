package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
)

// ImportConversation implements [backup.ChatSink]: the session (created when missing) and the
// events it does not hold yet, by their Meta[backup.MetaImportID], in one write transaction.
// Events are tokenized before it begins, as AppendEvents does; the ids already stored are read
// once before (to tokenize only new events) and again inside the transaction (a concurrent
// import of the same conversation adds nothing twice).
func (s *Store) ImportConversation(ctx context.Context, sess memory.Session, evs []memory.Event) ([]memory.Event, bool, error) {
	if err := memory.ValidateSession(sess); err != nil {
		return nil, false, fmt.Errorf("import conversation: %w", err)
	}
	if err := sess.Scope.Validate(); err != nil {
		return nil, false, fmt.Errorf("import conversation %q: scope: %w", sess.ID, err)
	}
	for i, e := range evs {
		if e.Session != sess.ID {
			return nil, false, fmt.Errorf("import conversation %q: event %d belongs to session %q: %w", sess.ID, i, e.Session, memory.ErrInvalid)
		}
		if e.Meta[backup.MetaImportID] == "" {
			return nil, false, fmt.Errorf("import conversation %q: event %d has no %s: %w", sess.ID, i, backup.MetaImportID, memory.ErrInvalid)
		}
	}
	have, err := importedIDs(ctx, s.r, sess.ID)
	if err != nil {
		return nil, false, fmt.Errorf("import conversation %q: %w", sess.ID, err)
	}
	fresh := newImports(evs, have)
	var b *appendBatch
	if len(fresh) > 0 {
		if b, err = s.prepareAppend(fresh); err != nil {
			return nil, false, fmt.Errorf("import conversation %q: %w", sess.ID, err)
		}
	}

	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("import conversation %q: begin: %w", sess.ID, err)
	}
	defer tx.Rollback()
	var channel string
	created := false
	switch err := tx.QueryRowContext(ctx, `SELECT channel FROM sessions WHERE id = ?`, sess.ID).Scan(&channel); {
	case errors.Is(err, sql.ErrNoRows):
		now := s.now()
		if sess.Created.IsZero() {
			sess.Created = now
		}
		if sess.Updated.IsZero() {
			sess.Updated = sess.Created
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, title, system_prompt, model, created, updated, channel, partner, scope_kind, scope_group)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sess.ID, sess.Title, sess.SystemPrompt, sess.Model, toNanos(sess.Created), toNanos(sess.Updated),
			sess.Channel, sess.Partner, int(sess.Scope.Kind), sess.Scope.Group); err != nil {
			return nil, false, fmt.Errorf("import conversation %q: create session: %w", sess.ID, err)
		}
		created = true
	case err != nil:
		return nil, false, fmt.Errorf("import conversation %q: %w", sess.ID, err)
	case channel != sess.Channel:
		return nil, false, fmt.Errorf("import conversation: session %q exists with channel %q, not %q: %w", sess.ID, channel, sess.Channel, memory.ErrExists)
	}
	if b == nil {
		if err := tx.Commit(); err != nil {
			return nil, false, fmt.Errorf("import conversation %q: commit: %w", sess.ID, err)
		}
		return nil, created, nil
	}
	if !created {
		now, err := importedIDs(ctx, tx, sess.ID)
		if err != nil {
			return nil, false, fmt.Errorf("import conversation %q: %w", sess.ID, err)
		}
		b.keep(func(e memory.Event) bool { return !now[e.Meta[backup.MetaImportID]] }) // another import may have got there first
	}
	if len(b.out) > 0 {
		if err := s.insertAppend(ctx, tx, b); err != nil {
			return nil, false, fmt.Errorf("import conversation %q: %w", sess.ID, err)
		}
		// The session was last active when its conversation was, not now.
		last := sess.Updated
		for _, e := range b.out {
			if e.Time.After(last) {
				last = e.Time
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET updated = ? WHERE id = ?`, toNanos(last), sess.ID); err != nil {
			return nil, false, fmt.Errorf("import conversation %q: %w", sess.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, false, fmt.Errorf("import conversation %q: commit: %w", sess.ID, err)
	}
	s.appendCommitted(b)
	return b.out, created, nil
}

// ImportedIDs implements [backup.ChatSink].
func (s *Store) ImportedIDs(ctx context.Context, session string) (map[string]bool, error) {
	have, err := importedIDs(ctx, s.r, session)
	if err != nil {
		return nil, fmt.Errorf("imported ids of %q: %w", session, err)
	}
	return have, nil
}

// importedIDs returns the import ids of a session's events.
func importedIDs(ctx context.Context, q querier, session string) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT json_extract(meta, '$.`+backup.MetaImportID+`') FROM events
		WHERE session = ? AND meta IS NOT NULL`, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var id sql.NullString
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if id.Valid {
			have[id.String] = true
		}
	}
	return have, rows.Err()
}

// newImports returns the events whose import id is not in have, each once.
func newImports(evs []memory.Event, have map[string]bool) []memory.Event {
	var out []memory.Event
	seen := map[string]bool{}
	for _, e := range evs {
		id := e.Meta[backup.MetaImportID]
		if have[id] || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, e)
	}
	return out
}

// keep drops the events of a prepared batch for which ok is false.
func (b *appendBatch) keep(ok func(memory.Event) bool) {
	n := 0
	for i := range b.out {
		if !ok(b.out[i]) {
			continue
		}
		b.in[n], b.out[n], b.calls[n], b.metas[n], b.toks[n], b.exps[n] = b.in[i], b.out[i], b.calls[i], b.metas[i], b.toks[i], b.exps[i]
		n++
	}
	b.in, b.out, b.calls, b.metas, b.toks, b.exps = b.in[:n], b.out[:n], b.calls[:n], b.metas[:n], b.toks[:n], b.exps[:n]
}

var _ backup.ChatSink = (*Store)(nil)
