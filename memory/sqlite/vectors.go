package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/hologramagent/hologram/memory"
)

// Vectors live in the vectors table (migration 0004): one row per (event, space), the vector as
// little-endian float32s. Forgetting an event deletes its rows (ON DELETE CASCADE); they are not
// part of the full-text index, so the BM25 statistics do not change. Snapshot leaves them out
// (they are derived from the events and a model), and a restored store has none.

// encodeVec writes v as little-endian float32s.
func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVec reads little-endian float32s.
func decodeVec(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector blob of %d bytes is not a whole number of float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// checkVectors validates one PutVectors call: a space, one length for every non-empty vector,
// finite values.
func checkVectors(space string, vecs []memory.EventVector) error {
	if space == "" {
		return fmt.Errorf("no space: %w", memory.ErrInvalid)
	}
	dim := 0
	for _, ev := range vecs {
		if len(ev.Vec) == 0 {
			continue
		}
		if dim == 0 {
			dim = len(ev.Vec)
		}
		if len(ev.Vec) != dim {
			return fmt.Errorf("event %d: vector of length %d among vectors of length %d: %w", ev.Event, len(ev.Vec), dim, memory.ErrInvalid)
		}
		for i, x := range ev.Vec {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("event %d: element %d of its vector is %v: %w", ev.Event, i, x, memory.ErrInvalid)
			}
		}
	}
	return nil
}

// PutVectors implements [memory.VectorStore].
func (s *Store) PutVectors(ctx context.Context, space string, vecs []memory.EventVector) (int, error) {
	if err := checkVectors(space, vecs); err != nil {
		return 0, fmt.Errorf("put vectors: %w", err)
	}
	if len(vecs) == 0 {
		return 0, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("put vectors: begin: %w", err)
	}
	defer tx.Rollback()
	// INSERT … SELECT skips events that are gone: the vector of an event forgotten while it was
	// being embedded is not an error, just nothing to keep.
	st, err := tx.PrepareContext(ctx, `INSERT INTO vectors (event, space, vec) SELECT id, ?, ? FROM events WHERE id = ?
		ON CONFLICT (event, space) DO UPDATE SET vec = excluded.vec`)
	if err != nil {
		return 0, fmt.Errorf("put vectors: %w", err)
	}
	defer st.Close()
	n := 0
	for _, ev := range vecs {
		r, err := st.ExecContext(ctx, space, encodeVec(ev.Vec), ev.Event)
		if err != nil {
			return 0, fmt.Errorf("put vectors: event %d: %w", ev.Event, err)
		}
		k, err := r.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("put vectors: event %d: %w", ev.Event, err)
		}
		n += int(k)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("put vectors: commit: %w", err)
	}
	s.ckpt.committed()
	return n, nil
}

// ScanVectors implements [memory.VectorStore]. It reads in pages of event ids, so a long scan
// holds no read transaction open across fn calls for long.
func (s *Store) ScanVectors(ctx context.Context, space string, fn func(memory.VectorEntry) error) error {
	if space == "" {
		return fmt.Errorf("scan vectors: no space: %w", memory.ErrInvalid)
	}
	const page = 2048
	after := int64(0)
	for {
		rows, err := s.r.QueryContext(ctx, `SELECT v.event, e.session, e.scope_kind, e.scope_group, v.vec
			FROM vectors v JOIN events e ON e.id = v.event
			WHERE v.space = ? AND v.event > ? AND length(v.vec) > 0 ORDER BY v.event LIMIT ?`, space, after, page)
		if err != nil {
			return fmt.Errorf("scan vectors: %w", err)
		}
		var batch []memory.VectorEntry
		for rows.Next() {
			var e memory.VectorEntry
			var kind int
			var blob []byte
			if err := rows.Scan(&e.Event, &e.Session, &kind, &e.Scope.Group, &blob); err != nil {
				rows.Close()
				return fmt.Errorf("scan vectors: %w", err)
			}
			e.Scope.Kind = memory.ScopeKind(kind)
			if e.Vec, err = decodeVec(blob); err != nil {
				rows.Close()
				return fmt.Errorf("scan vectors: event %d: %w", e.Event, err)
			}
			batch = append(batch, e)
		}
		err = errors.Join(rows.Err(), rows.Close())
		if err != nil {
			return fmt.Errorf("scan vectors: %w", err)
		}
		for _, e := range batch {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(batch) < page {
			return nil
		}
		after = batch[len(batch)-1].Event
	}
}

// Unembedded implements [memory.VectorStore]. The events come with their blocks, whose text
// counts in [memory.EmbeddingText].
func (s *Store) Unembedded(ctx context.Context, space string, after int64, limit int) ([]memory.Event, error) {
	if space == "" {
		return nil, fmt.Errorf("unembedded events: no space: %w", memory.ErrInvalid)
	}
	if limit <= 0 {
		limit = 100
	}
	evs, err := s.queryEvents(ctx, `SELECT `+eventCols+` FROM events e WHERE e.id > ?
		AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.event = e.id AND v.space = ?) ORDER BY e.id LIMIT ?`, after, space, limit)
	if err != nil {
		return nil, fmt.Errorf("unembedded events: %w", err)
	}
	return evs, nil
}

// VectorCounts implements [memory.VectorStore].
func (s *Store) VectorCounts(ctx context.Context, space string) (have, total int, err error) {
	if err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vectors WHERE space = ?), (SELECT count(*) FROM events)`,
		space).Scan(&have, &total); err != nil {
		return 0, 0, fmt.Errorf("vector counts: %w", err)
	}
	return have, total, nil
}

// DeleteVectorsExcept implements [memory.VectorStore].
func (s *Store) DeleteVectorsExcept(ctx context.Context, keep string) (int, error) {
	r, err := s.w.ExecContext(ctx, `DELETE FROM vectors WHERE space != ?`, keep)
	if err != nil {
		return 0, fmt.Errorf("delete vectors: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete vectors: %w", err)
	}
	s.ckpt.committed()
	return int(n), nil
}

// VectorSpaces implements [memory.VectorStore].
func (s *Store) VectorSpaces(ctx context.Context) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT space, count(*) FROM vectors GROUP BY space ORDER BY space`)
	if err != nil {
		return nil, fmt.Errorf("vector spaces: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var space string
		var n int
		if err := rows.Scan(&space, &n); err != nil {
			return nil, fmt.Errorf("vector spaces: %w", err)
		}
		out[space] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("vector spaces: %w", err)
	}
	return out, nil
}

var _ memory.VectorStore = (*Store)(nil)
