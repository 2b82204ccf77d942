package client

import (
	"context"
	"net/http"
)

// PromptService is the base system prompt every owner's turn starts with: the date and time
// zone, the owner's name, what memory and tools are and how to cite remembered facts. A
// session's own system prompt ([Instructions]) follows it.
type PromptService interface {
	// BasePrompt returns the template in use (the default unless the owner changed it), the
	// owner's name and the prompt as the next turn would read it.
	BasePrompt(ctx context.Context) (BasePrompt, error)
	// SetBasePrompt saves the template (Default: back to the built-in one; an empty Template
	// without Default: no base prompt) and the owner's name.
	SetBasePrompt(ctx context.Context, p BasePrompt) (BasePrompt, error)
}

// BasePrompt is the base system prompt's template, in which {date}, {time}, {timezone} and
// {owner} are replaced at each turn.
type BasePrompt struct {
	Template string `json:"template"`
	// Default: the template is the built-in one (on write: reset to it).
	Default bool `json:"default,omitempty"`
	// Owner is the owner's name ("" when unknown: the prompt says "the owner").
	Owner string `json:"owner"`
	// Preview is the prompt rendered now for the owner's chats (read only).
	Preview string `json:"preview,omitempty"`
}

// Bounds of the base prompt.
const (
	MaxBasePrompt = 16 << 10 // bytes of template
	MaxOwnerName  = 100      // characters
)

// BasePrompt reads the base prompt (GET /api/v1/prompt).
func (c *HTTP) BasePrompt(ctx context.Context) (BasePrompt, error) {
	var out BasePrompt
	err := c.do(ctx, http.MethodGet, "/api/v1/prompt", nil, &out)
	return out, err
}

// SetBasePrompt saves the base prompt (PUT /api/v1/prompt).
func (c *HTTP) SetBasePrompt(ctx context.Context, p BasePrompt) (BasePrompt, error) {
	p.Preview = ""
	var out BasePrompt
	err := c.do(ctx, http.MethodPut, "/api/v1/prompt", p, &out)
	return out, err
}
