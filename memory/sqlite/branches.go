package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hologramagent/hologram/memory"
)

// SetHead implements [memory.Branches]: one write transaction marks every event of the session
// that is not on the path from a root to head off its branch, and the path's events on it. The
// session's cached History tail is dropped.
func (s *Store) SetHead(ctx context.Context, session string, head int64) error {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("set head: begin: %w", err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, session).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("set head: session %q: %w", session, memory.ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("set head: %w", err)
	}
	if head != 0 {
		var got string
		err := tx.QueryRowContext(ctx, `SELECT session FROM events WHERE id = ?`, head).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && got != session) {
			return fmt.Errorf("set head: event %d of session %q: %w", head, session, memory.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("set head: %w", err)
		}
	}
	// The path is bounded by the session's events: parents always have smaller ids.
	if _, err := tx.ExecContext(ctx, `WITH RECURSIVE path (id) AS (
			SELECT ?2 WHERE ?2 != 0
			UNION ALL SELECT e.parent FROM events e JOIN path ON e.id = path.id WHERE e.parent != 0 AND e.parent < e.id)
		UPDATE events SET off_branch = (id NOT IN (SELECT id FROM path))
		WHERE session = ?1 AND off_branch != (id NOT IN (SELECT id FROM path))`, session, head); err != nil {
		return fmt.Errorf("set head of session %q: %w", session, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("set head: commit: %w", err)
	}
	s.invalidateSessions(session)
	s.branched.Store(true)
	return nil
}

// BranchLeaf implements [memory.Branches].
func (s *Store) BranchLeaf(ctx context.Context, session string, id int64) (int64, error) {
	var leaf sql.NullInt64
	err := s.r.QueryRowContext(ctx, `WITH RECURSIVE down (id) AS (
			SELECT id FROM events WHERE id = ?2 AND session = ?1
			UNION ALL SELECT (SELECT max(c.id) FROM events c WHERE c.parent = down.id AND c.session = ?1) FROM down
			WHERE down.id IS NOT NULL)
		SELECT max(id) FROM down`, session, id).Scan(&leaf)
	if err != nil {
		return 0, fmt.Errorf("branch leaf: %w", err)
	}
	if !leaf.Valid {
		return 0, fmt.Errorf("branch leaf: event %d of session %q: %w", id, session, memory.ErrNotFound)
	}
	return leaf.Int64, nil
}

// Children implements [memory.Branches].
func (s *Store) Children(ctx context.Context, session string, parents []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(parents) == 0 {
		return out, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT parent, id FROM events
		WHERE session = ? AND parent IN (SELECT value FROM json_each(?)) ORDER BY id`, session, idList(parents))
	if err != nil {
		return nil, fmt.Errorf("children: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, id int64
		if err := rows.Scan(&p, &id); err != nil {
			return nil, fmt.Errorf("children: %w", err)
		}
		out[p] = append(out[p], id)
	}
	return out, rows.Err()
}

// HistoryPage implements [memory.Branches]. An unknown session is ErrNotFound.
func (s *Store) HistoryPage(ctx context.Context, session string, before int64, limit int) ([]memory.Event, bool, error) {
	if limit <= 0 {
		return nil, false, fmt.Errorf("history page: limit %d must be positive: %w", limit, memory.ErrInvalid)
	}
	if before <= 0 {
		before = 1<<63 - 1
	}
	evs, err := s.queryEvents(ctx, `SELECT `+eventCols+` FROM
		(SELECT * FROM events WHERE session = ? AND off_branch = 0 AND id < ? ORDER BY id DESC LIMIT ?) ORDER BY id`,
		session, before, limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("history page of session %q: %w", session, err)
	}
	if len(evs) == 0 {
		if err := s.sessionExists(ctx, session); err != nil {
			return nil, false, fmt.Errorf("history page: %w", err)
		}
	}
	more := len(evs) > limit
	if more {
		evs = evs[1:]
	}
	return evs, more, nil
}

// SessionEventIDs implements [memory.Branches].
func (s *Store) SessionEventIDs(ctx context.Context, session string) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM events WHERE session = ? ORDER BY id`, session)
	if err != nil {
		return nil, fmt.Errorf("events of session %q: %w", session, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("events of session %q: %w", session, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of session %q: %w", session, err)
	}
	if len(ids) == 0 {
		if err := s.sessionExists(ctx, session); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// sessionHeads is heads, from s.heads for the sessions it holds (s.cacheMu held; tx began
// under it). What it reads is the committed state, cached whatever becomes of tx.
func (s *Store) sessionHeads(ctx context.Context, tx *sql.Tx, sessions []string) (map[string]int64, error) {
	var missing []string
	out := make(map[string]int64, len(sessions))
	for _, sess := range sessions {
		if h, ok := s.heads[sess]; ok {
			out[sess] = h
		} else {
			missing = append(missing, sess)
		}
	}
	read, err := heads(ctx, tx, missing)
	if err != nil {
		return nil, err
	}
	for sess, h := range read {
		out[sess], s.heads[sess] = h, h
	}
	return out, nil
}

// invalidateSessions drops what the caches hold of sessions whose events changed in ways the
// caches cannot follow (s.cacheMu held).
func (s *Store) invalidateSessions(sessions ...string) {
	s.tails.invalidate(sessions...)
	for _, sess := range sessions {
		delete(s.heads, sess)
	}
}

// heads returns the head (newest on-branch event, 0 for none) of each session in tx.
func heads(ctx context.Context, tx *sql.Tx, sessions []string) (map[string]int64, error) {
	out := make(map[string]int64, len(sessions))
	for _, sess := range sessions {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM events WHERE session = ? AND off_branch = 0 ORDER BY id DESC LIMIT 1`, sess).Scan(&id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("head of session %q: %w", sess, err)
		}
		out[sess] = id
	}
	return out, nil
}

// reparent gives the children of events about to be deleted (ids) the nearest ancestor that
// stays, so that forgetting a message never cuts its session's branch in two.
func reparent(ctx context.Context, tx *sql.Tx, list string) error {
	gone := map[int64]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT id, parent FROM events WHERE id IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return fmt.Errorf("reparent: %w", err)
	}
	for rows.Next() {
		var id, p int64
		if err := rows.Scan(&id, &p); err != nil {
			rows.Close()
			return fmt.Errorf("reparent: %w", err)
		}
		gone[id] = p
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("reparent: %w", err)
	}
	type child struct{ id, parent int64 }
	var kids []child
	rows, err = tx.QueryContext(ctx, `SELECT id, parent FROM events WHERE parent IN (SELECT value FROM json_each(?1))
		AND id NOT IN (SELECT value FROM json_each(?1))`, list)
	if err != nil {
		return fmt.Errorf("reparent: %w", err)
	}
	for rows.Next() {
		var c child
		if err := rows.Scan(&c.id, &c.parent); err != nil {
			rows.Close()
			return fmt.Errorf("reparent: %w", err)
		}
		kids = append(kids, c)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("reparent: %w", err)
	}
	for _, c := range kids {
		p := c.parent
		for steps := 0; steps <= len(gone); steps++ {
			next, ok := gone[p]
			if !ok {
				break
			}
			p = next
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET parent = ? WHERE id = ?`, p, c.id); err != nil {
			return fmt.Errorf("reparent event %d: %w", c.id, err)
		}
	}
	return nil
}

// restoreBranches finishes the tree of restored events: a backup written before branches
// existed (branched false) gets each session's events chained in id order, as they were; a
// newer one must name parents of the same session.
func restoreBranches(ctx context.Context, tx *sql.Tx, branched bool) error {
	if !branched {
		_, err := tx.ExecContext(ctx, `UPDATE events SET parent = coalesce(
			(SELECT p.id FROM events p WHERE p.session = events.session AND p.id < events.id ORDER BY p.id DESC LIMIT 1), 0)`)
		if err != nil {
			return fmt.Errorf("chain events: %w", err)
		}
		return nil
	}
	var id, parent int64
	err := tx.QueryRowContext(ctx, `SELECT e.id, e.parent FROM events e WHERE e.parent != 0 AND NOT EXISTS
		(SELECT 1 FROM events p WHERE p.id = e.parent AND p.session = e.session AND p.id < e.id) LIMIT 1`).Scan(&id, &parent)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check parents: %w", err)
	}
	return fmt.Errorf("event %d: parent %d is not an earlier event of its session: %w", id, parent, memory.ErrInvalid)
}
