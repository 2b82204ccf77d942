package api

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// conversationSession is the session of a /v1/chat/completions request that names none: one per
// conversation, keyed by the model and the conversation's first user message (clients resend
// the whole conversation, so every request of one chat starts alike, and "new chat" is a new
// session). The system prompt is left out of the key: many clients rebuild it on every call.
//
// A named client token's conversations are its own (the key holds its name); images of the
// first message count by their bytes.
func conversationSession(model string, msgs []completionMessage, clientName string) string {
	first := ""
	var images []client.Attachment
	for _, m := range msgs {
		if m.Role == "user" {
			first, images, _ = messageContent(m.Content)
			break
		}
	}
	h := sha256.New()
	if clientName != "" {
		h.Write([]byte("token:" + clientName + "\x00"))
	}
	h.Write([]byte(model + "\x00" + strings.TrimSpace(first)))
	for _, im := range images {
		sum := sha256.Sum256(im.Data)
		h.Write(sum[:])
	}
	return "v1-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// sessionHeader picks the session of a /v1/chat/completions request; it wins over `user`.
const sessionHeader = "X-Hologram-Session"

// validSessionID reports whether id matches ^[A-Za-z0-9._:@-]{1,128}$.
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == ':', c == '@', c == '-':
		default:
			return false
		}
	}
	return true
}

// completionRequest is the part of an OpenAI chat completion request the kernel reads; other
// fields are ignored. The tool fields are kept raw only to refuse them.
type completionRequest struct {
	Model         string              `json:"model"`
	Messages      []completionMessage `json:"messages"`
	Stream        bool                `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user"`
	// Model parameters passed to the provider.
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stop                json.RawMessage `json:"stop"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Tools               json.RawMessage `json:"tools"`
	Functions           json.RawMessage `json:"functions"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	FunctionCall        json.RawMessage `json:"function_call"`
}

type completionMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"` // a tool message's: the call it answers
}

type contentPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url"` // {"url": …} or the URL (v1images.go)
}

// present reports whether a raw field was sent with a non-null value.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// flattenContent turns a message's content (string, null or array of parts) into text.
func flattenContent(raw json.RawMessage) (string, error) {
	text, _, err := messageContent(raw)
	return text, err
}

// messageContent reads a message's content (string, null or array of parts): its text, and
// its image parts as attachments (v1images.go).
func messageContent(raw json.RawMessage) (string, []client.Attachment, error) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return "", nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, fmt.Errorf("content: %w", err)
		}
		return s, nil, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", nil, fmt.Errorf("content parts: %w", err)
		}
		texts := make([]string, 0, len(parts))
		var images []client.Attachment
		for _, p := range parts {
			switch p.Type {
			case "text", "input_text":
				texts = append(texts, p.Text)
			case "image_url":
				if len(images) == client.MaxAttachments {
					return "", nil, fmt.Errorf("at most %d images per message", client.MaxAttachments)
				}
				im, err := imagePart(imageURL(p.ImageURL), fmt.Sprintf("image %d", len(images)+1))
				if err != nil {
					return "", nil, err
				}
				images = append(images, im)
			case "input_image", "image":
				return "", nil, fmt.Errorf("content part type %q is not supported: send images as {\"type\":\"image_url\",\"image_url\":{\"url\":\"data:…\"}}", p.Type)
			default:
				return "", nil, fmt.Errorf("content part type %q is not supported (text or image_url)", clipModel(p.Type))
			}
		}
		return strings.Join(texts, "\n"), images, nil
	}
	return "", nil, fmt.Errorf("content must be a string, null or an array of parts")
}

