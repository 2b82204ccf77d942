package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// sseStream writes a text/event-stream answer. It starts the answer (status 200, headers) lazily
// on the first event, so that a failure before any event can still be a plain JSON error. Safe
// for concurrent use (the keep-alive writes from its own goroutine).
type sseStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	started bool
	closed  bool // no more writes (the handler is finishing)
	failed  bool // a write failed: the client is gone
}

func newSSE(w http.ResponseWriter) *sseStream {
	return &sseStream{w: w, rc: http.NewResponseController(w)}
}

// isStarted reports whether the stream's headers were sent.
func (st *sseStream) isStarted() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.started
}

// write sends raw SSE text, starting the stream if needed, and flushes it.
func (st *sseStream) write(b []byte, onlyIfStarted bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.failed || (onlyIfStarted && !st.started) {
		return
	}
	if !st.started {
		h := st.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		st.w.WriteHeader(http.StatusOK)
		st.started = true
	}
	if _, err := st.w.Write(b); err != nil {
		st.failed = true
		return
	}
	if err := st.rc.Flush(); err != nil {
		st.failed = true
	}
}

// event sends `event: name` (omitted when empty) and `data: <v as JSON>`.
func (st *sseStream) event(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		// Every streamed value is a plain struct; this cannot happen.
		panic("api: marshal stream event: " + err.Error())
	}
	b := make([]byte, 0, len(name)+len(data)+16)
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	st.write(b, false)
}

// close stops all further writes (late events of a misbehaving backend, keep-alives).
func (st *sseStream) close() {
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
}

// keepAlive writes a `: ping` comment every s.pingEvery while the stream is open. The returned
// stop function ends the goroutine and waits for it.
func (s *Server) keepAlive(st *sseStream) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.pingEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				st.write([]byte(": ping\n\n"), true)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// handleChat runs one turn and streams its events. The backend emits turn, delta, reasoning,
// tool_call and tool_result events; the terminal final or error event is written here from
// Chat's results, unless the backend already emitted one.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req client.ChatRequest
	if err := s.decodeJSON(w, r, &req, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	voice := slices.ContainsFunc(req.Attachments, func(a client.Attachment) bool { return a.Kind == "audio" })
	if strings.TrimSpace(req.Input) == "" && req.Regenerate == 0 && !voice { // a regenerate has no input, a voice message says it
		s.writeError(w, r, http.StatusBadRequest, "input is empty")
		return
	}

	st := newSSE(w)
	stop := s.keepAlive(st)
	var (
		mu                      sync.Mutex // guards the state below against a backend emitting late
		turnID, session         string
		emitted, terminal, done bool
	)
	emit := func(ev client.ChatEvent) {
		mu.Lock()
		defer mu.Unlock()
		if terminal || done {
			return
		}
		switch ev.Type {
		case client.EventTurn:
			turnID, session = ev.TurnID, ev.Session
		case client.EventFinal, client.EventError:
			terminal = true
		}
		emitted = true
		st.event(ev.Type, ev)
	}
	res, err := s.b.Chat(r.Context(), req, emit)
	stop()
	mu.Lock()
	done = true
	e, term := emitted, terminal
	mu.Unlock()
	if res.TurnID == "" {
		res.TurnID = turnID
	}
	if res.Session == "" {
		res.Session = session
	}

	switch {
	case err != nil && !st.isStarted():
		st.close()
		s.fail(w, r, err)
	case term:
	case err != nil:
		_, msg := errorStatus(err)
		if errors.Is(err, context.Canceled) {
			msg = "turn cancelled"
		}
		s.log.Debug("api: turn failed", "turn", res.TurnID, "err", err)
		st.event(client.EventError, client.ChatEvent{Type: client.EventError, TurnID: res.TurnID, Session: res.Session, Text: msg})
	default:
		if !e {
			st.event(client.EventTurn, client.ChatEvent{Type: client.EventTurn, TurnID: res.TurnID, Session: res.Session})
		}
		st.event(client.EventFinal, client.ChatEvent{Type: client.EventFinal, TurnID: res.TurnID, Session: res.Session, Text: res.Text})
	}
	st.close()
}
