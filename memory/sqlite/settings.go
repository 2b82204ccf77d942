package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hologramagent/hologram/memory"
)

// Settings: the store's key–value table.

// GetSetting implements [memory.Store].
func (s *Store) GetSetting(ctx context.Context, key string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("setting %q: %w", key, memory.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("get setting %q: %w", key, err)
	}
	return v, nil
}

// SetSetting implements [memory.Store].
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO settings (key, value, updated) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated`,
		key, value, toNanos(s.now()))
	if err != nil {
		return fmt.Errorf("set setting %q: %w", key, err)
	}
	return nil
}

// DeleteSetting implements [memory.Store].
func (s *Store) DeleteSetting(ctx context.Context, key string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key)
	if err != nil {
		return fmt.Errorf("delete setting %q: %w", key, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete setting %q: %w", key, err)
	} else if n == 0 {
		return fmt.Errorf("setting %q: %w", key, memory.ErrNotFound)
	}
	return nil
}

// ListSettings implements [memory.Store].
func (s *Store) ListSettings(ctx context.Context, prefix string) (map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT key, value FROM settings WHERE substr(key, 1, length(?1)) = ?1`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list settings %q: %w", prefix, err)
	}
	defer rows.Close()
	out := make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("list settings %q: %w", prefix, err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list settings %q: %w", prefix, err)
	}
	return out, nil
}
