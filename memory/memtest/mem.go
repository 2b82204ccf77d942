// Package memtest holds the [memory.Store] conformance suite ([RunStoreTests]) and an in-memory
// Store ([Mem]) for other packages' unit tests. Every Store implementation runs the suite, so they
// all keep the same semantics (restic's backend-test pattern).
//
// The package imports only the memory package and the standard library.
package memtest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Mem is an in-memory [memory.Store], [memory.Index] and [memory.Layers] with the semantics of
// the SQLite store: validation, atomic batches, ErrNotFound/ErrExists, ordering, UTC nanosecond
// times, scope filters and BM25 ranking (computed naively, in Go). It is safe for concurrent use.
// After Close every method fails.
type Mem struct {
	clock func() time.Time
	tok   memory.Tokenizer

	mu       sync.Mutex
	closed   bool
	nextID   int64
	sessions map[string]memory.Session
	events   map[string][]memory.Event // per session, in id order
	where    map[int64]position        // every event's place in events
	indexed  map[int64]string          // every event's space-joined index tokens
	settings map[string]string
}

// position locates an event: events[session][index].
type position struct {
	session string
	index   int
}

// MemOptions configures [NewMemWith]. The zero value is usable.
type MemOptions struct {
	// Clock supplies "now"; nil means time.Now.
	Clock func() time.Time
	// Tokenize tokenizes events for the index, as sqlite.Options.Tokenize does; nil means
	// [memory.DefaultTokenize].
	Tokenize func(text string) ([]string, error)
}

// NewMem returns an empty in-memory store. clock supplies "now" (nil means time.Now).
func NewMem(clock func() time.Time) *Mem {
	return NewMemWith(MemOptions{Clock: clock})
}

// NewMemWith returns an empty in-memory store configured by o.
func NewMemWith(o MemOptions) *Mem {
	m := &Mem{
		clock:    o.Clock,
		tok:      o.Tokenize,
		sessions: make(map[string]memory.Session),
		events:   make(map[string][]memory.Event),
		where:    make(map[int64]position),
		indexed:  make(map[int64]string),
		settings: make(map[string]string),
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	if m.tok == nil {
		m.tok = memory.DefaultTokenize
	}
	return m
}

// errClosed is returned by every method of a closed Mem.
var errClosed = errors.New("memory store is closed")

// utc normalises t to what a store returns: UTC, nanosecond precision, no monotonic reading.
func utc(t time.Time) time.Time { return time.Unix(0, t.UnixNano()).UTC() }

// copyEvent returns e with its own ToolCalls slice and Meta map (nil when empty).
func copyEvent(e memory.Event) memory.Event {
	if len(e.ToolCalls) == 0 {
		e.ToolCalls = nil
	} else {
		e.ToolCalls = append([]memory.ToolCall(nil), e.ToolCalls...)
	}
	if len(e.Meta) == 0 {
		e.Meta = nil
	} else {
		meta := make(map[string]string, len(e.Meta))
		for k, v := range e.Meta {
			meta[k] = v
		}
		e.Meta = meta
	}
	return e
}

// lock takes the mutex and fails when the store is closed; the caller unlocks on success.
func (m *Mem) lock() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errClosed
	}
	return nil
}

// CreateSession implements [memory.Store].
func (m *Mem) CreateSession(ctx context.Context, s memory.Session) (memory.Session, error) {
	if err := ctx.Err(); err != nil {
		return memory.Session{}, err
	}
	if err := memory.ValidateSession(s); err != nil {
		return memory.Session{}, fmt.Errorf("create session: %w", err)
	}
	if err := s.Scope.Validate(); err != nil {
		return memory.Session{}, fmt.Errorf("create session %q: scope: %w", s.ID, err)
	}
	if err := m.lock(); err != nil {
		return memory.Session{}, err
	}
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return memory.Session{}, fmt.Errorf("create session %q: %w", s.ID, memory.ErrExists)
	}
	now := m.clock()
	if s.Created.IsZero() {
		s.Created = now
	}
	if s.Updated.IsZero() {
		s.Updated = now
	}
	s.Created, s.Updated = utc(s.Created), utc(s.Updated)
	m.sessions[s.ID] = s
	return s, nil
}

// GetSession implements [memory.Store].
func (m *Mem) GetSession(ctx context.Context, id string) (memory.Session, error) {
	if err := ctx.Err(); err != nil {
		return memory.Session{}, err
	}
	if err := m.lock(); err != nil {
		return memory.Session{}, err
	}
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return memory.Session{}, fmt.Errorf("session %q: %w", id, memory.ErrNotFound)
	}
	return s, nil
}

