// Package memory holds the domain types of the agent's memory (events, sessions, scopes) and the
// Store interface that every layer of the kernel reads and writes through.
//
// The package imports only the standard library. The SQLite implementation lives in
// memory/sqlite; only cmd/* and tests choose it.
package memory

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors returned by Store implementations; callers test them with errors.Is.
var (
	// ErrNotFound is returned when a session, event or setting does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists is returned when creating something whose id is already taken.
	ErrExists = errors.New("already exists")
	// ErrSchemaTooNew is returned by Open when the database was written by a newer binary.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
)

// ScopeKind orders visibility: Private < Group < Public.
type ScopeKind int

// Scope kinds.
const (
	ScopePrivate ScopeKind = iota // owner-private (the default)
	ScopeGroup                    // visible inside one group
	ScopePublic                   // visible to anyone
)

// Scope says who may see a thing. Group is set only for ScopeGroup.
type Scope struct {
	Kind  ScopeKind `json:"kind"`
	Group string    `json:"group,omitempty"`
}

// String renders the scope as "private", "public" or "group:<id>".
func (s Scope) String() string {
	switch s.Kind {
	case ScopePublic:
		return "public"
	case ScopeGroup:
		return "group:" + s.Group
	default:
		return "private"
	}
}

// ParseScope is the inverse of Scope.String. The empty string is private.
func ParseScope(s string) (Scope, error) {
	switch {
	case s == "" || s == "private":
		return Scope{Kind: ScopePrivate}, nil
	case s == "public":
		return Scope{Kind: ScopePublic}, nil
	case len(s) > len("group:") && s[:len("group:")] == "group:":
		return Scope{Kind: ScopeGroup, Group: s[len("group:"):]}, nil
	}
	return Scope{}, errors.New("invalid scope " + `"` + s + `"` + ` (want "private", "public" or "group:<id>")`)
}

// Role is the role of an event in the conversation, as the LLM sees it.
type Role string

// Roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call an assistant event makes. Arguments is the raw JSON text the model sent.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Event is one turn item: user input, assistant text (with its tool calls), or a tool result.
// Events are append-only; ID and Seq are assigned by the Store.
type Event struct {
	ID      int64     `json:"id"`
	Session string    `json:"session"`
	TurnID  string    `json:"turn_id,omitempty"`
	Time    time.Time `json:"time"`
	Role    Role      `json:"role"`
	Content string    `json:"content"`
	// Reasoning is the model's reasoning_content, kept for display; never re-sent.
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant events only
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool events only
	ToolName   string     `json:"tool_name,omitempty"`    // tool events only
	// ToolStatus is "ok", "error", "denied", "cancelled", "timeout" or "skipped" (tool events only).
	ToolStatus string `json:"tool_status,omitempty"`
	Channel    string `json:"channel,omitempty"` // e.g. "api", "waiter", "qq"
	Partner    string `json:"partner,omitempty"`
	Scene      string `json:"scene,omitempty"`
	Scope      Scope  `json:"scope"`
	Tokens     int    `json:"tokens"`
	// Meta is free-form metadata kept with the event (e.g. an imported conversation's turn id).
	Meta map[string]string `json:"meta,omitempty"`
	// Layer is where the event lives: LayerL1 (its session's context window) or LayerL2 (cold
	// context). New events are L1.
	Layer Layer `json:"layer"`
	// Accesses counts Peeks of the event in L2; LastAccess is the latest (zero: never).
	Accesses   int       `json:"accesses"`
	LastAccess time.Time `json:"last_access"`
	// Distilled is set once L3 distillation has read the event (it stays in L2).
	Distilled bool `json:"distilled,omitempty"`
	// Blocks are the blocks the event brought (attachments). On AppendEvents they are new blocks
	// held by the event; read back they are its references (without Data), wherever each block
	// lives now (Holder says: an L3 block stays referenced).
	Blocks []Block `json:"blocks,omitempty"`
	// Parent is the event this one follows in its session (0: a root). A session's events form
	// a tree: regenerating a reply or editing a sent message starts a sibling branch. The Store
	// sets it on AppendEvents (the session's current head); see [Branches].
	Parent int64 `json:"parent,omitempty"`
	// OffBranch marks an event of a branch that is not the session's current one: History, the
	// L1 window and recall skip it; it stays stored and browsable.
	OffBranch bool `json:"off_branch,omitempty"`
}

// Session is one conversation with its own instructions.
type Session struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	SystemPrompt string    `json:"system_prompt"`
	Model        string    `json:"model"` // empty: the default provider's model
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	// Channel and Partner say where the conversation happens ("api", "waiter", "qq"…; a group or
	// person id); Scope is the scope of the session's events and decides what it may see. The
	// owner's own sessions are private and see everything.
	Channel string `json:"channel,omitempty"`
	Partner string `json:"partner,omitempty"`
	Scope   Scope  `json:"scope"`
}

// Store is the memory store. Implementations are safe for concurrent use.
//
// AppendEvents is the unit of durability: the events of one call are committed atomically (all or
// none) and are durable when it returns.
type Store interface {
	// CreateSession stores a new session; ErrExists if the id is taken. Created/Updated are set
	// to now when zero.
	CreateSession(ctx context.Context, s Session) (Session, error)
	// GetSession returns ErrNotFound for an unknown id.
	GetSession(ctx context.Context, id string) (Session, error)
	// ListSessions returns all sessions, most recently updated first.
	ListSessions(ctx context.Context) ([]Session, error)
	// UpdateSession replaces title, system prompt and model; ErrNotFound for an unknown id.
	UpdateSession(ctx context.Context, s Session) (Session, error)

	// AppendEvents stores events atomically in order, assigning IDs, and bumps the session's
	// Updated time. Every event's session must exist (ErrNotFound otherwise).
	AppendEvents(ctx context.Context, evs []Event) ([]Event, error)
	// History returns the last limit events of a session in chronological order
	// (limit <= 0: all of them).
	History(ctx context.Context, session string, limit int) ([]Event, error)
	// CountEvents returns the number of events of a session.
	CountEvents(ctx context.Context, session string) (int, error)

	// GetSetting returns ErrNotFound when unset. Values are opaque strings (callers seal secrets).
	GetSetting(ctx context.Context, key string) (string, error)
	// SetSetting creates or replaces a setting.
	SetSetting(ctx context.Context, key, value string) error
	// DeleteSetting removes a setting; ErrNotFound when unset.
	DeleteSetting(ctx context.Context, key string) error
	// ListSettings returns all settings whose key starts with prefix.
	ListSettings(ctx context.Context, prefix string) (map[string]string, error)

	// Close releases the store. It is safe to call more than once.
	Close() error
}
