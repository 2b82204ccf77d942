// Package clienttest is a fake kernel for testing API clients (kernel/client, waiter, the GUI in
// client mode): an http.Handler that implements the /api/v1 routes of docs/api.md by hand over
// in-memory state, and a helper that serves a handler on a real unix socket.
//
// It imports only the standard library and kernel/client. A Fake is safe for concurrent use.
package clienttest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// Request is one request the fake received.
type Request struct {
	Method        string
	Path          string // URL path with the query, e.g. /api/v1/sessions/main/history?limit=2
	Authorization string
	Body          string
}

// ChatFunc produces the events of one turn after the fake has sent the "turn" event. It sends
// events with send and returns when the turn is over; it must send a final or error event unless
// it means to test a stream that ends early. ctx ends when the client goes away or the turn is
// cancelled.
type ChatFunc func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent))

// Fake is an in-memory kernel behind the HTTP API. Create it with [New]; set the exported fields
// before serving.
type Fake struct {
	// Token, when set, is the bearer token every route but health requires.
	Token string
	// Chat, when set, replaces the default turn (which calls the time_now tool and answers
	// "PONG: " + input, or fails with "no provider configured" while there is no provider).
	Chat ChatFunc

	mu          sync.Mutex
	requests    []Request
	providers   map[string]client.ProviderConfig
	sessions    map[string]client.Session
	history     map[string][]client.Message
	tools       []client.Tool
	windows     map[string]client.Window
	memory      []client.MemoryHit
	turns       map[string]context.CancelFunc
	plugins     map[string]*fakePlugin // plugins.go
	graph       *fakeGraph             // graph.go
	thumbs      map[string][]byte      // block id → thumbnail PNG (SetThumbnail)
	desktop     fakeDesktop            // desktop.go
	approvals   fakeApprovals          // approval.go
	prompt      fakePrompt             // prompt.go
	uploads     map[string]fakeUpload  // uploads.go
	clientTools fakeClientTools        // clienttools.go
	nextID      int
	started     time.Time
}

// New returns a fake kernel with a "main" session and one builtin tool, time_now.
func New() *Fake {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Fake{
		providers: map[string]client.ProviderConfig{},
		sessions:  map[string]client.Session{"main": {ID: "main", Title: "Main", Created: now, Updated: now}},
		history:   map[string][]client.Message{},
		windows:   map[string]client.Window{},
		tools: []client.Tool{{
			Name: "time_now", Description: "Current local time.\nNo arguments.",
			Parameters: map[string]any{"type": "object"}, ParallelSafe: true, Source: "builtin",
		}},
		turns:   map[string]context.CancelFunc{},
		started: now,
	}
}

// Requests returns the requests received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// ProviderConfig returns a provider as stored, key included, and whether it exists.
func (f *Fake) ProviderConfig(name string) (client.ProviderConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.providers[name]
	return p, ok
}

// ServeUnix serves h on a unix socket in a fresh short temporary directory and returns the socket
// path. The server and directory are removed when the test ends.
func ServeUnix(tb testing.TB, h http.Handler) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "w")
	if err != nil {
		tb.Fatal(err)
	}
	sock := filepath.Join(dir, "k.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = l
	srv.Start()
	tb.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		os.RemoveAll(dir)
	})
	return sock
}