// parseCompletion validates an OpenAI request and reduces it to a [client.CompletionRequest].
// The error's param names the offending field.
func parseCompletion(in completionRequest, headerSession string, c v1Client) (client.CompletionRequest, string, error) {
	refused := []struct {
		name string
		raw  json.RawMessage
	}{{"functions", in.Functions}, {"function_call", in.FunctionCall}}
	for _, f := range refused {
		if present(f.raw) {
			return client.CompletionRequest{}, f.name, fmt.Errorf(
				"%s is not supported (the legacy form): send tools and tool_choice instead", f.name)
		}
	}
	session, param := conversationSession(in.Model, in.Messages, c.name), "user"
	switch {
	case headerSession != "":
		session, param = headerSession, sessionHeader
	case in.User != "":
		session = in.User
	}
	if !validSessionID(session) {
		return client.CompletionRequest{}, param, fmt.Errorf(
			"session id %q must match ^[A-Za-z0-9._:@-]{1,128}$", session)
	}
	if len(in.Messages) == 0 {
		return client.CompletionRequest{}, "messages", fmt.Errorf("messages is required and must not be empty")
	}
	out := client.CompletionRequest{Session: session, User: param == "user" && in.User != "", Client: c.name, Guest: !c.owner,
		Model: in.Model, Messages: make([]client.IngestMessage, 0, len(in.Messages))}
	for i, m := range in.Messages {
		role := m.Role
		switch role {
		case "system", "user", "assistant":
		case "developer":
			role = "system"
		case "tool": // a client tool's result, recorded by the turn that called it (v1tools.go)
			continue
		default:
			return client.CompletionRequest{}, fmt.Sprintf("messages[%d].role", i),
				fmt.Errorf("messages[%d]: role %q is not supported (system, developer, user, assistant or tool)", i, m.Role)
		}
		text, images, err := messageContent(m.Content)
		if err != nil {
			return client.CompletionRequest{}, fmt.Sprintf("messages[%d].content", i), fmt.Errorf("messages[%d]: %w", i, err)
		}
		if len(images) > 0 && role != "user" {
			return client.CompletionRequest{}, fmt.Sprintf("messages[%d].content", i), fmt.Errorf("messages[%d]: only user messages may hold images, not %s ones", i, m.Role)
		}
		out.Messages = append(out.Messages, client.IngestMessage{Role: role, Content: text})
		out.Attachments = images // the last user message's (the earlier ones were stored by their turns)
	}
	if last := out.Messages[len(out.Messages)-1]; last.Role != "user" {
		return client.CompletionRequest{}, "messages", fmt.Errorf("the last message must have role user, not %q", last.Role)
	}
	if param, err := parseSampling(in, &out); err != nil {
		return client.CompletionRequest{}, param, err
	}
	if param, err := parseClientTools(in, &out); err != nil {
		return client.CompletionRequest{}, param, err
	}
	return out, "", nil
}

