// Package llmtest provides [Server], a scripted OpenAI-compatible chat-completions server for
// tests of the kernel, served over real HTTP by net/http/httptest. Like real servers (and the
// independent smoke-test fake tools/fake_openai.py) it rejects with HTTP 400 requests that break
// the tool-call pairing rule and, unless [Options].Lenient is set, requests that real servers
// refuse: more than 128 tools, a function name outside ^[a-zA-Z0-9_-]{1,64}$, parameters that are
// not a valid JSON Schema object anywhere in the tree ("required": null, an array without
// items), and a prompt over the context length (128,000 tokens, counted as characters / 4). So
// kernel bugs surface in tests, not against api.openai.com.
package llmtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/llm"
)

// Pairing-rule messages, worded like OpenAI's (and fake_openai.py's) HTTP 400 answers.
const (
	MsgInsufficientToolMessages = "An assistant message with 'tool_calls' must be followed by tool messages " +
		"responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)"
	MsgOrphanToolMessage = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
)

// Reply scripts one answer to a chat request. The zero Reply answers with empty text.
type Reply struct {
	Text      string         // assistant text (streamed in at least two pieces)
	Reasoning string         // reasoning_content, sent before the text
	ToolCalls []llm.ToolCall // tool calls; an empty ID gets a generated one, empty Arguments "{}"
	// Status, when not 0 or 200, makes an error reply {"error":{"message":Message}}.
	Status  int
	Message string
	// RawBody is sent verbatim (with Status, or 200), e.g. garbage.
	RawBody    string
	RetryAfter string // Retry-After header value
	// Finish is the finish_reason of a reply without tool calls ("stop" when empty), e.g.
	// "length" for a reply cut at max_tokens or "content_filter" for a refusal.
	Finish string
	// Hang, for a streamed request, sends the first chunk (and the first piece of Text, if any)
	// and then holds the connection open until the client goes away or the server closes; for a
	// plain request it never answers.
	Hang bool
	// Delay is called before replying (e.g. to block on a channel the test controls). It must
	// return before the server can close.
	Delay func()
	Usage *llm.Usage // reported usage; nil reports 10/5/15
}

// Recorded is one request as the server received it.
type Recorded struct {
	Path     string
	Auth     string // the Authorization header
	Stream   bool
	Model    string
	Messages []llm.Message // Reasoning is set if the client sent reasoning_content or reasoning back
	Tools    []string      // names of the offered tools
	Raw      json.RawMessage
}

// Options configures a [Server]; the zero value is strict, like real servers.
type Options struct {
	// Lenient accepts any tools and any prompt length (the pairing rule still applies): for
	// tests of what the client does with a server that lets everything through.
	Lenient bool
	// ContextTokens is the model's context length in tokens (characters / 4 of the messages and
	// tools as sent); 0 means 128,000.
	ContextTokens int
}

// DefaultContextTokens is the context length a [Server] enforces by default.
const DefaultContextTokens = 128_000

// Server is a scripted fake OpenAI-compatible server. Its methods are safe for concurrent use.
type Server struct {
	opts      Options
	srv       *httptest.Server
	quit      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	queue   []Reply
	reqs    []Recorded
	chats   int
	changed chan struct{} // closed and replaced whenever a chat request arrives
	nextID  int
}

// NewServer starts a strict Server; it is closed in tb.Cleanup.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	return NewServerOptions(tb, Options{})
}

// NewServerOptions starts a Server configured by opts; it is closed in tb.Cleanup.
func NewServerOptions(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.ContextTokens <= 0 {
		opts.ContextTokens = DefaultContextTokens
	}
	s := &Server{opts: opts, quit: make(chan struct{}), changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// URL returns the base URL clients are configured with; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Script appends replies to the queue; each chat request that passes the pairing check consumes
// one. With an empty queue the server answers like fake_openai.py: "DONE <tool content>" after a
// tool message, a call of the offered "time" tool when the user mentions time, else "PONG <text>".
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns every request received so far (chat requests and others such as GET /models).
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// Wait blocks until at least n chat-completions requests have arrived or ctx is done.
func (s *Server) Wait(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, ch := s.chats, s.changed
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("llmtest: waiting for %d chat requests, got %d: %w", n, got, ctx.Err())
		}
	}
}

