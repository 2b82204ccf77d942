package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// memStore is an in-memory Store that records every AppendEvents call.
type memStore struct {
	mu       sync.Mutex
	sessions map[string]memory.Session
	events   []memory.Event
	commits  [][]memory.Event
}

func newMemStore(sessions ...memory.Session) *memStore {
	s := &memStore{sessions: map[string]memory.Session{}}
	for _, ss := range sessions {
		s.sessions[ss.ID] = ss
	}
	return s
}

func (s *memStore) GetSession(_ context.Context, id string) (memory.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[id]
	if !ok {
		return memory.Session{}, fmt.Errorf("session %s: %w", id, memory.ErrNotFound)
	}
	return ss, nil
}

func (s *memStore) AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]memory.Event, len(evs))
	for i, e := range evs {
		if _, ok := s.sessions[e.Session]; !ok {
			return nil, fmt.Errorf("session %s: %w", e.Session, memory.ErrNotFound)
		}
		e.ID = int64(len(s.events) + i + 1)
		out[i] = e
	}
	s.events = append(s.events, out...)
	s.commits = append(s.commits, out)
	return out, nil
}

func (s *memStore) History(_ context.Context, session string, limit int) ([]memory.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var evs []memory.Event
	for _, e := range s.events {
		if e.Session == session {
			evs = append(evs, e)
		}
	}
	if limit > 0 && len(evs) > limit {
		evs = evs[len(evs)-limit:]
	}
	return evs, nil
}

// Block returns a block an event brought, with the event's scope, as the real store does.
func (s *memStore) Block(_ context.Context, id string) (memory.Block, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.events {
		for _, b := range e.Blocks {
			if b.ID == id {
				b.Scope, b.Size = e.Scope, int64(len(b.Text))
				return b, nil
			}
		}
	}
	return memory.Block{}, fmt.Errorf("block %q: %w", id, memory.ErrNotFound)
}

func (s *memStore) all() []memory.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]memory.Event(nil), s.events...)
}

func (s *memStore) toolEvents() []memory.Event {
	var out []memory.Event
	for _, e := range s.all() {
		if e.Role == memory.RoleTool {
			out = append(out, e)
		}
	}
	return out
}

// step is one scripted LLM answer.
type step func(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error)

// fakeProvider answers with scripted steps, records the requests and rejects message lists that
// break the tool call pairing, like a real server answers 400.
type fakeProvider struct {
	mu    sync.Mutex
	steps []step
	reqs  []llm.Request
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) Models(context.Context) ([]string, error) { return []string{"fake"}, nil }

func (p *fakeProvider) Chat(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	n := len(p.reqs)
	var s step
	if n <= len(p.steps) {
		s = p.steps[n-1]
	}
	p.mu.Unlock()
	if err := serverPairingCheck(req.Messages); err != nil {
		return llm.Response{}, &llm.APIError{Provider: "fake", Status: 400, Message: err.Error()}
	}
	if s == nil {
		return llm.Response{}, &llm.APIError{Provider: "fake", Status: 500, Message: fmt.Sprintf("no scripted answer for request %d", n)}
	}
	return s(ctx, req, onDelta)
}

func (p *fakeProvider) requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.reqs...)
}

// serverPairingCheck is the rule an OpenAI-compatible server enforces: the tool messages right
// after an assistant message answer each of its calls exactly once; no other tool messages.
func serverPairingCheck(msgs []llm.Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "tool" {
			return fmt.Errorf("message %d: tool message %q does not follow an assistant tool call", i, m.ToolCallID)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, c := range m.ToolCalls {
			if c.ID == "" || want[c.ID] {
				return fmt.Errorf("message %d: empty or repeated tool call id %q", i, c.ID)
			}
			want[c.ID] = true
		}
		for i+1 < len(msgs) && msgs[i+1].Role == "tool" {
			i++
			id := msgs[i].ToolCallID
			if !want[id] {
				return fmt.Errorf("message %d: tool message %q answers no pending call", i, id)
			}
			delete(want, id)
		}
		if len(want) > 0 {
			return fmt.Errorf("assistant tool calls without results: %v", want)
		}
	}
	return nil
}

