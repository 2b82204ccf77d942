package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Client-executed tools (docs/api.md, "Client-executed tools"): a chat request may bring tools
// that the client runs itself (an editor's file access, say). When the model calls one, the
// turn's stream carries a "tool_request" event (Tool set, Status "waiting"); the client runs the
// call and answers it with [ChatService.AnswerToolCall]; the answer becomes the call's result.
// A call not answered within the kernel's tool timeout, or whose turn ends, gets a timeout or
// cancelled result like any other tool.

// ClientToolService answers the calls of a chat request's client tools. Part of [Service].
type ClientToolService interface {
	// AnswerToolCall answers a "tool_request" event: the result of a call of one of the
	// request's client tools; ErrNotFound when no such call waits.
	AnswerToolCall(ctx context.Context, turnID, callID string, a ToolAnswer) error
}

// EventToolRequest is a call of one of the request's client tools, waiting for its answer.
const EventToolRequest = "tool_request"

// ClientTool is a tool the client runs: a name (^[a-zA-Z0-9_-]{1,64}$, at most 32 tools per
// request), a description and JSON-schema parameters.
type ClientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolAnswer is the client's result of one call of its tool: Content is the result text the
// model reads (at most 2 MiB); IsError marks a failure (Content says why). Images (a
// screenshot, say) go with the result: to a vision model beside the text, and stored with the
// result as image blocks, whose text the kernel reads (OCR) for memory search. At most
// [MaxToolAnswerImages], each a PNG, JPEG, GIF or WebP of at most [MaxToolAnswerImageBytes],
// all together at most [MaxToolAnswerImagesBytes]; an answer with another image is refused
// (ErrInvalid) and the call keeps waiting.
type ToolAnswer struct {
	Content string      `json:"content"`
	IsError bool        `json:"is_error,omitempty"`
	Images  []ToolImage `json:"images,omitempty"`
}

// ToolImage is one image of a [ToolAnswer]: its type, its bytes and, optionally, a file name.
type ToolImage struct {
	MIME string `json:"mime"`
	Data []byte `json:"data"`
	Name string `json:"name,omitempty"`
}

// Bounds of a [ToolAnswer]'s images (the answer's request body may be this much larger than
// the API's body limit).
const (
	MaxToolAnswerImages      = 4
	MaxToolAnswerImageBytes  = 20 << 20
	MaxToolAnswerImagesBytes = 32 << 20
)

// AnswerToolCall answers a call of a client tool (POST /api/v1/turns/{turn}/tools/{call});
// ErrNotFound when no such call waits.
func (c *HTTP) AnswerToolCall(ctx context.Context, turnID, callID string, a ToolAnswer) error {
	if turnID == "" || callID == "" {
		return fmt.Errorf("answer tool call: empty turn or call id: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodPost, "/api/v1/turns/"+url.PathEscape(turnID)+"/tools/"+url.PathEscape(callID), a, nil)
}
