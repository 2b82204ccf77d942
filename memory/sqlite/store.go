package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/memory"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// CreateSession implements [memory.Store].
func (s *Store) CreateSession(ctx context.Context, sess memory.Session) (memory.Session, error) {
	if err := memory.ValidateSession(sess); err != nil {
		return memory.Session{}, fmt.Errorf("create session: %w", err)
	}
	if err := sess.Scope.Validate(); err != nil {
		return memory.Session{}, fmt.Errorf("create session %q: scope: %w", sess.ID, err)
	}
	now := s.now()
	if sess.Created.IsZero() {
		sess.Created = now
	}
	if sess.Updated.IsZero() {
		sess.Updated = now
	}
	sess.Created = fromNanos(toNanos(sess.Created))
	sess.Updated = fromNanos(toNanos(sess.Updated))
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO sessions (id, title, system_prompt, model, created, updated, channel, partner, scope_kind, scope_group)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sess.ID, sess.Title, sess.SystemPrompt, sess.Model, toNanos(sess.Created), toNanos(sess.Updated),
		sess.Channel, sess.Partner, int(sess.Scope.Kind), sess.Scope.Group)
	if err != nil {
		var se sqlite3.Error
		if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey {
			return memory.Session{}, fmt.Errorf("create session %q: %w", sess.ID, memory.ErrExists)
		}
		return memory.Session{}, fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	return sess, nil
}

const sessionCols = `id, title, system_prompt, model, created, updated, channel, partner, scope_kind, scope_group`

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanSession(sc scanner) (memory.Session, error) {
	var sess memory.Session
	var created, updated int64
	var kind int
	if err := sc.Scan(&sess.ID, &sess.Title, &sess.SystemPrompt, &sess.Model, &created, &updated,
		&sess.Channel, &sess.Partner, &kind, &sess.Scope.Group); err != nil {
		return memory.Session{}, err
	}
	sess.Created, sess.Updated, sess.Scope.Kind = fromNanos(created), fromNanos(updated), memory.ScopeKind(kind)
	return sess, nil
}

// GetSession implements [memory.Store].
func (s *Store) GetSession(ctx context.Context, id string) (memory.Session, error) {
	sess, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Session{}, fmt.Errorf("session %q: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return memory.Session{}, fmt.Errorf("get session %q: %w", id, err)
	}
	return sess, nil
}

