package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// AssistantService keeps the owner's assistants: saved presets (a name, instructions, a model
// and the tools allowed) a chat starts from. A kernel implements it beside [Service]; callers
// find it with a type assertion (the GUI, waiter), and [HTTP] implements it over the API.
type AssistantService interface {
	// Assistants lists the presets by name.
	Assistants(ctx context.Context) ([]Assistant, error)
	// SaveAssistant creates or replaces a preset. An empty ID is made from the name; the
	// fields are checked (bounds in [MaxAssistants] and the like; ErrInvalid).
	SaveAssistant(ctx context.Context, a Assistant) (Assistant, error)
	// RemoveAssistant deletes a preset; the chats started from it keep its instructions,
	// model and tools. ErrNotFound when unknown.
	RemoveAssistant(ctx context.Context, id string) error
	// StartAssistant creates a new chat from a preset: the session gets the preset's
	// instructions as its system prompt, its model, and offers only its tools (none listed:
	// every tool). An empty title is the preset's name. ErrNotFound for an unknown preset.
	StartAssistant(ctx context.Context, id, title string) (Session, error)
	// SessionTools says which tools a session offers: those of the assistant it was started
	// from, or every tool (Tools empty) for any other session.
	SessionTools(ctx context.Context, session string) (SessionTools, error)
}

// SessionTools is the tool filter of a session started from an assistant.
type SessionTools struct {
	Session   string   `json:"session"`
	Assistant string   `json:"assistant,omitempty"` // the preset's id; "" when none
	Tools     []string `json:"tools"`               // empty: every tool
}

// Assistant is a saved preset to start chats from.
type Assistant struct {
	ID           string `json:"id"` // [a-z0-9-], 1 to 64, starting with a letter or digit
	Name         string `json:"name"`
	Instructions string `json:"instructions"` // the chats' system prompt
	Model        string `json:"model"`        // "": the default provider's model
	// Tools are the tools its chats may call, by tool name or by plugin ("files" for every
	// tool of the files plugin); none: every tool. The kernel's own (time_now, result_read,
	// coldcontext_query, tool_search) are always offered.
	Tools []string `json:"tools"`
}

// Bounds of an assistant.
const (
	MaxAssistants         = 200
	MaxAssistantName      = 100      // characters
	MaxAssistantInstructs = 16 << 10 // bytes
	MaxAssistantTools     = 128
)

// Assistants lists the assistants (GET /api/v1/assistants).
func (c *HTTP) Assistants(ctx context.Context) ([]Assistant, error) {
	var out struct {
		Assistants []Assistant `json:"assistants"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/assistants", nil, &out)
	return out.Assistants, err
}

// SaveAssistant saves an assistant (POST /api/v1/assistants; the id may be empty).
func (c *HTTP) SaveAssistant(ctx context.Context, a Assistant) (Assistant, error) {
	var out Assistant
	err := c.do(ctx, http.MethodPost, "/api/v1/assistants", a, &out)
	return out, err
}

// RemoveAssistant deletes an assistant (DELETE /api/v1/assistants/{id}).
func (c *HTTP) RemoveAssistant(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("remove assistant: empty id: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/assistants/"+url.PathEscape(id), nil, nil)
}

// StartAssistant starts a chat from an assistant (POST /api/v1/assistants/{id}/sessions).
func (c *HTTP) StartAssistant(ctx context.Context, id, title string) (Session, error) {
	if id == "" {
		return Session{}, fmt.Errorf("start assistant: empty id: %w", ErrInvalid)
	}
	var out Session
	err := c.do(ctx, http.MethodPost, "/api/v1/assistants/"+url.PathEscape(id)+"/sessions", map[string]string{"title": title}, &out)
	return out, err
}

// SessionTools reads a session's tool filter (GET /api/v1/sessions/{id}/tools).
func (c *HTTP) SessionTools(ctx context.Context, session string) (SessionTools, error) {
	if session == "" {
		return SessionTools{}, fmt.Errorf("session tools: empty session id: %w", ErrInvalid)
	}
	var out SessionTools
	err := c.do(ctx, http.MethodGet, "/api/v1/sessions/"+url.PathEscape(session)+"/tools", nil, &out)
	return out, err
}

var _ AssistantService = (*HTTP)(nil)