// WriteError writes the API's error shape.
func WriteError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": client.Error{Status: status, Message: msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body strictly, as the kernel does; it writes the 400 itself.
func decode(w http.ResponseWriter, body []byte, v any) bool {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

// ServeHTTP implements the /api/v1 routes.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/api/v1/uploads" {
		f.upload(w, r) // uploads.go: streamed, not read into a request body
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		WriteError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, Request{
		Method: r.Method, Path: r.URL.RequestURI(), Authorization: r.Header.Get("Authorization"), Body: string(body),
	})
	f.mu.Unlock()

	route := r.Method + " " + r.URL.Path
	if route == "GET /api/v1/health" {
		writeJSON(w, http.StatusOK, client.Health{OK: true, Version: "fake", Ready: true})
		return
	}
	if f.Token != "" && r.Header.Get("Authorization") != "Bearer "+f.Token {
		WriteError(w, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/"), "/")
	switch {
	case route == "GET /api/v1/status":
		f.status(w)
	case route == "GET /api/v1/prompt" || route == "PUT /api/v1/prompt":
		f.promptRoute(w, r, body) // prompt.go
	case route == "POST /api/v1/chat":
		f.chat(w, r, body)
	case r.Method == http.MethodPost && len(parts) == 4 && parts[0] == "turns" && parts[2] == "tools":
		f.answerToolCall(w, body, parts[1], parts[3])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "turns" && parts[2] == "cancel":
		f.cancel(w, parts[1])
	case route == "GET /api/v1/sessions":
		f.listSessions(w)
	case route == "POST /api/v1/sessions":
		f.createSession(w, body)
	case r.Method == http.MethodPut && len(parts) == 3 && parts[0] == "sessions" && parts[2] == "instructions":
		f.setInstructions(w, parts[1], body)
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "sessions" && parts[2] == "history":
		f.getHistory(w, r, parts[1])
	case route == "POST /api/v1/pause":
		f.setPaused(w, body)
	case route == "POST /api/v1/providers/test":
		f.testProvider(w, body)
	case route == "GET /api/v1/providers/detect":
		f.detectProviders(w)
	case route == "GET /api/v1/providers":
		f.listProviders(w)
	case route == "POST /api/v1/providers":
		f.addProvider(w, body)
	case r.Method == http.MethodDelete && len(parts) == 2 && parts[0] == "providers":
		f.removeProvider(w, parts[1])
	case route == "POST /api/v1/speech":
		speech(w, body) // speech.go
	case route == "GET /api/v1/tools":
		f.mu.Lock()
		tools := append([]client.Tool(nil), f.tools...)
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
	case route == "GET /api/v1/window":
		f.window(w, r)
	case route == "GET /api/v1/memory/search":
		f.searchMemory(w, r)
	case parts[0] == "memory" && len(parts) > 1:
		f.graphRoute(w, r, parts, body)
	case parts[0] == "plugins":
		f.pluginRoute(w, r, parts, body)
	case parts[0] == "approvals":
		f.approvalRoute(w, r, parts, body)
	default:
		WriteError(w, http.StatusNotFound, "no route "+route)
	}
}

func (f *Fake) status(w http.ResponseWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, http.StatusOK, client.Status{
		Version: "fake", PID: 4242, DataDir: "/data", Socket: "/run/homed.sock", Started: f.started,
		Providers: len(f.providers), Sessions: len(f.sessions), Tools: len(f.tools),
		Ready: []string{"store", "api"}, Pending: []string{}, ActiveTurns: len(f.turns), Paused: f.desktop.paused,
		MaxUploadBytes: MaxUploadBytes,
	})
}

func (f *Fake) chat(w http.ResponseWriter, r *http.Request, body []byte) {
	var req client.ChatRequest
	if !decode(w, body, &req) {
		return
	}
	if req.Session == "" {
		req.Session = "main"
	}
	if !f.takeUploads(w, req.Attachments) {
		return
	}
	var voice []string // voice messages: the fake, like a kernel without a speech model, keeps them untranscribed
	for _, a := range req.Attachments {
		if a.Kind == "audio" {
			voice = append(voice, a.Name)
		}
	}
	if strings.TrimSpace(req.Input) == "" && len(voice) == 0 {
		WriteError(w, http.StatusBadRequest, "empty input")
		return
	}
	if strings.TrimSpace(req.Input) == "" {
		req.Input = "(a voice message that could not be transcribed)"
	}
	if f.refusePaused(w, req.Session) {
		return
	}
	f.mu.Lock()
	_, ok := f.sessions[req.Session]
	f.nextID++
	turnID := "t" + strconv.Itoa(f.nextID)
	ctx, cancel := context.WithCancel(r.Context())
	if ok {
		f.turns[turnID] = cancel
	}
	f.mu.Unlock()
	defer func() {
		cancel()
		f.mu.Lock()
		delete(f.turns, turnID)
		f.mu.Unlock()
	}()
	if !ok {
		WriteError(w, http.StatusNotFound, "unknown session "+strconv.Quote(req.Session))
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(ev client.ChatEvent) {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(client.ChatEvent{Type: client.EventTurn, TurnID: turnID, Session: req.Session})
	for _, name := range voice {
		send(client.ChatEvent{Type: client.EventNotice, TurnID: turnID, Session: req.Session,
			Text: name + " was not transcribed: no speech-to-text model is installed. It is kept as audio."})
	}
	run := f.Chat
	if run == nil {
		run = f.defaultTurn
	}
	run(ctx, req, turnID, send)
}

// defaultTurn calls time_now and answers "PONG: " + input, recording the exchange in history.
func (f *Fake) defaultTurn(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
	f.mu.Lock()
	nprov := len(f.providers)
	f.mu.Unlock()
	if nprov == 0 {
		send(client.ChatEvent{Type: client.EventError, TurnID: turnID,
			Text: "no provider configured: add one with `waiter provider add`"})
		return
	}
	call := &client.ToolEvent{ID: "c1", Name: "time_now", Arguments: "{}", Status: "running"}
	send(client.ChatEvent{Type: client.EventToolCall, TurnID: turnID, Tool: call})
	done := *call
	done.Result, done.Status = "2026-01-02T03:04:05Z", "ok"
	send(client.ChatEvent{Type: client.EventToolResult, TurnID: turnID, Tool: &done})
	reply := "PONG: " + req.Input
	send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: "PONG: "})
	send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: req.Input})
	if ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	t := f.started.Add(time.Duration(f.nextID) * time.Minute)
	h := f.history[req.Session]
	h = append(h,
		client.Message{ID: int64(len(h) + 1), Time: t, Role: "user", Content: req.Input, TurnID: turnID},
		client.Message{ID: int64(len(h) + 2), Time: t, Role: "assistant", Content: reply, TurnID: turnID})
	f.history[req.Session] = h
	f.mu.Unlock()
	send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Session: req.Session, Text: reply})
}