// ListSessions implements [memory.Store]: most recently updated first, then by id.
func (s *Store) ListSessions(ctx context.Context) ([]memory.Session, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY updated DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []memory.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// UpdateSession implements [memory.Store]. It replaces title, system prompt and model, sets
// Updated to now and returns the stored session; channel, partner and scope never change.
func (s *Store) UpdateSession(ctx context.Context, sess memory.Session) (memory.Session, error) {
	if err := memory.ValidateSession(sess); err != nil {
		return memory.Session{}, fmt.Errorf("update session: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return memory.Session{}, fmt.Errorf("update session %q: %w", sess.ID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, system_prompt = ?, model = ?, updated = ? WHERE id = ?`,
		sess.Title, sess.SystemPrompt, sess.Model, toNanos(s.now()), sess.ID)
	if err != nil {
		return memory.Session{}, fmt.Errorf("update session %q: %w", sess.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return memory.Session{}, fmt.Errorf("update session %q: %w", sess.ID, err)
	} else if n == 0 {
		return memory.Session{}, fmt.Errorf("session %q: %w", sess.ID, memory.ErrNotFound)
	}
	out, err := scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, sess.ID))
	if err != nil {
		return memory.Session{}, fmt.Errorf("update session %q: %w", sess.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return memory.Session{}, fmt.Errorf("update session %q: commit: %w", sess.ID, err)
	}
	return out, nil
}

// AppendEvents implements [memory.Store]: one write transaction for the whole batch. A zero Layer
// is stored as [memory.LayerL1]; any other layer but L1 or L2 is [memory.ErrInvalid]. Every
// event is tokenized (Options.Tokenize) before the transaction starts: a tokenizer error fails
// the call and nothing is stored.
//
// Each entry of an event's Blocks is stored as a new block held by that event, in the same
// transaction, with the event's scope and time; a block's Text is indexed with the event. An
// unknown kind, Data on a text block, Data above [MaxBlockData] or a malformed ID is
// [memory.ErrInvalid]; a given ID that is taken is [memory.ErrExists]; either way nothing is
// stored. The returned events carry their blocks with ID, Size, Scope, Holder and Created set,
// and Data nil.
func (s *Store) AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	b, err := s.prepareAppend(evs)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("append events: begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.insertAppend(ctx, tx, b); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("append events: commit: %w", err)
	}
	s.appendCommitted(b)
	return b.out, nil
}

// appendBatch is a batch of events checked and tokenized for [Store.AppendEvents], ready to be
// inserted in a write transaction.
type appendBatch struct {
	in           []memory.Event // as given (their Blocks carry Data)
	out          []memory.Event // as stored: ids are set by insertAppend
	calls, metas []sql.NullString
	toks, exps   []string
	now          time.Time
	eps          episodeChanges // what the batch did to episodes_fts
}

// prepareAppend checks and tokenizes events outside any transaction (see AppendEvents).
func (s *Store) prepareAppend(evs []memory.Event) (*appendBatch, error) {
	for i, e := range evs {
		if err := memory.ValidateEvent(e); err != nil {
			return nil, fmt.Errorf("append events: event %d: %w", i, err)
		}
		if e.Layer != 0 && !e.Layer.Valid() {
			return nil, fmt.Errorf("append events: event %d: layer %d is not L1 or L2: %w", i, int(e.Layer), memory.ErrInvalid)
		}
		for j, b := range e.Blocks {
			if err := checkNewBlock(b); err != nil {
				return nil, fmt.Errorf("append events: event %d: block %d: %w", i, j, err)
			}
		}
	}
	now := s.now()
	b := &appendBatch{in: evs, out: make([]memory.Event, len(evs)), calls: make([]sql.NullString, len(evs)),
		metas: make([]sql.NullString, len(evs)), toks: make([]string, len(evs)), exps: make([]string, len(evs)), now: now}
	for i, e := range evs {
		if e.Time.IsZero() {
			e.Time = now
		}
		e.Time = fromNanos(toNanos(e.Time))
		if e.Layer == 0 {
			e.Layer = memory.LayerL1
		}
		if !e.LastAccess.IsZero() {
			e.LastAccess = fromNanos(toNanos(e.LastAccess))
		}
		if len(e.Meta) == 0 {
			e.Meta = nil
		} else {
			m, err := json.Marshal(e.Meta)
			if err != nil {
				return nil, fmt.Errorf("append events: event %d: meta: %w", i, err)
			}
			b.metas[i] = sql.NullString{String: string(m), Valid: true}
			e.Meta = cloneMeta(e.Meta)
		}
		var err error
		if b.toks[i], err = memory.IndexTokens(s.tok, e); err != nil {
			return nil, fmt.Errorf("append events: event %d: tokenize: %w", i, err)
		}
		if b.toks[i], err = s.blockTokens(b.toks[i], e.Blocks); err != nil {
			return nil, fmt.Errorf("append events: event %d: tokenize blocks: %w", i, err)
		}
		b.exps[i] = s.expansion(e)
		if len(e.ToolCalls) == 0 {
			e.ToolCalls = nil
		} else {
			c, err := json.Marshal(e.ToolCalls)
			if err != nil {
				return nil, fmt.Errorf("append events: event %d: tool calls: %w", i, err)
			}
			b.calls[i] = sql.NullString{String: string(c), Valid: true}
			e.ToolCalls = append([]memory.ToolCall(nil), e.ToolCalls...)
		}
		b.out[i] = e
	}
	return b, nil
}

// insertAppend inserts a prepared batch in tx, a write transaction begun under s.cacheMu, and
// bumps its sessions' Updated time to the batch's now. The caller commits and then calls
// appendCommitted.
func (s *Store) insertAppend(ctx context.Context, tx *sql.Tx, b *appendBatch) error {
	out := b.out
	seen := make(map[string]bool)
	for _, e := range out {
		if seen[e.Session] {
			continue
		}
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET updated = max(updated, ?) WHERE id = ?`, toNanos(b.now), e.Session)
		if err != nil {
			return fmt.Errorf("append events: session %q: %w", e.Session, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("append events: session %q: %w", e.Session, err)
		} else if n == 0 {
			return fmt.Errorf("append events: session %q: %w", e.Session, memory.ErrNotFound)
		}
		seen[e.Session] = true
	}

	sessions := make([]string, 0, len(seen))
	for id := range seen {
		sessions = append(sessions, id)
	}
	head, err := s.sessionHeads(ctx, tx, sessions)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events (session, turn_id, time, role, content, reasoning,
		tool_calls, tool_call_id, tool_name, tool_status, channel, partner, scene, scope_kind, scope_group, tokens,
		meta, layer, accesses, last_access, parent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	defer ins.Close()
	fts, err := tx.PrepareContext(ctx, `INSERT INTO events_fts (rowid, tokens, expansion) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	defer fts.Close()
	var blocks *blockInserter
	if slices.ContainsFunc(out, func(e memory.Event) bool { return len(e.Blocks) > 0 }) {
		if blocks, err = prepareBlockInserter(ctx, tx); err != nil {
			return fmt.Errorf("append events: %w", err)
		}
		defer blocks.close()
	}
	for i := range out {
		e := &out[i]
		e.Parent, e.OffBranch = head[e.Session], false
		res, err := ins.ExecContext(ctx, e.Session, e.TurnID, toNanos(e.Time), string(e.Role), e.Content, e.Reasoning,
			b.calls[i], e.ToolCallID, e.ToolName, e.ToolStatus, e.Channel, e.Partner, e.Scene,
			int(e.Scope.Kind), e.Scope.Group, e.Tokens, b.metas[i], int(e.Layer), e.Accesses, lastAccessNanos(e.LastAccess), e.Parent)
		if err != nil {
			return fmt.Errorf("append events: event %d: %w", i, err)
		}
		if e.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("append events: event %d: %w", i, err)
		}
		head[e.Session] = e.ID
		if _, err := fts.ExecContext(ctx, e.ID, b.toks[i], b.exps[i]); err != nil {
			return fmt.Errorf("append events: event %d: full-text index: %w", i, err)
		}
		if len(e.Blocks) > 0 {
			if e.Blocks, err = blocks.insert(ctx, *e, b.in[i].Blocks); err != nil {
				return fmt.Errorf("append events: event %d: %w", i, err)
			}
		}
	}
	if err := appendEpisodes(ctx, tx, out, &b.eps); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// appendCommitted updates the caches after a batch's transaction committed (under s.cacheMu).
func (s *Store) appendCommitted(b *appendBatch) {
	s.tails.appended(b.out)
	for _, e := range b.out { // in id order: each session's last is its head
		s.heads[e.Session] = e.ID
	}
	var added float64
	for i := range b.toks {
		added += indexLen(b.toks[i], b.exps[i])
	}
	s.stats.add(len(b.toks), added)
	docs := make([][]string, len(b.toks))
	for i := range b.toks {
		docs[i] = []string{b.toks[i], b.exps[i]}
	}
	s.dfs.appended(docs...)
	ids, texts := make([]int64, len(b.out)), make([]docText, len(b.out))
	for i := range b.out {
		ids[i], texts[i] = b.out[i].ID, docText{tokens: b.toks[i], expansion: b.exps[i]}
	}
	s.docs.put(ids, texts)
	b.eps.committed(&s.epDFs)
	s.ckpt.committed()
}

// cloneMeta copies a metadata map (nil when empty).
func cloneMeta(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// lastAccessNanos is the stored form of a last access time: 0 for never.
func lastAccessNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return toNanos(t)
}

const eventCols = `id, session, turn_id, time, role, content, reasoning, tool_calls, tool_call_id, tool_name,
	tool_status, channel, partner, scene, scope_kind, scope_group, tokens, meta, layer, accesses, last_access, distilled, parent, off_branch`

func scanEvent(sc scanner) (memory.Event, error) {
	var e memory.Event
	var t int64
	var role string
	var calls sql.NullString
	var kind, layer int
	var meta sql.NullString
	var last int64
	if err := sc.Scan(&e.ID, &e.Session, &e.TurnID, &t, &role, &e.Content, &e.Reasoning, &calls, &e.ToolCallID,
		&e.ToolName, &e.ToolStatus, &e.Channel, &e.Partner, &e.Scene, &kind, &e.Scope.Group, &e.Tokens,
		&meta, &layer, &e.Accesses, &last, &e.Distilled, &e.Parent, &e.OffBranch); err != nil {
		return memory.Event{}, err
	}
	e.Time, e.Role, e.Scope.Kind, e.Layer = fromNanos(t), memory.Role(role), memory.ScopeKind(kind), memory.Layer(layer)
	if last != 0 {
		e.LastAccess = fromNanos(last)
	}
	if meta.Valid && meta.String != "" && meta.String != "{}" {
		if err := json.Unmarshal([]byte(meta.String), &e.Meta); err != nil {
			return memory.Event{}, fmt.Errorf("event %d: meta: %w", e.ID, err)
		}
	}
	if calls.Valid && calls.String != "" {
		if err := json.Unmarshal([]byte(calls.String), &e.ToolCalls); err != nil {
			return memory.Event{}, fmt.Errorf("event %d: tool calls: %w", e.ID, err)
		}
	}
	return e, nil
}

// queryEvents runs a query that selects eventCols on the reader pool.
func (s *Store) queryEvents(ctx context.Context, query string, args ...any) ([]memory.Event, error) {
	return queryEventsWith(ctx, s.r, query, args...)
}

// queryEventsWith runs a query that selects eventCols through q (the pool or a transaction) and
// fills the events' Blocks (see [attachBlocks]).
func queryEventsWith(ctx context.Context, q querier, query string, args ...any) ([]memory.Event, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := attachBlocks(ctx, q, out); err != nil {
		return nil, err
	}
	return out, nil
}

// sessionExists reports whether a session is stored.
func (s *Store) sessionExists(ctx context.Context, id string) error {
	var one int
	err := s.r.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("session %q: %w", id, memory.ErrNotFound)
	}
	return err
}

// History implements [memory.Store]. An unknown session is ErrNotFound.
func (s *Store) History(ctx context.Context, session string, limit int) ([]memory.Event, error) {
	if evs, ok := s.tails.get(session, limit); ok {
		return evs, nil
	}
	gen := s.tails.generation(session)
	asked := limit
	if limit <= 0 {
		asked = -1
	} else if limit < s.tails.cap {
		asked = s.tails.cap // read a whole tail once, serve the next turns from memory
	}
	evs, err := s.queryEvents(ctx, `SELECT `+eventCols+` FROM
		(SELECT * FROM events WHERE session = ? AND off_branch = 0 ORDER BY id DESC LIMIT ?) ORDER BY id`, session, asked)
	if err != nil {
		return nil, fmt.Errorf("history of session %q: %w", session, err)
	}
	if len(evs) == 0 {
		if err := s.sessionExists(ctx, session); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	s.tails.install(session, gen, evs, asked < 0 || len(evs) < asked)
	if limit > 0 && len(evs) > limit {
		evs = evs[len(evs)-limit:]
	}
	return evs, nil
}

// CountEvents implements [memory.Store]. An unknown session is ErrNotFound.
func (s *Store) CountEvents(ctx context.Context, session string) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE session = ?`, session).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events of session %q: %w", session, err)
	}
	if n == 0 {
		if err := s.sessionExists(ctx, session); err != nil {
			return 0, fmt.Errorf("count events: %w", err)
		}
	}
	return n, nil
}

// SearchText returns up to limit events (limit <= 0: all) of every session whose indexed tokens
// contain every token of query (tokenized like events, with Options.Tokenize), best match first
// (FTS5 bm25), then by id. Each token is matched literally: FTS5 syntax characters in query
// (quotes, *, :, parentheses, AND/OR/NOT) carry no meaning. A query without tokens returns no
// events. It ignores scopes: callers that serve a non-owner viewer use [Store.SearchTerms].
func (s *Store) SearchText(ctx context.Context, query string, limit int) ([]memory.Event, error) {
	toks, err := s.tok(query)
	if err != nil {
		return nil, fmt.Errorf("search %q: tokenize: %w", query, err)
	}
	match := ftsPhrases(toks, " ")
	if match == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = -1
	}
	evs, err := s.queryEvents(ctx, `SELECT `+prefixCols("e.")+` FROM events_fts f JOIN events e ON e.id = f.rowid
		WHERE events_fts MATCH ? ORDER BY bm25(events_fts), e.id LIMIT ?`, match, limit)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	return evs, nil
}

// ftsPhrases turns tokens into an FTS5 query: every whitespace-separated part of a token becomes
// a quoted string (inner quotes doubled), each once, joined by sep (" " is AND, " OR " is OR).
func ftsPhrases(toks []string, sep string) string {
	var parts []string
	seen := make(map[string]bool)
	for _, t := range toks {
		for _, w := range strings.Fields(t) {
			if seen[w] {
				continue
			}
			seen[w] = true
			parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
		}
	}
	return strings.Join(parts, sep)
}

// prefixCols qualifies eventCols with a table alias.
func prefixCols(p string) string {
	if p == "e." {
		return eventColsE // every caller's alias: built once, not per query
	}
	return joinPrefixed(p)
}

// eventColsE is prefixCols("e.").
var eventColsE = joinPrefixed("e.")

func joinPrefixed(p string) string {
	cols := strings.Split(eventCols, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

var _ memory.Store = (*Store)(nil)

// RecentContents returns the first 2,000 characters of the contents of the newest limit events of
// any session, newest first (a cheap look at what the owner writes lately, e.g. which language
// assets to load at start; a pasted document costs no more than a line).
func (s *Store) RecentContents(ctx context.Context, limit int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT substr(content, 1, 2000) FROM events ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("recent contents: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("recent contents: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
