package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// Client tools on /v1 (docs/api.md): a request's `tools` are offered to the model beside the
// agent's own; when the model calls one, the answer is what an OpenAI server answers — the
// assistant message with `tool_calls`, finish_reason "tool_calls" — and the kernel never runs it.
// The turn waits (bounded by the kernel's tool timeout) for the client's next request, whose
// trailing `tool` messages answer the calls by tool_call_id; that request's answer is the rest of
// the same turn. The calls and results are stored by the turn, so the resent messages are not
// ingested again.

// parseClientTools reads `tools` and `tool_choice` into out (tool_choice "none" offers none).
func parseClientTools(in completionRequest, out *client.CompletionRequest) (string, error) {
	if !present(in.Tools) {
		return "", nil
	}
	var choice string
	if present(in.ToolChoice) {
		_ = json.Unmarshal(in.ToolChoice, &choice) // an object names one tool: offered like the rest
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(in.Tools, &tools); err != nil {
		return "tools", fmt.Errorf("tools must be an array of {\"type\":\"function\",\"function\":{…}}: %v", err)
	}
	if choice == "none" {
		return "", nil
	}
	for i, t := range tools {
		if t.Type != "function" {
			return fmt.Sprintf("tools[%d].type", i), fmt.Errorf("tools[%d]: type %q is not supported (function)", i, t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			return fmt.Sprintf("tools[%d].function.name", i), fmt.Errorf("tools[%d]: function name %q must match ^[a-zA-Z0-9_-]{1,64}$", i, clipModel(t.Function.Name))
		}
		out.ClientTools = append(out.ClientTools, client.ClientTool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return "", nil
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// v1Wait bounds how long a turn waiting for its client's tool results is kept for the next
// request; the kernel's own tool timeout ends the wait first when it is shorter.
const v1Wait = 10 * time.Minute

// v1Turn is a turn with client tools, read by one request after another.
type v1Turn struct {
	mu      sync.Mutex
	events  []client.ChatEvent
	changed chan struct{}
	done    bool
	res     client.ChatResult
	err     error
	turnID  string
	cancel  context.CancelFunc
	reader  bool     // a request is reading it
	from    v1Client // whose turn it is: only its client answers its calls
}

func newV1Turn(cancel context.CancelFunc) *v1Turn {
	return &v1Turn{changed: make(chan struct{}), cancel: cancel}
}

func (t *v1Turn) emit(ev client.ChatEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ev.Type == client.EventTurn {
		t.turnID = ev.TurnID
	}
	t.events = append(t.events, ev)
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *v1Turn) finish(res client.ChatResult, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done, t.res, t.err = true, res, err
	close(t.changed)
	t.changed = make(chan struct{})
}

// next returns the events since from, whether the turn ended, and a channel closed on change.
func (t *v1Turn) next(from int) ([]client.ChatEvent, bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.events[from:], t.done, t.changed
}

// v1Turns are the turns waiting for their client's tool results, by call id.
type v1Turns struct {
	mu    sync.Mutex
	calls map[string]*v1Turn
}

func (p *v1Turns) put(ids []string, t *v1Turn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string]*v1Turn{}
	}
	for _, id := range ids {
		p.calls[id] = t
	}
}

// drop forgets every call of t.
func (p *v1Turns) drop(t *v1Turn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, wt := range p.calls {
		if wt == t {
			delete(p.calls, id)
		}
	}
}

// take removes and returns the turn of client from waiting for call id (nil when another
// client's turn waits for it: that one keeps waiting).
func (p *v1Turns) take(id string, from v1Client) *v1Turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.calls[id]
	if t == nil || t.from != from {
		return nil
	}
	delete(p.calls, id)
	return t
}

// completeWithTools runs a request with client tools: the turn runs apart from the request (it
// outlives it while the client runs its tools), and this request reads it up to its end or its
// first batch of client tool calls.
func (s *Server) completeWithTools(w http.ResponseWriter, r *http.Request, req client.CompletionRequest, model string, created int64, stream, withUsage bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), v1Wait)
	t := newV1Turn(cancel)
	t.from = clientOf(r)
	go func() {
		res, err := s.b.Complete(ctx, req, t.emit)
		t.finish(res, err)
		s.v1turns.drop(t) // calls it never got answers for are gone with it
		cancel()
	}()
	s.readV1Turn(w, r, t, 0, model, created, stream, withUsage)
}