// Close releases hanging replies and shuts the server down. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.quit)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// wireMsg is a request message as clients send it.
type wireMsg struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
}

type wireReq struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []wireMsg `json:"messages"`
	Tools    []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// text returns a JSON string, null or array-of-parts content as text.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// images returns the data-URL images of array-of-parts content (MIME and bytes; a part that
// is not a base64 data URL gives an Image with no data, which the strict checks refuse).
func images(raw json.RawMessage) []llm.Image {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []llm.Image
	for _, p := range parts {
		if p.Type != "image_url" {
			continue
		}
		im := llm.Image{}
		if rest, ok := strings.CutPrefix(p.ImageURL.URL, "data:"); ok {
			if mime, data, ok := strings.Cut(rest, ";base64,"); ok {
				if b, err := base64.StdEncoding.DecodeString(data); err == nil {
					im = llm.Image{MIME: mime, Data: b}
				}
			}
		}
		out = append(out, im)
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error(), "")
		return
	}
	rec := Recorded{Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	isChat := r.Method == http.MethodPost && strings.HasSuffix(strings.TrimRight(r.URL.Path, "/"), "/chat/completions")
	var req wireReq
	parseErr := error(nil)
	if len(raw) > 0 {
		rec.Raw = json.RawMessage(raw)
		if parseErr = json.Unmarshal(raw, &req); parseErr == nil {
			rec.Stream, rec.Model = req.Stream, req.Model
			for _, m := range req.Messages {
				lm := llm.Message{Role: m.Role, Content: text(m.Content), ToolCallID: m.ToolCallID, Name: m.Name,
					Reasoning: m.ReasoningContent + m.Reasoning, Images: images(m.Content)}
				for _, tc := range m.ToolCalls {
					lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: text(tc.Function.Arguments)})
				}
				rec.Messages = append(rec.Messages, lm)
			}
			for _, t := range req.Tools {
				rec.Tools = append(rec.Tools, t.Function.Name)
			}
		}
	}
	// The refusal (if any) is decided before the request is recorded, and the reply is taken
	// from the queue in the same critical section as the recording: a request that Wait has
	// seen has its reply, so a later request can never take the reply scripted for it.
	status, refusal := http.StatusOK, ""
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(strings.TrimRight(r.URL.Path, "/"), "/models"):
	case !isChat:
		status, refusal = http.StatusNotFound, "not found"
	case parseErr != nil:
		status, refusal = http.StatusBadRequest, "bad json: "+parseErr.Error()
	default:
		refusal = pairingError(rec.Messages)
		if refusal == "" && !s.opts.Lenient {
			refusal = toolsError(req)
			if refusal == "" {
				refusal = imagesError(rec.Messages)
			}
			if refusal == "" {
				refusal = contextError(raw, s.opts.ContextTokens)
			}
		}
		if refusal != "" {
			status = http.StatusBadRequest
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	if isChat {
		s.chats++
		close(s.changed)
		s.changed = make(chan struct{})
	}
	var reply Reply
	if isChat && refusal == "" {
		if len(s.queue) > 0 {
			reply, s.queue = s.queue[0], s.queue[1:]
		} else {
			reply = defaultReply(rec)
		}
		for i := range reply.ToolCalls {
			if reply.ToolCalls[i].ID == "" {
				s.nextID++
				reply.ToolCalls[i].ID = fmt.Sprintf("call_%d", s.nextID)
			}
		}
	}
	s.mu.Unlock()

	switch {
	case refusal != "":
		writeError(w, status, refusal, "")
		return
	case !isChat:
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{"id": "fake-1", "object": "model", "owned_by": "llmtest"}}})
		return
	}
	s.reply(w, r, rec, reply)
}

