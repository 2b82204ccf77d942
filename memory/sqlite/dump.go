package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
)

// This file is the store side of memory/backup: a consistent snapshot of every table for the
// exports ([Store.Snapshot]) and a restore that writes every record with its id in one
// transaction ([Store.BeginRestore]).

var (
	_ backup.Source = (*Store)(nil)
	_ backup.Sink   = (*Store)(nil)
)

// Snapshot implements [backup.Source]: one read transaction on a reader connection, so every
// listing sees the same committed state; writers go on meanwhile. The caller must Close it.
func (s *Store) Snapshot(ctx context.Context) (backup.Snapshot, error) {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("snapshot: begin: %w", err)
	}
	sn := &snapshot{conn: conn, tx: tx}
	// The first read fixes the snapshot.
	var sessions int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&sn.schema); err != nil {
		sn.Close()
		return nil, fmt.Errorf("snapshot: schema version: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&sessions); err != nil {
		sn.Close()
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return sn, nil
}

// snapshot is a read transaction over the whole store.
type snapshot struct {
	conn   *sql.Conn
	tx     *sql.Tx
	schema int

	once sync.Once
	err  error
}

func (sn *snapshot) Schema() int { return sn.schema }

func (sn *snapshot) Close() error {
	sn.once.Do(func() {
		rerr := sn.tx.Rollback()
		if errors.Is(rerr, sql.ErrTxDone) {
			rerr = nil
		}
		sn.err = errors.Join(rerr, sn.conn.Close())
	})
	return sn.err
}

// each runs query and calls scan on every row.
func (sn *snapshot) each(ctx context.Context, what, query string, scan func(*sql.Rows) error, args ...any) error {
	rows, err := sn.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (sn *snapshot) Sessions(ctx context.Context, fn func(memory.Session) error) error {
	return sn.each(ctx, "sessions", `SELECT `+sessionCols+` FROM sessions ORDER BY id`, func(rows *sql.Rows) error {
		sess, err := scanSession(rows)
		if err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		return fn(sess)
	})
}

// snapEventBlocks selects an event's block references (alias e) as a JSON array, in order.
const snapEventBlocks = `(SELECT json_group_array(json_object('id', b.id, 'kind', b.kind, 'name', b.name,
	'mime', b.mime, 'size', b.size, 'scope_kind', b.scope_kind, 'scope_group', b.scope_group,
	'layer', b.holder_layer, 'event', coalesce(b.holder_event, 0), 'entity', coalesce(b.holder_entity, 0),
	'created', b.created) ORDER BY eb.pos)
	FROM event_blocks eb JOIN blocks b ON b.id = eb.block WHERE eb.event = e.id)`

// blockRef is one element of snapEventBlocks.
type blockRef struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	MIME       string `json:"mime"`
	Size       int64  `json:"size"`
	ScopeKind  int    `json:"scope_kind"`
	ScopeGroup string `json:"scope_group"`
	Layer      int    `json:"layer"`
	Event      int64  `json:"event"`
	Entity     int64  `json:"entity"`
	Created    int64  `json:"created"`
}

func (sn *snapshot) Events(ctx context.Context, byTime bool, fn func(memory.Event) error) error {
	order := `e.id`
	if byTime {
		order = `e.time, e.id`
	}
	return sn.each(ctx, "events", `SELECT `+prefixCols("e.")+`, `+snapEventBlocks+` FROM events e ORDER BY `+order,
		func(rows *sql.Rows) error {
			var refs string
			e, err := scanEvent(hitScanner{rows, []any{&refs}})
			if err != nil {
				return fmt.Errorf("events: %w", err)
			}
			if refs != "" && refs != "[]" {
				var bs []blockRef
				if err := json.Unmarshal([]byte(refs), &bs); err != nil {
					return fmt.Errorf("events: event %d: blocks: %w", e.ID, err)
				}
				for _, b := range bs {
					e.Blocks = append(e.Blocks, memory.Block{ID: b.ID, Kind: memory.BlockKind(b.Kind), Name: b.Name,
						MIME: b.MIME, Size: b.Size, Scope: memory.Scope{Kind: memory.ScopeKind(b.ScopeKind), Group: b.ScopeGroup},
						Holder:  memory.BlockHolder{Layer: memory.Layer(b.Layer), Event: b.Event, Entity: b.Entity},
						Created: fromNanos(b.Created)})
				}
			}
			return fn(e)
		})
}

func (sn *snapshot) Blocks(ctx context.Context, withData bool, fn func(memory.Block) error) error {
	data := `NULL`
	if withData {
		data = `b.data`
	}
	return sn.each(ctx, "blocks", `SELECT `+blockCols+`, `+data+` FROM blocks b ORDER BY b.id`, func(rows *sql.Rows) error {
		var d []byte
		b, err := scanBlockRow(rows, &d)
		if err != nil {
			return fmt.Errorf("blocks: %w", err)
		}
		if len(d) > 0 {
			b.Data = d
		}
		return fn(b)
	})
}

func (sn *snapshot) Entities(ctx context.Context, fn func(memory.Entity) error) error {
	return sn.each(ctx, "entities", `SELECT e.id, e.name, e.kind, coalesce(e.block_id, ''), e.scope_kind, e.scope_group,
		e.pinned, e.origin, e.created, e.updated, e.last_recalled, coalesce(b.text, '')
		FROM entities e LEFT JOIN blocks b ON b.id = e.block_id ORDER BY e.id`, func(rows *sql.Rows) error {
		var e memory.Entity
		var scope int
		var created, updated, recalled int64
		if err := rows.Scan(&e.ID, &e.Name, &e.Kind, &e.BlockID, &scope, &e.Scope.Group, &e.Pinned, &e.Origin,
			&created, &updated, &recalled, &e.Text); err != nil {
			return fmt.Errorf("entities: %w", err)
		}
		e.Scope.Kind, e.Created, e.Updated, e.LastRecalled = memory.ScopeKind(scope), fromNanos(created), fromNanos(updated), unsetZero(recalled)
		return fn(e)
	})
}

func (sn *snapshot) Triples(ctx context.Context, fn func(memory.Triple) error) error {
	return sn.each(ctx, "triples", `SELECT t.id, t.subject, s.name, t.predicate, t.object, o.name, t.valid_from,
		t.valid_to, t.scope_kind, t.scope_group, t.pinned, coalesce(t.superseded_by, 0), t.origin, t.created,
		(SELECT json_group_array(ts.event ORDER BY ts.event) FROM triple_sources ts WHERE ts.triple = t.id)
		FROM triples t JOIN entities s ON s.id = t.subject JOIN entities o ON o.id = t.object ORDER BY t.id`,
		func(rows *sql.Rows) error {
			var t memory.Triple
			var from, to, created int64
			var scope int
			var sources string
			if err := rows.Scan(&t.ID, &t.Subject, &t.SubjectName, &t.Predicate, &t.Object, &t.ObjectName, &from, &to,
				&scope, &t.Scope.Group, &t.Pinned, &t.SupersededBy, &t.Origin, &created, &sources); err != nil {
				return fmt.Errorf("triples: %w", err)
			}
			t.ValidFrom, t.ValidTo, t.Scope.Kind, t.Created = unsetZero(from), unsetZero(to), memory.ScopeKind(scope), fromNanos(created)
			if sources != "" && sources != "[]" {
				if err := json.Unmarshal([]byte(sources), &t.Sources); err != nil {
					return fmt.Errorf("triples: triple %d: sources: %w", t.ID, err)
				}
			}
			return fn(t)
		})
}

func (sn *snapshot) Scenes(ctx context.Context, fn func(memory.Scene) error) error {
	return sn.each(ctx, "scenes", `SELECT `+sceneCols+` FROM scenes ORDER BY id`, func(rows *sql.Rows) error {
		sc, err := scanScene(rows)
		if err != nil {
			return fmt.Errorf("scenes: %w", err)
		}
		return fn(sc)
	})
}

func (sn *snapshot) Settings(ctx context.Context, fn func(key, value string) error) error {
	return sn.each(ctx, "settings", `SELECT key, value FROM settings ORDER BY key`, func(rows *sql.Rows) error {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return fmt.Errorf("settings: %w", err)
		}
		return fn(k, v)
	})
}

// unsetZero converts a stored time where 0 means unset (never, still valid…).
func unsetZero(n int64) (t time.Time) {
	if n == 0 {
		return t
	}
	return fromNanos(n)
}

// setZero is the stored form of a time where 0 means unset.
func setZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return toNanos(t)
}