func (f *Fake) cancel(w http.ResponseWriter, id string) {
	f.mu.Lock()
	c, ok := f.turns[id]
	f.mu.Unlock()
	if !ok {
		WriteError(w, http.StatusNotFound, "no running turn "+strconv.Quote(id))
		return
	}
	c()
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) listSessions(w http.ResponseWriter) {
	f.mu.Lock()
	out := make([]client.Session, 0, len(f.sessions))
	for _, s := range f.sessions {
		out = append(out, s)
	}
	f.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID < out[j].ID
	})
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (f *Fake) createSession(w http.ResponseWriter, body []byte) {
	var s client.Session
	if !decode(w, body, &s) {
		return
	}
	if s.Scope != "" && client.CheckScope(s.Scope) != nil {
		WriteError(w, http.StatusBadRequest, "scope must be private, public or group:<id>, got "+strconv.Quote(s.Scope))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.ID == "" {
		f.nextID++
		s.ID = "s" + strconv.Itoa(f.nextID)
	}
	if _, dup := f.sessions[s.ID]; dup {
		WriteError(w, http.StatusConflict, "session "+strconv.Quote(s.ID)+" exists")
		return
	}
	s.Created = f.started.Add(time.Hour)
	s.Updated = s.Created
	f.sessions[s.ID] = s
	writeJSON(w, http.StatusCreated, s)
}

func (f *Fake) setInstructions(w http.ResponseWriter, id string, body []byte) {
	var in client.Instructions
	if !decode(w, body, &in) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		WriteError(w, http.StatusNotFound, "unknown session "+strconv.Quote(id))
		return
	}
	s.SystemPrompt, s.Model = in.SystemPrompt, in.Model
	f.sessions[id] = s
	writeJSON(w, http.StatusOK, s)
}

func (f *Fake) getHistory(w http.ResponseWriter, r *http.Request, id string) {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			WriteError(w, http.StatusBadRequest, "bad limit "+strconv.Quote(v))
			return
		}
		limit = n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sessions[id]; !ok {
		WriteError(w, http.StatusNotFound, "unknown session "+strconv.Quote(id))
		return
	}
	h := append([]client.Message{}, f.history[id]...)
	q := r.URL.Query()
	if q.Has("page") || q.Has("before") { // a page of the branch, as the kernel pages it
		before, err := strconv.ParseInt(q.Get("before"), 10, 64)
		if q.Has("before") && (err != nil || before < 0) {
			WriteError(w, http.StatusBadRequest, "bad before "+strconv.Quote(q.Get("before")))
			return
		}
		if limit == 0 {
			limit = client.DefaultHistoryPage
		}
		for before > 0 && len(h) > 0 && h[len(h)-1].ID >= before {
			h = h[:len(h)-1]
		}
		more := len(h) > limit
		if more {
			h = h[len(h)-limit:]
		}
		writeJSON(w, http.StatusOK, client.HistoryPage{Messages: h, More: more})
		return
	}
	if limit > 0 && len(h) > limit {
		h = h[len(h)-limit:]
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": h})
}

func (f *Fake) listProviders(w http.ResponseWriter) {
	f.mu.Lock()
	out := make([]client.Provider, 0, len(f.providers))
	for _, p := range f.providers {
		out = append(out, client.Provider{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, Proxy: p.Proxy,
			Priority: p.Priority, HasKey: p.APIKey != ""})
	}
	f.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority < out[j].Priority
		}
		return out[i].Name < out[j].Name
	})
	writeJSON(w, http.StatusOK, map[string]any{"providers": out})
}

func (f *Fake) addProvider(w http.ResponseWriter, body []byte) {
	var p client.ProviderConfig
	if !decode(w, body, &p) {
		return
	}
	if p.Name == "" || p.BaseURL == "" || p.Model == "" {
		WriteError(w, http.StatusBadRequest, "provider needs name, base_url and model")
		return
	}
	f.mu.Lock()
	if old, ok := f.providers[p.Name]; ok && p.KeepKey && p.APIKey == "" {
		p.APIKey = old.APIKey // as the kernel does
	}
	p.KeepKey = false
	f.providers[p.Name] = p
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, client.Provider{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model,
		Proxy: p.Proxy, Priority: p.Priority, HasKey: p.APIKey != ""})
}

func (f *Fake) removeProvider(w http.ResponseWriter, name string) {
	f.mu.Lock()
	_, ok := f.providers[name]
	delete(f.providers, name)
	f.mu.Unlock()
	if !ok {
		WriteError(w, http.StatusNotFound, "unknown provider "+strconv.Quote(name))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
