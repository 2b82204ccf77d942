package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hologramagent/hologram/memory"
	sqlite3 "github.com/mattn/go-sqlite3"
)

const sceneCols = `id, key, declared, features, strength, occurrences, seen, created`

func scanScene(sc scanner) (memory.Scene, error) {
	var scene memory.Scene
	var features string
	var seen, created int64
	if err := sc.Scan(&scene.ID, &scene.Key, &scene.Declared, &features, &scene.Strength, &scene.Occurrences, &seen, &created); err != nil {
		return memory.Scene{}, err
	}
	if err := json.Unmarshal([]byte(features), &scene.Features); err != nil {
		return memory.Scene{}, fmt.Errorf("scene %d: features: %w", scene.ID, err)
	}
	if len(scene.Features) == 0 {
		scene.Features = nil
	}
	scene.Seen, scene.Created = fromNanos(seen), fromNanos(created)
	return scene, nil
}

// Scenes implements [memory.SceneStore]: every scene, pending ones included, by id.
func (s *Store) Scenes(ctx context.Context) ([]memory.Scene, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+sceneCols+` FROM scenes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("scenes: %w", err)
	}
	defer rows.Close()
	var out []memory.Scene
	for rows.Next() {
		sc, err := scanScene(rows)
		if err != nil {
			return nil, fmt.Errorf("scenes: %w", err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("scenes: %w", err)
	}
	return out, nil
}

// checkScene reports a scene PutScene refuses: no key, a negative or non-finite strength or
// weight, negative occurrences. The error wraps [memory.ErrInvalid].
func checkScene(sc memory.Scene) error {
	if sc.Key == "" {
		return fmt.Errorf("scene without a key: %w", memory.ErrInvalid)
	}
	if math.IsNaN(sc.Strength) || math.IsInf(sc.Strength, 0) || sc.Strength < 0 {
		return fmt.Errorf("scene %q: strength %v is not a finite number ≥ 0: %w", sc.Key, sc.Strength, memory.ErrInvalid)
	}
	if sc.Occurrences < 0 {
		return fmt.Errorf("scene %q: occurrences %d < 0: %w", sc.Key, sc.Occurrences, memory.ErrInvalid)
	}
	for f, w := range sc.Features {
		if f == "" {
			return fmt.Errorf("scene %q: empty feature name: %w", sc.Key, memory.ErrInvalid)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return fmt.Errorf("scene %q: feature %q weight %v is not a finite number ≥ 0: %w", sc.Key, f, w, memory.ErrInvalid)
		}
	}
	return nil
}

// PutScene implements [memory.SceneStore]. ID 0 creates a scene (Created and Seen default to
// now); another ID replaces that scene's key, declared flag, features, strength, occurrences and
// seen time (Seen defaults to now; a zero Created keeps the stored one), [memory.ErrNotFound]
// when unknown. A key another scene has is [memory.ErrExists]; see checkScene for what else is
// refused. It returns the scene as stored.
func (s *Store) PutScene(ctx context.Context, sc memory.Scene) (memory.Scene, error) {
	if err := checkScene(sc); err != nil {
		return memory.Scene{}, fmt.Errorf("put scene: %w", err)
	}
	if sc.ID < 0 {
		return memory.Scene{}, fmt.Errorf("put scene %q: id %d: %w", sc.Key, sc.ID, memory.ErrInvalid)
	}
	features := []byte("{}")
	if len(sc.Features) > 0 {
		var err error
		if features, err = json.Marshal(sc.Features); err != nil {
			return memory.Scene{}, fmt.Errorf("put scene %q: features: %w", sc.Key, err)
		}
	}
	now := toNanos(s.now())
	seen, created := now, now
	if !sc.Seen.IsZero() {
		seen = toNanos(sc.Seen)
	}
	if !sc.Created.IsZero() {
		created = toNanos(sc.Created)
	}
	var row *sql.Row
	if sc.ID == 0 {
		row = s.w.QueryRowContext(ctx, `INSERT INTO scenes (key, declared, features, strength, occurrences, seen, created)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+sceneCols,
			sc.Key, sc.Declared, string(features), sc.Strength, sc.Occurrences, seen, created)
	} else {
		keep := sc.Created.IsZero()
		row = s.w.QueryRowContext(ctx, `UPDATE scenes SET key = ?, declared = ?, features = ?, strength = ?,
			occurrences = ?, seen = ?, created = CASE WHEN ? THEN created ELSE ? END WHERE id = ? RETURNING `+sceneCols,
			sc.Key, sc.Declared, string(features), sc.Strength, sc.Occurrences, seen, keep, created, sc.ID)
	}
	out, err := scanScene(row)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Scene{}, fmt.Errorf("put scene %q: scene %d: %w", sc.Key, sc.ID, memory.ErrNotFound)
	}
	var se sqlite3.Error
	if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique {
		return memory.Scene{}, fmt.Errorf("put scene: key %q: %w", sc.Key, memory.ErrExists)
	}
	if err != nil {
		return memory.Scene{}, fmt.Errorf("put scene %q: %w", sc.Key, err)
	}
	s.ckpt.committed()
	return out, nil
}

// DeleteScene implements [memory.SceneStore]; [memory.ErrNotFound] when unknown. Events keep
// the scene key they were given.
func (s *Store) DeleteScene(ctx context.Context, id int64) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM scenes WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete scene %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete scene %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("delete scene %d: %w", id, memory.ErrNotFound)
	}
	s.ckpt.committed()
	return nil
}

// SetScene implements [memory.SceneStore]: it sets the scene key of the events ("" clears it) in
// one transaction; when an id is unknown nothing changes and the error wraps
// [memory.ErrNotFound]. The key need not name a stored scene. Cached History tails of the
// touched sessions are dropped after the commit.
func (s *Store) SetScene(ctx context.Context, ids []int64, key string) error {
	if len(ids) == 0 {
		return nil
	}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("set scene %q: begin: %w", key, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE events SET scene = ? WHERE id IN (SELECT value FROM json_each(?))
		RETURNING id, session`, key, idList(ids))
	if err != nil {
		return fmt.Errorf("set scene %q: %w", key, err)
	}
	sessions := make(map[string]bool)
	for rows.Next() {
		var id int64
		var sess string
		if err := rows.Scan(&id, &sess); err != nil {
			rows.Close()
			return fmt.Errorf("set scene %q: %w", key, err)
		}
		delete(want, id)
		sessions[sess] = true
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("set scene %q: %w", key, err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("set scene %q: %w", key, err)
	}
	if len(want) > 0 {
		missing := make([]int64, 0, len(want))
		for id := range want {
			missing = append(missing, id)
		}
		slices.Sort(missing)
		return fmt.Errorf("set scene %q: events %v: %w", key, missing, memory.ErrNotFound)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("set scene %q: commit: %w", key, err)
	}
	touched := make([]string, 0, len(sessions))
	for sess := range sessions {
		touched = append(touched, sess)
	}
	s.invalidateSessions(touched...)
	s.ckpt.committed()
	return nil
}

var _ memory.SceneStore = (*Store)(nil)