func text(s string) step {
	return func(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: "assistant", Content: s}, FinishReason: "stop", Usage: llm.Usage{TotalTokens: 10}}, nil
	}
}

func calls(cs ...llm.ToolCall) step {
	return func(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: "assistant", ToolCalls: cs}, FinishReason: "tool_calls", Usage: llm.Usage{TotalTokens: 10}}, nil
	}
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// funcTool is a Tool made of func fields.
type funcTool struct {
	name     string
	params   string
	parallel bool
	run      func(ctx context.Context, args json.RawMessage) (string, error)
}

func (f funcTool) Spec() llm.Tool {
	p := f.params
	if p == "" {
		p = `{"type":"object","properties":{}}`
	}
	return llm.Tool{Name: f.name, Description: f.name + " tool", Parameters: json.RawMessage(p)}
}
func (f funcTool) ParallelSafe() bool { return f.parallel }
func (f funcTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return f.run(ctx, args)
}

func echoTool(name string, parallel bool) funcTool {
	return funcTool{name: name, parallel: parallel, run: func(_ context.Context, args json.RawMessage) (string, error) {
		return name + ":" + string(args), nil
	}}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// harness bundles an agent with its fakes.
type harness struct {
	a     *Agent
	store *memStore
	prov  *fakeProvider
	clock *fakeClock
	logs  *strings.Builder
	mu    sync.Mutex
	evs   []Event
}

const testSession = "s1"

func newHarness(t *testing.T, opts Options, steps ...step) *harness {
	t.Helper()
	h := &harness{
		store: newMemStore(memory.Session{ID: testSession, SystemPrompt: "You are terse.", Model: "m-default"}),
		prov:  &fakeProvider{steps: steps},
		clock: &fakeClock{now: t0},
		logs:  &strings.Builder{},
	}
	opts.Store = h.store
	if opts.Provider == nil {
		opts.Provider = func(string) (llm.Provider, error) { return h.prov, nil }
	}
	opts.Clock = h.clock.Now
	opts.Logger = slog.New(slog.NewTextHandler(&lockedWriter{b: h.logs}, nil))
	h.a = New(opts)
	return h
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (h *harness) addTools(t *testing.T, tools ...Tool) {
	t.Helper()
	for _, tl := range tools {
		if err := h.a.AddTool(tl, "test"); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *harness) run(ctx context.Context, input string) (Result, error) {
	return h.a.Run(ctx, TurnRequest{Session: testSession, TurnID: "turn-1", Input: input, Channel: "waiter", Partner: "owner"},
		func(e Event) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.evs = append(h.evs, e)
		})
}

func (h *harness) emitted() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.evs...)
}

// checkInvariants asserts the pairing rule on the store, that every commit holding tool results
// also holds their assistant event, and that the self-check never had to repair anything.
func (h *harness) checkInvariants(t *testing.T) {
	t.Helper()
	if err := serverPairingCheck(historyMessages(h.store.all(), DefaultMaxResultBytes)); err != nil {
		t.Errorf("stored history breaks the pairing: %v", err)
	}
	for i, c := range h.store.commits {
		if c[0].Role == memory.RoleTool {
			t.Errorf("commit %d starts with a tool event; its assistant event was committed separately", i)
		}
		if err := serverPairingCheck(historyMessages(c, DefaultMaxResultBytes)); err != nil {
			t.Errorf("commit %d is not self-contained: %v", i, err)
		}
	}
	if n := h.a.Repairs(); n != 0 {
		t.Errorf("Repairs() = %d, want 0; log:\n%s", n, h.logs.String())
	}
}

func statuses(evs []memory.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ToolCallID+"="+e.ToolStatus)
	}
	return out
}

func errIs(err, target error) bool { return errors.Is(err, target) }
