// Package llm defines the provider interface and the chat types the kernel uses to talk to
// language models. It imports no vendor SDK; llm/openai implements Provider for every
// OpenAI-compatible server and llm/llmtest is a scripted fake server for tests.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNoProvider is returned when no provider is configured (or none serves the requested model).
var ErrNoProvider = errors.New("no LLM provider configured: add one with `waiter provider add NAME --base-url URL --model M`")

// Message is one chat message in OpenAI's shape.
type Message struct {
	Role       string     `json:"role"` // system, user, assistant, tool
	Content    string     `json:"content"`
	Reasoning  string     `json:"reasoning,omitempty"` // reasoning_content from the server; never sent back
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	// Images go with the message to a model that takes images (OpenAI image_url parts): a user
	// message's attachments, a tool result's images. A provider whose model does not take
	// images leaves them out; Content must then say what they were (their OCR text).
	Images []Image `json:"images,omitempty"`
}

// Image is one image of a [Message].
type Image struct {
	MIME string `json:"mime"` // image/png, image/jpeg, image/webp or image/gif
	Data []byte `json:"data"`
	Name string `json:"name,omitempty"` // the file's or the tool's name, for the text around it
}

// VisionMIME reports whether mime is an image type OpenAI-compatible vision models accept.
func VisionMIME(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/webp", "image/gif":
		return true
	}
	return false
}

// ToolCall is one function call requested by the model. Arguments is the JSON text as sent.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool describes a function the model may call. Parameters is a JSON Schema object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one chat completion request.
type Request struct {
	Model       string    `json:"model"` // empty: the provider's configured model
	Messages    []Message `json:"messages"`
	Tools       []Tool    `json:"tools,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Temperature *float64  `json:"temperature,omitempty"`
	TopP        *float64  `json:"top_p,omitempty"`
	Stop        []string  `json:"stop,omitempty"`
	// ResponseSchema, when set, is the JSON schema the reply must match (one JSON object).
	// Providers with structured output enforce it (OpenAI's response_format json_schema), or
	// at least ask for a JSON object (json_object) when the server refuses the schema.
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
}

// Usage is the token accounting a server reports.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Response is a complete answer: the assistant message (text and/or tool calls, ordered by the
// index the server gave them), the finish reason and usage.
type Response struct {
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"`
	Usage        Usage   `json:"usage"`
	Provider     string  `json:"provider"` // name of the provider that answered
	Model        string  `json:"model"`
}

// Delta is one streamed piece. Exactly one of the fields is set.
type Delta struct {
	Content   string // a piece of assistant text
	Reasoning string // a piece of reasoning_content
}

// Provider is a chat completion backend. Implementations are safe for concurrent use.
type Provider interface {
	// Name is the configured provider name (for logs and errors).
	Name() string
	// Chat sends req. When onDelta is non-nil the request is streamed and onDelta receives text
	// and reasoning pieces as they arrive (from the calling goroutine); the returned Response
	// is always complete. Cancelling ctx aborts the request and returns ctx's error.
	Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
	// Models lists the model ids the server offers (GET {base}/models).
	Models(ctx context.Context) ([]string, error)
}

// APIError is an error answer from a server. Message is the server's own message.
type APIError struct {
	Provider   string
	Status     int    // HTTP status
	Message    string // server's error message (or a short body excerpt)
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("provider %s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

// Retryable reports whether the error is worth retrying on the same provider (429 and 5xx).
func (e *APIError) Retryable() bool { return e.Status == 429 || e.Status >= 500 }
