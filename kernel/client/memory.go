package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Bounds of [MemoryQuery].K: a zero K asks for DefaultMemoryK hits, and at most MaxMemoryK are
// returned.
const (
	DefaultMemoryK = 10
	MaxMemoryK     = 100
)

// Scopes of sessions and memory events; a group scope is "group:" followed by the group's id.
const (
	ScopePrivate = "private"
	ScopePublic  = "public"
	ScopeGroup   = "group:"
)

// CheckScope reports whether scope is "private", "public" or "group:<id>" with a non-empty id
// that has no white space. The error names the scope; it matches [ErrInvalid].
func CheckScope(scope string) error {
	switch {
	case scope == ScopePrivate, scope == ScopePublic:
		return nil
	case strings.HasPrefix(scope, ScopeGroup):
		id := strings.TrimPrefix(scope, ScopeGroup)
		if id != "" && !strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' }) {
			return nil
		}
	}
	return fmt.Errorf("scope %s must be private, public or group:<id>: %w", strconv.Quote(scope), ErrInvalid)
}

// Window explains a session's L1 context window (GET /api/v1/window?session=ID).
func (c *HTTP) Window(ctx context.Context, sessionID string) (Window, error) {
	if sessionID == "" {
		return Window{}, fmt.Errorf("window: empty session id: %w", ErrInvalid)
	}
	var out Window
	err := c.do(ctx, http.MethodGet, "/api/v1/window?"+url.Values{"session": {sessionID}}.Encode(), nil, &out)
	return out, err
}

// SearchMemory recalls events (GET /api/v1/memory/search?q=…&session=…&k=…&scope=…&layer=…).
// Zero fields of q are left out of the query, so the kernel's defaults apply.
func (c *HTTP) SearchMemory(ctx context.Context, q MemoryQuery) ([]MemoryHit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("search memory: empty text: %w", ErrInvalid)
	}
	v := url.Values{"q": {q.Text}}
	if q.Session != "" {
		v.Set("session", q.Session)
	}
	if q.K != 0 {
		v.Set("k", strconv.Itoa(q.K))
	}
	if q.Scope != "" {
		v.Set("scope", q.Scope)
	}
	if q.Layer != 0 {
		v.Set("layer", strconv.Itoa(q.Layer))
	}
	var out struct {
		Hits []MemoryHit `json:"hits"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/memory/search?"+v.Encode(), nil, &out)
	return out.Hits, err
}