// parseSampling checks the model parameters as OpenAI does and copies them into out.
func parseSampling(in completionRequest, out *client.CompletionRequest) (string, error) {
	out.MaxTokens = in.MaxTokens
	if in.MaxCompletionTokens > 0 {
		out.MaxTokens = in.MaxCompletionTokens
	}
	switch {
	case in.MaxTokens < 0 || in.MaxCompletionTokens < 0:
		return "max_tokens", fmt.Errorf("max_tokens must be at least 1")
	case in.Temperature != nil && (*in.Temperature < 0 || *in.Temperature > 2):
		return "temperature", fmt.Errorf("temperature must be between 0 and 2, got %g", *in.Temperature)
	case in.TopP != nil && (*in.TopP < 0 || *in.TopP > 1):
		return "top_p", fmt.Errorf("top_p must be between 0 and 1, got %g", *in.TopP)
	}
	out.Temperature, out.TopP = in.Temperature, in.TopP
	if present(in.Stop) {
		var one string
		if json.Unmarshal(in.Stop, &one) == nil {
			out.Stop = []string{one}
		} else if err := json.Unmarshal(in.Stop, &out.Stop); err != nil || len(out.Stop) > 4 {
			return "stop", fmt.Errorf("stop must be a string or an array of at most 4 strings")
		}
	}
	if present(in.ResponseFormat) {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(in.ResponseFormat, &rf); err != nil {
			return "response_format", fmt.Errorf("response_format: %v", err)
		}
		switch rf.Type {
		case "text", "":
		case "json_object":
			out.ResponseSchema = json.RawMessage(`{"type":"object"}`)
		case "json_schema":
			if !present(rf.JSONSchema.Schema) {
				return "response_format", fmt.Errorf("response_format json_schema needs json_schema.schema")
			}
			out.ResponseSchema = rf.JSONSchema.Schema
		default:
			return "response_format", fmt.Errorf("response_format type %q is not supported (text, json_object, json_schema)", rf.Type)
		}
	}
	return "", nil
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	ids, err := s.b.Models(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := make([]model, 0, len(ids))
	for _, id := range ids {
		data = append(data, model{ID: id, Object: "model", OwnedBy: "hologram"})
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", data})
}

// handleModel answers GET /v1/models/{id}: the model object, or 404 as OpenAI answers an
// unknown model (ids may hold slashes: "openrouter/auto").
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ids, err := s.b.Models(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !slices.Contains(ids, id) && id != "hologram" {
		d := openAIErrorDetail{Message: fmt.Sprintf("The model '%s' does not exist", clipModel(id)), Type: "invalid_request_error"}
		code := "model_not_found"
		d.Code = &code
		writeJSON(w, http.StatusNotFound, openAIError{Error: d})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}{id, "model", 0, "hologram"})
}

// clipModel bounds a model id echoed in an error.
func clipModel(id string) string {
	if len(id) > 128 {
		return id[:128] + "…"
	}
	return id
}

// OpenAI answer shapes.
type (
	completionMessageOut struct {
		Role      string               `json:"role"`
		Content   string               `json:"content"`
		ToolCalls []completionToolCall `json:"tool_calls,omitempty"`
	}
	completionChoice struct {
		Index        int                  `json:"index"`
		Message      completionMessageOut `json:"message"`
		FinishReason string               `json:"finish_reason"`
	}
	completionUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	completion struct {
		ID      string             `json:"id"`
		Object  string             `json:"object"`
		Created int64              `json:"created"`
		Model   string             `json:"model"`
		Choices []completionChoice `json:"choices"`
		Usage   completionUsage    `json:"usage"`
	}
	chunkDelta struct {
		Role             string               `json:"role,omitempty"`
		Content          string               `json:"content,omitempty"`
		ReasoningContent string               `json:"reasoning_content,omitempty"`
		ToolCalls        []completionToolCall `json:"tool_calls,omitempty"`
	}
	chunkChoice struct {
		Index        int        `json:"index"`
		Delta        chunkDelta `json:"delta"`
		FinishReason *string    `json:"finish_reason"`
	}
	chunk struct {
		ID      string           `json:"id"`
		Object  string           `json:"object"`
		Created int64            `json:"created"`
		Model   string           `json:"model"`
		Choices []chunkChoice    `json:"choices"`
		Usage   *completionUsage `json:"usage,omitempty"` // the last chunk's, with stream_options.include_usage
	}
)

// usageOut is a turn's token counts (summed over its LLM calls, as the provider reported them)
// in OpenAI's shape.
func usageOut(u *client.Usage) completionUsage {
	if u == nil {
		return completionUsage{}
	}
	return completionUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
}

// completionID is "chatcmpl-<turn id>", or a random id when the turn has none.
func completionID(turnID string) string {
	if turnID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		turnID = hex.EncodeToString(b[:])
	}
	return "chatcmpl-" + turnID
}