// ListSessions implements [memory.Store]: most recently updated first, then by id.
func (m *Mem) ListSessions(ctx context.Context) ([]memory.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	var out []memory.Session
	for _, s := range m.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// UpdateSession implements [memory.Store]: it replaces title, system prompt and model and sets
// Updated to now; channel, partner and scope never change.
func (m *Mem) UpdateSession(ctx context.Context, s memory.Session) (memory.Session, error) {
	if err := ctx.Err(); err != nil {
		return memory.Session{}, err
	}
	if err := memory.ValidateSession(s); err != nil {
		return memory.Session{}, fmt.Errorf("update session: %w", err)
	}
	if err := m.lock(); err != nil {
		return memory.Session{}, err
	}
	defer m.mu.Unlock()
	cur, ok := m.sessions[s.ID]
	if !ok {
		return memory.Session{}, fmt.Errorf("session %q: %w", s.ID, memory.ErrNotFound)
	}
	cur.Title, cur.SystemPrompt, cur.Model = s.Title, s.SystemPrompt, s.Model
	cur.Updated = utc(m.clock())
	m.sessions[s.ID] = cur
	return cur, nil
}

// AppendEvents implements [memory.Store]: the batch is stored entirely or not at all. A zero
// Layer is stored as L1; a tokenizer error fails the call.
func (m *Mem) AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, nil
	}
	toks := make([]string, len(evs))
	for i, e := range evs {
		if err := memory.ValidateEvent(e); err != nil {
			return nil, fmt.Errorf("append events: event %d: %w", i, err)
		}
		if e.Layer != 0 && !e.Layer.Valid() {
			return nil, fmt.Errorf("append events: event %d: layer %d is not L1 or L2: %w", i, int(e.Layer), memory.ErrInvalid)
		}
		var err error
		if toks[i], err = memory.IndexTokens(m.tok, e); err != nil {
			return nil, fmt.Errorf("append events: event %d: tokenize: %w", i, err)
		}
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	for _, e := range evs {
		if _, ok := m.sessions[e.Session]; !ok {
			return nil, fmt.Errorf("append events: session %q: %w", e.Session, memory.ErrNotFound)
		}
	}
	now := m.clock()
	out := make([]memory.Event, len(evs))
	for i, e := range evs {
		e = copyEvent(e)
		if e.Time.IsZero() {
			e.Time = now
		}
		e.Time = utc(e.Time)
		if e.Layer == 0 {
			e.Layer = memory.LayerL1
		}
		if !e.LastAccess.IsZero() {
			e.LastAccess = utc(e.LastAccess)
		}
		m.nextID++
		e.ID = m.nextID
		e.Parent, e.OffBranch = 0, false // Mem keeps one branch: each event follows the previous one
		if prev := m.events[e.Session]; len(prev) > 0 {
			e.Parent = prev[len(prev)-1].ID
		}
		out[i] = e
		m.where[e.ID] = position{e.Session, len(m.events[e.Session])}
		m.indexed[e.ID] = toks[i]
		m.events[e.Session] = append(m.events[e.Session], copyEvent(e))
		s := m.sessions[e.Session]
		if u := utc(now); u.After(s.Updated) {
			s.Updated = u
			m.sessions[e.Session] = s
		}
	}
	return out, nil
}

// History implements [memory.Store]. An unknown session is ErrNotFound.
func (m *Mem) History(ctx context.Context, session string, limit int) ([]memory.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	if _, ok := m.sessions[session]; !ok {
		return nil, fmt.Errorf("history: session %q: %w", session, memory.ErrNotFound)
	}
	evs := m.events[session]
	if limit > 0 && len(evs) > limit {
		evs = evs[len(evs)-limit:]
	}
	var out []memory.Event
	for _, e := range evs {
		out = append(out, copyEvent(e))
	}
	return out, nil
}

// CountEvents implements [memory.Store]. An unknown session is ErrNotFound.
func (m *Mem) CountEvents(ctx context.Context, session string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := m.lock(); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	if _, ok := m.sessions[session]; !ok {
		return 0, fmt.Errorf("count events: session %q: %w", session, memory.ErrNotFound)
	}
	return len(m.events[session]), nil
}

// GetSetting implements [memory.Store].
func (m *Mem) GetSetting(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := m.lock(); err != nil {
		return "", err
	}
	defer m.mu.Unlock()
	v, ok := m.settings[key]
	if !ok {
		return "", fmt.Errorf("setting %q: %w", key, memory.ErrNotFound)
	}
	return v, nil
}

// SetSetting implements [memory.Store].
func (m *Mem) SetSetting(ctx context.Context, key, value string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	m.settings[key] = value
	return nil
}

// DeleteSetting implements [memory.Store].
func (m *Mem) DeleteSetting(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.settings[key]; !ok {
		return fmt.Errorf("setting %q: %w", key, memory.ErrNotFound)
	}
	delete(m.settings, key)
	return nil
}

// ListSettings implements [memory.Store].
func (m *Mem) ListSettings(ctx context.Context, prefix string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	out := make(map[string]string)
	for k, v := range m.settings {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

// Close implements [memory.Store]; it is safe to call more than once.
func (m *Mem) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

var _ memory.Store = (*Mem)(nil)
