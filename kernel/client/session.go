package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Channels of the sessions the kernel keeps for itself ([Session.System]).
const (
	// ChannelPluginPrefix starts the channel of a plugin's memory session ("plugin:notes").
	ChannelPluginPrefix = "plugin:"
	// ChannelOpenAI is the channel of the OpenAI-compatible API's sessions (/v1/chat/completions).
	ChannelOpenAI = "openai"
)

// System reports whether s is a session the kernel keeps for itself, not one of the owner's
// chats: a plugin's memory (channel "plugin:<name>") or a conversation of the OpenAI-compatible
// API (channel "openai"). The desktop's chat list hides them unless asked to show them.
func (s Session) System() bool {
	return strings.HasPrefix(s.Channel, ChannelPluginPrefix) || s.Channel == ChannelOpenAI
}

// SessionAdmin is the owner's side of the session list: renaming and deleting chats.
type SessionAdmin interface {
	// RenameSession sets a session's title (trimmed, 1 to [MaxSessionTitle] characters, no
	// control characters); ErrNotFound for an unknown session.
	RenameSession(ctx context.Context, id, title string) (Session, error)
	// DeleteSession removes a session from the list. Its memory is kept (its events stay in
	// L1/L2 and back the facts they gave) unless forget, which forgets every event of the
	// session as [MemoryAdmin.Forget] does. The main session cannot be deleted (ErrInvalid);
	// ErrNotFound for an unknown or already deleted one.
	DeleteSession(ctx context.Context, id string, forget bool) (SessionDeleted, error)
}

// MaxSessionTitle is the longest session title, in characters.
const MaxSessionTitle = 200

// SessionDeleted is what a [SessionAdmin.DeleteSession] did.
type SessionDeleted struct {
	Session string `json:"session"`
	// Events is how many events the session had; they stay in memory unless Forgotten.
	Events    int          `json:"events"`
	Forgotten bool         `json:"forgotten"`
	Forget    ForgetResult `json:"forget,omitzero"`
}

// RenameSession renames a session (PATCH /api/v1/sessions/{id}).
func (c *HTTP) RenameSession(ctx context.Context, id, title string) (Session, error) {
	if id == "" {
		return Session{}, fmt.Errorf("rename session: empty session id: %w", ErrInvalid)
	}
	var out Session
	err := c.do(ctx, http.MethodPatch, "/api/v1/sessions/"+url.PathEscape(id), sessionPatch{Title: &title}, &out)
	return out, err
}

// sessionPatch is the body of PATCH /api/v1/sessions/{id}: the fields to change.
type sessionPatch struct {
	Title *string `json:"title"`
}

// DeleteSession deletes a session (DELETE /api/v1/sessions/{id}, ?forget=true to forget its
// events too).
func (c *HTTP) DeleteSession(ctx context.Context, id string, forget bool) (SessionDeleted, error) {
	if id == "" {
		return SessionDeleted{}, fmt.Errorf("delete session: empty session id: %w", ErrInvalid)
	}
	path := "/api/v1/sessions/" + url.PathEscape(id)
	if forget {
		path += "?forget=true"
	}
	var out SessionDeleted
	err := c.do(ctx, http.MethodDelete, path, nil, &out)
	return out, err
}
