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

// Mem is an in-memory [memory.Store] with the semantics of the SQLite store: validation, atomic
// batches, ErrNotFound/ErrExists, ordering and UTC nanosecond times. It is safe for concurrent use.
// After Close every method fails.
type Mem struct {
	clock func() time.Time

	mu       sync.Mutex
	closed   bool
	nextID   int64
	sessions map[string]memory.Session
	events   map[string][]memory.Event // per session, in id order
	settings map[string]string
}

// NewMem returns an empty in-memory store. clock supplies "now" (nil means time.Now).
func NewMem(clock func() time.Time) *Mem {
	if clock == nil {
		clock = time.Now
	}
	return &Mem{
		clock:    clock,
		sessions: make(map[string]memory.Session),
		events:   make(map[string][]memory.Event),
		settings: make(map[string]string),
	}
}

// errClosed is returned by every method of a closed Mem.
var errClosed = errors.New("memory store is closed")

// utc normalises t to what a store returns: UTC, nanosecond precision, no monotonic reading.
func utc(t time.Time) time.Time { return time.Unix(0, t.UnixNano()).UTC() }

// copyEvent returns e with its own ToolCalls slice (nil when empty).
func copyEvent(e memory.Event) memory.Event {
	if len(e.ToolCalls) == 0 {
		e.ToolCalls = nil
	} else {
		e.ToolCalls = append([]memory.ToolCall(nil), e.ToolCalls...)
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
// Updated to now.
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

// AppendEvents implements [memory.Store]: the batch is stored entirely or not at all.
func (m *Mem) AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, nil
	}
	for i, e := range evs {
		if err := memory.ValidateEvent(e); err != nil {
			return nil, fmt.Errorf("append events: event %d: %w", i, err)
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
		m.nextID++
		e.ID = m.nextID
		out[i] = e
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
