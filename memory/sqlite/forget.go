package sqlite

import (
	"context"
	"fmt"
	"slices"

	"github.com/hologramagent/hologram/memory"
)

// Forget implements [memory.Graph]: the owner deletes events, in one transaction.
//
// The events go with their full-text rows (by trigger), the blocks they hold, their
// event_blocks references and their triple_sources rows (ON DELETE CASCADE); blocks they
// brought that have moved to L3 stay with their entity. Every triple that had one of them as a
// source is then looked at: left with no source and not pinned, it is deleted (Triples);
// otherwise (Trimmed) its scope is recomputed as the narrowest of its remaining sources' (a
// pinned triple left with none keeps its scope). Finally the subjects and objects of the
// deleted triples that came from distillation (origin llm or rules), are not pinned, and are
// left with no triple and no block are deleted (Entities). Unknown ids are
// [memory.ErrNotFound] and nothing is deleted; duplicate ids count once.
//
// The index statistics behind BM25, the document-frequency cache and the cached History tails
// of the sessions concerned are brought up to date after the commit.
func (s *Store) Forget(ctx context.Context, ids []int64) (memory.ForgetResult, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return memory.ForgetResult{}, nil
	}
	var res memory.ForgetResult
	err := s.graphWrite(ctx, "forget", s.now(), func(g *gtx) error {
		res = memory.ForgetResult{}
		list := idList(ids)
		// The events and their sessions; every id must exist.
		rows, err := g.QueryContext(ctx, `SELECT id, session FROM events WHERE id IN (SELECT value FROM json_each(?))`, list)
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		found := make(map[int64]bool, len(ids))
		for rows.Next() {
			var id int64
			var session string
			if err := rows.Scan(&id, &session); err != nil {
				rows.Close()
				return fmt.Errorf("read events: %w", err)
			}
			found[id] = true
			g.sessions[session] = true
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		if len(found) < len(ids) {
			var missing []int64
			for _, id := range ids {
				if !found[id] {
					missing = append(missing, id)
				}
			}
			return fmt.Errorf("events %v: %w", missing, memory.ErrNotFound)
		}
		res.Events = len(ids)

		// What leaves the full-text index, for the BM25 running totals.
		rows, err = g.QueryContext(ctx, `SELECT coalesce(c0, ''), coalesce(c1, '') FROM events_fts_content WHERE id IN (SELECT value FROM json_each(?))`, list)
		if err != nil {
			return fmt.Errorf("read index rows: %w", err)
		}
		for rows.Next() {
			var toks, exp string
			if err := rows.Scan(&toks, &exp); err != nil {
				rows.Close()
				return fmt.Errorf("read index rows: %w", err)
			}
			g.docs++
			g.terms += indexLen(toks, exp)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("read index rows: %w", err)
		}
		g.dfsReset = true

		if err := g.QueryRowContext(ctx, `SELECT count(*) FROM blocks WHERE holder_event IN (SELECT value FROM json_each(?))`,
			list).Scan(&res.Blocks); err != nil {
			return fmt.Errorf("count blocks: %w", err)
		}
		// Sessions whose events reference the blocks that go (an event referencing a block
		// another event held).
		rows, err = g.QueryContext(ctx, `SELECT DISTINCT e.session FROM blocks b JOIN event_blocks eb ON eb.block = b.id
			JOIN events e ON e.id = eb.event WHERE b.holder_event IN (SELECT value FROM json_each(?))`, list)
		if err != nil {
			return fmt.Errorf("sessions of blocks: %w", err)
		}
		for rows.Next() {
			var session string
			if err := rows.Scan(&session); err != nil {
				rows.Close()
				return fmt.Errorf("sessions of blocks: %w", err)
			}
			g.sessions[session] = true
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("sessions of blocks: %w", err)
		}

		touched, err := g.int64s(ctx, `SELECT DISTINCT triple FROM triple_sources
			WHERE event IN (SELECT value FROM json_each(?)) ORDER BY triple`, list)
		if err != nil {
			return fmt.Errorf("read sources: %w", err)
		}

		if err := reparent(ctx, g.Tx, list); err != nil {
			return err
		}
		if _, err := g.ExecContext(ctx, `DELETE FROM events WHERE id IN (SELECT value FROM json_each(?))`, list); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}

		var deleted []int64
		for _, t := range touched {
			var left int
			var pinned bool
			if err := g.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM triple_sources WHERE triple = ?1), pinned
				FROM triples WHERE id = ?1`, t).Scan(&left, &pinned); err != nil {
				return fmt.Errorf("triple %d: %w", t, err)
			}
			if left == 0 && !pinned {
				deleted = append(deleted, t)
				continue
			}
			res.Trimmed++
			sc, ok, err := g.sourceScope(ctx, t)
			if err != nil {
				return err
			}
			if ok {
				if err := g.setTripleScope(ctx, t, sc); err != nil {
					return err
				}
			}
		}
		if len(deleted) == 0 {
			return nil
		}
		dlist := idList(deleted)
		ends, err := g.int64s(ctx, `SELECT subject FROM triples WHERE id IN (SELECT value FROM json_each(?1))
			UNION SELECT object FROM triples WHERE id IN (SELECT value FROM json_each(?1))`, dlist)
		if err != nil {
			return fmt.Errorf("read triples: %w", err)
		}
		r, err := g.ExecContext(ctx, `DELETE FROM triples WHERE id IN (SELECT value FROM json_each(?))`, dlist)
		if err != nil {
			return fmt.Errorf("delete triples: %w", err)
		}
		n, err := r.RowsAffected()
		if err != nil {
			return fmt.Errorf("delete triples: %w", err)
		}
		res.Triples = int(n)
		r, err = g.ExecContext(ctx, `DELETE FROM entities AS e WHERE e.id IN (SELECT value FROM json_each(?))
			AND e.origin IN ('llm', 'rules') AND e.pinned = 0
			AND NOT EXISTS (SELECT 1 FROM triples t WHERE t.subject = e.id)
			AND NOT EXISTS (SELECT 1 FROM triples t WHERE t.object = e.id)
			AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.holder_entity = e.id)`, idList(ends))
		if err != nil {
			return fmt.Errorf("delete orphan entities: %w", err)
		}
		if n, err = r.RowsAffected(); err != nil {
			return fmt.Errorf("delete orphan entities: %w", err)
		}
		res.Entities = int(n)
		return nil
	})
	if err != nil {
		return memory.ForgetResult{}, err
	}
	return res, nil
}
