package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/hologramagent/hologram/memory"
)

// Image blocks' vectors live in the block_vectors table (migration 0007), encoded as event
// vectors are (vectors.go). The event a vector belongs to for recall is resolved when the
// vectors are scanned: the block's holder event, or, for a block that has moved to L3, the first
// event that references it; a block that no event references any more is not scanned.

// blockEvent is the event of block b for recall (NULL when there is none).
const blockEvent = `coalesce(b.holder_event, (SELECT min(eb.event) FROM event_blocks eb WHERE eb.block = b.id))`

// PutBlockVectors implements [memory.BlockVectorStore].
func (s *Store) PutBlockVectors(ctx context.Context, space string, vecs []memory.BlockVector) (int, error) {
	evs := make([]memory.EventVector, len(vecs)) // the same checks as event vectors
	for i, v := range vecs {
		evs[i].Vec = v.Vec
	}
	if err := checkVectors(space, evs); err != nil {
		return 0, fmt.Errorf("put block vectors: %w", err)
	}
	if len(vecs) == 0 {
		return 0, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("put block vectors: begin: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO block_vectors (block, space, vec) SELECT id, ?, ? FROM blocks WHERE id = ?
		ON CONFLICT (block, space) DO UPDATE SET vec = excluded.vec`)
	if err != nil {
		return 0, fmt.Errorf("put block vectors: %w", err)
	}
	defer st.Close()
	n := 0
	for _, v := range vecs {
		r, err := st.ExecContext(ctx, space, encodeVec(v.Vec), v.Block)
		if err != nil {
			return 0, fmt.Errorf("put block vectors: block %s: %w", v.Block, err)
		}
		k, err := r.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("put block vectors: block %s: %w", v.Block, err)
		}
		n += int(k)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("put block vectors: commit: %w", err)
	}
	s.ckpt.committed()
	return n, nil
}

// ScanBlockVectors implements [memory.BlockVectorStore], in pages of block ids as ScanVectors.
func (s *Store) ScanBlockVectors(ctx context.Context, space string, fn func(memory.BlockVectorEntry) error) error {
	if space == "" {
		return fmt.Errorf("scan block vectors: no space: %w", memory.ErrInvalid)
	}
	const page = 1024
	after := ""
	for {
		rows, err := s.r.QueryContext(ctx, `SELECT x.block, x.event, e.session, x.scope_kind, x.scope_group, x.vec FROM (
				SELECT v.block, `+blockEvent+` AS event, b.scope_kind, b.scope_group, v.vec
				FROM block_vectors v JOIN blocks b ON b.id = v.block
				WHERE v.space = ? AND v.block > ? AND length(v.vec) > 0 ORDER BY v.block LIMIT ?) x
			LEFT JOIN events e ON e.id = x.event ORDER BY x.block`, space, after, page)
		if err != nil {
			return fmt.Errorf("scan block vectors: %w", err)
		}
		var batch []memory.BlockVectorEntry
		n := 0
		for rows.Next() {
			var e memory.BlockVectorEntry
			var event *int64
			var session *string
			var kind int
			var blob []byte
			if err := rows.Scan(&e.Block, &event, &session, &kind, &e.Scope.Group, &blob); err != nil {
				rows.Close()
				return fmt.Errorf("scan block vectors: %w", err)
			}
			n++
			after = e.Block
			if event == nil || session == nil {
				continue // no event holds or references the block
			}
			e.Event, e.Session, e.Scope.Kind = *event, *session, memory.ScopeKind(kind)
			if e.Vec, err = decodeVec(blob); err != nil {
				rows.Close()
				return fmt.Errorf("scan block vectors: block %s: %w", e.Block, err)
			}
			batch = append(batch, e)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("scan block vectors: %w", err)
		}
		for _, e := range batch {
			if err := fn(e); err != nil {
				return err
			}
		}
		if n < page {
			return nil
		}
	}
}

// UnembeddedImages implements [memory.BlockVectorStore].
func (s *Store) UnembeddedImages(ctx context.Context, space, after string, limit int) ([]memory.Block, error) {
	if space == "" {
		return nil, fmt.Errorf("unembedded images: no space: %w", memory.ErrInvalid)
	}
	if limit <= 0 {
		limit = 8
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+blockCols+`, b.data FROM blocks b WHERE b.kind = 'image' AND b.id > ?
		AND NOT EXISTS (SELECT 1 FROM block_vectors v WHERE v.block = b.id AND v.space = ?) ORDER BY b.id LIMIT ?`, after, space, limit)
	if err != nil {
		return nil, fmt.Errorf("unembedded images: %w", err)
	}
	defer rows.Close()
	var out []memory.Block
	for rows.Next() {
		var data []byte
		b, err := scanBlockRow(rows, &data)
		if err != nil {
			return nil, fmt.Errorf("unembedded images: %w", err)
		}
		b.Data = data
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unembedded images: %w", err)
	}
	return out, nil
}

// BlockVectorCounts implements [memory.BlockVectorStore].
func (s *Store) BlockVectorCounts(ctx context.Context, space string) (have, total int, err error) {
	if err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM block_vectors WHERE space = ?),
		(SELECT count(*) FROM blocks WHERE kind = 'image')`, space).Scan(&have, &total); err != nil {
		return 0, 0, fmt.Errorf("block vector counts: %w", err)
	}
	return have, total, nil
}

// DeleteBlockVectorsExcept implements [memory.BlockVectorStore].
func (s *Store) DeleteBlockVectorsExcept(ctx context.Context, keep string) (int, error) {
	r, err := s.w.ExecContext(ctx, `DELETE FROM block_vectors WHERE space != ?`, keep)
	if err != nil {
		return 0, fmt.Errorf("delete block vectors: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete block vectors: %w", err)
	}
	s.ckpt.committed()
	return int(n), nil
}

var _ memory.BlockVectorStore = (*Store)(nil)