// pairingError applies the rule real servers enforce: every tool_call id of an assistant message
// is answered by the tool messages right after it, and no tool message stands alone.
func pairingError(msgs []llm.Message) string {
	for i := 0; i < len(msgs); {
		m := msgs[i]
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			want := map[string]bool{}
			for _, tc := range m.ToolCalls {
				want[tc.ID] = true
			}
			j := i + 1
			for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
				delete(want, msgs[j].ToolCallID)
			}
			if len(want) > 0 {
				return MsgInsufficientToolMessages
			}
			i = j
			continue
		}
		if m.Role == "tool" {
			return MsgOrphanToolMessage
		}
		i++
	}
	return ""
}

// defaultReply mimics fake_openai.py.
func defaultReply(rec Recorded) Reply {
	if len(rec.Messages) == 0 {
		return Reply{Text: "PONG "}
	}
	last := rec.Messages[len(rec.Messages)-1]
	if last.Role == "tool" {
		return Reply{Text: "DONE " + truncate(last.Content, 200)}
	}
	if last.Role == "user" && strings.Contains(strings.ToLower(last.Content), "time") {
		for _, name := range rec.Tools {
			if strings.Contains(name, "time") {
				return Reply{ToolCalls: []llm.ToolCall{{Name: name, Arguments: "{}"}}}
			}
		}
	}
	return Reply{Text: "PONG " + truncate(last.Content, 200)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	typ := "invalid_request_error"
	if status >= 500 || status == http.StatusTooManyRequests {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ}})
}

// wait blocks until the client leaves or the server closes.
func (s *Server) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.quit:
	}
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request, rec Recorded, rp Reply) {
	if rp.Delay != nil {
		rp.Delay()
	}
	status := rp.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rp.RawBody != "" {
		if rp.RetryAfter != "" {
			w.Header().Set("Retry-After", rp.RetryAfter)
		}
		if rec.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, rp.RawBody)
		return
	}
	if status != http.StatusOK {
		writeError(w, status, rp.Message, rp.RetryAfter)
		return
	}
	usage := llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	if rp.Usage != nil {
		usage = *rp.Usage
	}
	finish := "stop"
	if rp.Finish != "" {
		finish = rp.Finish
	}
	if len(rp.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	model := rec.Model
	if model == "" {
		model = "fake-1"
	}
	if !rec.Stream {
		if rp.Hang {
			s.wait(r)
			return
		}
		msg := map[string]any{"role": "assistant", "content": rp.Text}
		if rp.Text == "" && len(rp.ToolCalls) > 0 {
			msg["content"] = nil
		}
		if rp.Reasoning != "" {
			msg["reasoning_content"] = rp.Reasoning
		}
		if len(rp.ToolCalls) > 0 {
			var calls []map[string]any
			for _, tc := range rp.ToolCalls {
				calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
					"function": map[string]any{"name": tc.Name, "arguments": args(tc.Arguments)}})
			}
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(choices []any, extra map[string]any) {
		chunk := map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "model": model, "choices": choices}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	delta := func(d map[string]any) {
		send([]any{map[string]any{"index": 0, "delta": d, "finish_reason": nil}}, nil)
	}
	delta(map[string]any{"role": "assistant", "content": ""})
	if rp.Hang {
		if p := pieces(rp.Text, 2); len(p) > 0 {
			delta(map[string]any{"content": p[0]})
		}
		s.wait(r)
		return
	}
	for _, p := range pieces(rp.Reasoning, 2) {
		delta(map[string]any{"reasoning_content": p})
	}
	for _, p := range pieces(rp.Text, 2) {
		delta(map[string]any{"content": p})
	}
	for i, tc := range rp.ToolCalls {
		for j, frag := range pieces(args(tc.Arguments), 3) {
			call := map[string]any{"index": i, "function": map[string]any{"arguments": frag}}
			if j == 0 {
				call["id"], call["type"] = tc.ID, "function"
				call["function"].(map[string]any)["name"] = tc.Name
			}
			delta(map[string]any{"tool_calls": []any{call}})
		}
	}
	send([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	send([]any{}, map[string]any{"usage": usage})
	io.WriteString(w, "data: [DONE]\n\n")
}

func args(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// pieces splits s into up to n non-empty pieces on rune boundaries (fewer when s is short).
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := []rune(s)
	if len(runes) < n {
		n = len(runes)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}