// continueWithTools answers the waiting calls with the request's trailing tool messages and reads
// the rest of their turn.
func (s *Server) continueWithTools(w http.ResponseWriter, r *http.Request, in completionRequest, model string, created int64, withUsage bool) {
	var t *v1Turn
	i := len(in.Messages)
	for i > 0 && in.Messages[i-1].Role == "tool" {
		i--
	}
	for _, m := range in.Messages[i:] {
		wt := s.v1turns.take(m.ToolCallID, clientOf(r))
		if wt == nil || (t != nil && wt != t) {
			writeOpenAIError(w, http.StatusConflict, fmt.Sprintf("tool_call_id %q answers no waiting call (its turn ended, timed out, or was answered already): send the conversation again as a new request", clipModel(m.ToolCallID)), "messages")
			return
		}
		t = wt
		text, err := flattenContent(m.Content)
		if err != nil {
			writeOpenAIError(w, http.StatusBadRequest, err.Error(), "messages")
			return
		}
		t.mu.Lock()
		turnID := t.turnID
		t.mu.Unlock()
		if err := s.b.AnswerToolCall(r.Context(), turnID, m.ToolCallID, client.ToolAnswer{Content: text}); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	t.mu.Lock()
	from := len(t.events)
	t.mu.Unlock()
	s.readV1Turn(w, r, t, from, model, created, in.Stream, withUsage)
}

// toolBatchGrace is how long a request waits, after the model's first client tool call, for the
// other calls of the same batch before it answers them to the client.
const toolBatchGrace = 100 * time.Millisecond

// readV1Turn answers the request from the turn's events from index from: its reply (streamed or
// whole) up to the turn's end, or the client tool calls of its next batch.
func (s *Server) readV1Turn(w http.ResponseWriter, r *http.Request, t *v1Turn, from int, model string, created int64, stream, withUsage bool) {
	var st *sseStream
	if stream {
		st = newSSE(w)
		defer st.close()
	}
	var text []byte
	var calls []completionToolCall
	var grace <-chan time.Time
	id := ""
	sent := false
	send := func(d chunkDelta, finish *string) {
		if !sent {
			sent = true
			st.event("", chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chunkChoice{{Delta: chunkDelta{Role: "assistant"}}}})
		}
		st.event("", chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chunkChoice{{Delta: d, FinishReason: finish}}})
	}
	for {
		evs, done, changed := t.next(from)
		from += len(evs)
		for _, ev := range evs {
			switch ev.Type {
			case client.EventTurn:
				id = completionID(ev.TurnID)
			case client.EventDelta:
				if stream {
					send(chunkDelta{Content: ev.Text}, nil)
				} else {
					text = append(text, ev.Text...)
				}
			case client.EventToolRequest:
				if ev.Tool != nil {
					calls = append(calls, completionToolCall{ID: ev.Tool.ID, Type: "function", Function: completionFunction{Name: ev.Tool.Name, Arguments: ev.Tool.Arguments}})
					if grace == nil {
						grace = time.After(toolBatchGrace)
					}
				}
			}
		}
		if id == "" {
			id = completionID("")
		}
		if done && len(calls) == 0 {
			t.mu.Lock()
			res, err := t.res, t.err
			t.mu.Unlock()
			if err != nil {
				if stream && sent {
					status, msg := errorStatus(err)
					st.event("", openAIError{Error: openAIErrorDetail{Message: msg, Type: openAIErrorType(status)}})
					return
				}
				s.fail(w, r, err)
				return
			}
			stop := "stop"
			if stream {
				if !sent && res.Text != "" {
					send(chunkDelta{Content: res.Text}, nil)
				}
				send(chunkDelta{}, &stop)
				if withUsage {
					u := usageOut(res.Usage)
					st.event("", chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chunkChoice{}, Usage: &u})
				}
				st.write([]byte("data: [DONE]\n\n"), false)
				return
			}
			if len(text) == 0 {
				text = []byte(res.Text)
			}
			writeJSON(w, http.StatusOK, completion{ID: id, Object: "chat.completion", Created: created, Model: model,
				Choices: []completionChoice{{Message: completionMessageOut{Role: "assistant", Content: res.Text}, FinishReason: stop}}, Usage: usageOut(res.Usage)})
			return
		}
		select {
		case <-changed:
			continue
		case <-grace:
		case <-r.Context().Done():
			if len(calls) == 0 && !done {
				t.cancel() // the client left before the turn asked anything of it
			}
			return
		}
		// The batch: hand the calls to the client; the turn waits for the next request.
		ids := make([]string, len(calls))
		for i, c := range calls {
			ids[i] = c.ID
		}
		s.v1turns.put(ids, t)
		finish := "tool_calls"
		if stream {
			if !sent {
				send(chunkDelta{}, nil)
			}
			for i, c := range calls {
				st.event("", chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
					Choices: []chunkChoice{{Delta: chunkDelta{ToolCalls: []completionToolCall{withIndex(c, i)}}}}})
			}
			send(chunkDelta{}, &finish)
			st.write([]byte("data: [DONE]\n\n"), false)
			return
		}
		writeJSON(w, http.StatusOK, completion{ID: id, Object: "chat.completion", Created: created, Model: model,
			Choices: []completionChoice{{Message: completionMessageOut{Role: "assistant", Content: string(text), ToolCalls: calls}, FinishReason: finish}}})
		return
	}
}

// completionToolCall is a call in an OpenAI answer (Index only in stream chunks).
type completionToolCall struct {
	Index    *int               `json:"index,omitempty"`
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function completionFunction `json:"function"`
}

type completionFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func withIndex(c completionToolCall, i int) completionToolCall {
	c.Index = &i
	return c
}
