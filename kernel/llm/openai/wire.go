package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hologramagent/hologram/kernel/llm"
)

// defaultParameters is sent for a tool without a parameter schema; servers reject a missing one.
var defaultParameters = json.RawMessage(`{"type":"object","properties":{}}`)

type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	Stop          []string       `json:"stop,omitempty"`
	// ResponseFormat asks for structured output (llm.Request.ResponseSchema).
	ResponseFormat *wireResponseFormat `json:"response_format,omitempty"`
}

// wireResponseFormat is OpenAI's response_format: {"type": "json_schema", "json_schema":
// {"name", "schema", "strict"}} or {"type": "json_object"}.
type wireResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *wireJSONSchema `json:"json_schema,omitempty"`
}

type wireJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a *string (nil: null, only for an assistant message with tool calls) or, for a
	// user message with images, []wirePart.
	Content    any            `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// wirePart is one part of a user message's content: {"type":"text","text":…} or
// {"type":"image_url","image_url":{"url":"data:image/png;base64,…"}}.
type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

// imageParts is text followed by the images as data URLs.
func imageParts(text string, imgs []llm.Image) []wirePart {
	parts := make([]wirePart, 0, len(imgs)+1)
	if text != "" {
		parts = append(parts, wirePart{Type: "text", Text: text})
	}
	for _, im := range imgs {
		parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}})
	}
	return parts
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string    `json:"name,omitempty"`
	Arguments flexValue `json:"arguments"`
}

type wireTool struct {
	Type     string      `json:"type"`
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// flexValue is a JSON string, or any other JSON value kept as its text (some servers send tool
// arguments as an object, or content as an array of parts). null is empty.
type flexValue string

func (f *flexValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexValue(s)
	case len(b) > 0 && b[0] == '[':
		// content parts: [{"type":"text","text":"…"}]
		var parts []struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		*f = flexValue(sb.String())
	default:
		*f = flexValue(b)
	}
	return nil
}

func (f flexValue) MarshalJSON() ([]byte, error) { return json.Marshal(string(f)) }

type wireMessageIn struct {
	Role             string         `json:"role"`
	Content          flexValue      `json:"content"`
	ReasoningContent flexValue      `json:"reasoning_content"`
	Reasoning        flexValue      `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      wireMessageIn `json:"message"`
		Delta        wireMessageIn `json:"delta"`
		FinishReason *string       `json:"finish_reason"`
	} `json:"choices"`
	Usage *llm.Usage `json:"usage"`
	Error *wireError `json:"error"`
}

// encodeRequest encodes req. With vision, the messages' images go as image_url parts: a user
// message's in its own content, a tool result's (tool messages take text only) in a user
// message after the run of tool messages they belong to. Without vision they are left out:
// the messages' text already says what they were.
func (c *Client) encodeRequest(req llm.Request, stream bool, rf *wireResponseFormat, vision bool) ([]byte, error) {
	w := wireRequest{
		ResponseFormat: rf,
		Model:          req.Model,
		MaxTokens:      req.MaxTokens,
		Temperature:    req.Temperature,
		TopP:           req.TopP,
		Stop:           req.Stop,
		Messages:       make([]wireMessage, 0, len(req.Messages)),
	}
	if w.Model == "" {
		w.Model = c.cfg.Model
	}
	if w.MaxTokens == 0 {
		w.MaxTokens = c.cfg.MaxTokens
	}
	if stream {
		w.Stream = true
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	var toolImages []llm.Image // of the current run of tool messages
	flushToolImages := func() {
		if len(toolImages) > 0 {
			w.Messages = append(w.Messages, wireMessage{Role: "user", Content: imageParts("[the images the tool results above returned]", toolImages)})
			toolImages = nil
		}
	}
	for _, m := range req.Messages {
		if m.Role != "tool" {
			flushToolImages()
		}
		content := m.Content
		wm := wireMessage{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID, Name: m.Name}
		if vision && len(m.Images) > 0 {
			switch m.Role {
			case "user":
				wm.Content = imageParts(content, m.Images)
			case "tool":
				toolImages = append(toolImages, m.Images...)
			}
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			if content == "" {
				wm.Content = nil
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{
					ID: tc.ID, Type: "function",
					Function: wireFunction{Name: tc.Name, Arguments: flexValue(args)},
				})
			}
		}
		w.Messages = append(w.Messages, wm)
	}
	flushToolImages()
	for _, t := range req.Tools {
		params := t.Parameters
		if p := bytes.TrimSpace(params); len(p) == 0 || bytes.Equal(p, []byte("null")) {
			params = defaultParameters
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("provider %s: encode request: %w", c.cfg.Name, err)
	}
	return b, nil
}

// toolCalls assembles streamed tool-call fragments. Fragments are merged by index; a fragment
// without an index (or without an id) continues the current call.
type toolCalls struct {
	calls []*wireCall
	cur   *wireCall
}

type wireCall struct {
	index int
	call  llm.ToolCall
	args  strings.Builder
}

func (t *toolCalls) add(f wireToolCall) {
	var target *wireCall
	switch {
	case f.Index != nil:
		for _, c := range t.calls {
			if c.index == *f.Index {
				target = c
			}
		}
		// A server reusing an index for a call with another id starts a new call.
		if target != nil && f.ID != "" && target.call.ID != "" && f.ID != target.call.ID {
			target = t.newCall(t.nextIndex())
		} else if target == nil {
			target = t.newCall(*f.Index)
		}
	case f.ID != "":
		for _, c := range t.calls {
			if c.call.ID == f.ID {
				target = c
			}
		}
		if target == nil {
			target = t.newCall(t.nextIndex())
		}
	default:
		target = t.cur
		if target == nil {
			target = t.newCall(0)
		}
	}
	t.cur = target
	if target.call.ID == "" {
		target.call.ID = f.ID
	}
	switch name := f.Function.Name; {
	case name == "" || name == target.call.Name:
	case target.call.Name == "":
		target.call.Name = name
	default:
		target.call.Name += name
	}
	target.args.WriteString(string(f.Function.Arguments))
}

func (t *toolCalls) newCall(index int) *wireCall {
	c := &wireCall{index: index}
	t.calls = append(t.calls, c)
	return c
}

func (t *toolCalls) nextIndex() int {
	n := 0
	for _, c := range t.calls {
		n = max(n, c.index+1)
	}
	return n
}

// result returns the calls ordered by index, with missing ids and empty arguments filled in.
func (t *toolCalls) result() []llm.ToolCall {
	if len(t.calls) == 0 {
		return nil
	}
	sorted := append([]*wireCall(nil), t.calls...)
	for i := 1; i < len(sorted); i++ { // insertion sort: a handful of calls, stable
		for j := i; j > 0 && sorted[j].index < sorted[j-1].index; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	out := make([]llm.ToolCall, 0, len(sorted))
	for _, c := range sorted {
		tc := c.call
		tc.Arguments = c.args.String()
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", c.index)
		}
		out = append(out, tc)
	}
	return out
}