// handleCompletions serves POST /v1/chat/completions as a full agent turn.
func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		re := s.decodeError(err)
		writeOpenAIError(w, re.status, re.msg, "")
		return
	}
	if key, fresh := replayKey(r, raw); key != "" { // a retry is answered from its first attempt (replay.go)
		e, first := s.replay.begin(key, fresh, time.Now())
		if !first {
			select {
			case <-e.done:
			case <-r.Context().Done():
				return
			}
			if e.ok {
				e.replay(w)
				return
			}
		} else {
			rec := &replayWriter{ResponseWriter: w}
			defer func() { s.replay.finish(key, e, rec, r.Context().Err() == nil) }()
			w = rec
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var in completionRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{allowUnknowns: true}); err != nil {
		writeOpenAIError(w, err.status, err.msg, "")
		return
	}
	withUsage := in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "tool" { // client tool results (v1tools.go)
		model := in.Model
		if model == "" {
			model = "hologram"
		}
		s.continueWithTools(w, r, in, model, time.Now().Unix(), withUsage)
		return
	}
	req, param, err := parseCompletion(in, r.Header.Get(sessionHeader), clientOf(r))
	if err != nil {
		writeOpenAIError(w, http.StatusBadRequest, err.Error(), param)
		return
	}
	model := in.Model
	if model == "" {
		model = "hologram"
	}
	created := time.Now().Unix()
	if len(req.ClientTools) > 0 {
		s.completeWithTools(w, r, req, model, created, in.Stream, withUsage)
		return
	}
	if !in.Stream {
		s.completeOnce(w, r, req, model, created)
		return
	}
	s.completeStream(w, r, req, model, created, withUsage)
}

func (s *Server) completeOnce(w http.ResponseWriter, r *http.Request, req client.CompletionRequest, model string, created int64) {
	var mu sync.Mutex
	var turnID string
	res, err := s.b.Complete(r.Context(), req, func(ev client.ChatEvent) {
		if ev.Type == client.EventTurn {
			mu.Lock()
			turnID = ev.TurnID
			mu.Unlock()
		}
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if res.TurnID == "" {
		mu.Lock()
		res.TurnID = turnID
		mu.Unlock()
	}
	writeJSON(w, http.StatusOK, completion{
		ID:      completionID(res.TurnID),
		Object:  "chat.completion",
		Created: created,
		Model:   model,
		Choices: []completionChoice{{Message: completionMessageOut{Role: "assistant", Content: res.Text}, FinishReason: "stop"}},
		Usage:   usageOut(res.Usage),
	})
}

// completeStream streams OpenAI chunks: one with the role, one per delta, one with
// finish_reason "stop", then `data: [DONE]`.
func (s *Server) completeStream(w http.ResponseWriter, r *http.Request, req client.CompletionRequest, model string, created int64, withUsage bool) {
	st := newSSE(w)
	stop := s.keepAlive(st)
	var (
		mu         sync.Mutex
		id         string
		opened     bool // the role chunk was sent
		sentDeltas bool
		done       bool
	)
	send := func(d chunkDelta, finish *string) {
		st.event("", chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
			Choices: []chunkChoice{{Delta: d, FinishReason: finish}}})
	}
	open := func(turnID string) {
		if !opened {
			opened = true
			id = completionID(turnID)
			send(chunkDelta{Role: "assistant"}, nil)
		}
	}
	res, err := s.b.Complete(r.Context(), req, func(ev client.ChatEvent) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		switch ev.Type {
		case client.EventTurn:
			open(ev.TurnID)
		case client.EventDelta:
			if ev.Text != "" {
				open(ev.TurnID)
				sentDeltas = true
				send(chunkDelta{Content: ev.Text}, nil)
			}
		case client.EventReasoning:
			if ev.Text != "" {
				open(ev.TurnID)
				send(chunkDelta{ReasoningContent: ev.Text}, nil)
			}
		}
	})
	stop()
	mu.Lock()
	defer mu.Unlock()
	done = true
	if err != nil {
		if !st.isStarted() {
			st.close()
			s.fail(w, r, err)
			return
		}
		status, msg := errorStatus(err)
		if status == statusClientClosed {
			msg = "turn cancelled"
		}
		d := openAIErrorDetail{Message: msg, Type: openAIErrorType(status)}
		st.event("", openAIError{Error: d})
		st.close()
		return
	}
	open(res.TurnID)
	if !sentDeltas && res.Text != "" {
		send(chunkDelta{Content: res.Text}, nil)
	}
	stopReason := "stop"
	send(chunkDelta{}, &stopReason)
	if withUsage { // as OpenAI: a last chunk with no choices and the usage
		u := usageOut(res.Usage)
		st.event("", chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chunkChoice{}, Usage: &u})
	}
	st.write([]byte("data: [DONE]\n\n"), false)
	st.close()
}
