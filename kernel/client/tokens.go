package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// APIToken is a named bearer token for an OpenAI-compatible client of /v1 (docs/api.md): an
// app the owner lets talk to the agent. It reaches /v1/chat/completions and /v1/models only,
// never the owner's /api/v1. Owner tokens run a request without `user` in the owner's scope
// (it sees owner-private memory and is offered owner-only tools); the others run it in the
// token's own scope, group:token:<name>. A request with `user` runs in scope user:<id> whatever
// the token.
type APIToken struct {
	Name    string    `json:"name"`
	Owner   bool      `json:"owner"`
	Scope   string    `json:"scope"` // of its requests without `user`: "private" or "group:token:<name>"
	Created time.Time `json:"created"`
	// Token is set only in the answer of AddAPIToken: it is stored hashed and never shown again.
	Token string `json:"token,omitempty"`
}

// TokenService manages the /v1 client tokens. It is served by the kernel's HTTP API.
type TokenService interface {
	// APITokens lists the tokens, by name.
	APITokens(ctx context.Context) ([]APIToken, error)
	// AddAPIToken adds a token and returns it (shown once); a token of the same name is
	// ErrInvalid (remove it first to give the client a new one).
	AddAPIToken(ctx context.Context, name string, owner bool) (APIToken, error)
	// RemoveAPIToken removes a token: it stops working at once. ErrNotFound when unknown.
	RemoveAPIToken(ctx context.Context, name string) error
}

// APITokens lists the /v1 client tokens (GET /api/v1/tokens).
func (c *HTTP) APITokens(ctx context.Context) ([]APIToken, error) {
	var out struct {
		Tokens []APIToken `json:"tokens"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/tokens", nil, &out)
	return out.Tokens, err
}

// AddAPIToken adds a /v1 client token (POST /api/v1/tokens); the answer holds the token.
func (c *HTTP) AddAPIToken(ctx context.Context, name string, owner bool) (APIToken, error) {
	var out APIToken
	err := c.do(ctx, http.MethodPost, "/api/v1/tokens", struct {
		Name  string `json:"name"`
		Owner bool   `json:"owner"`
	}{name, owner}, &out)
	return out, err
}

// RemoveAPIToken removes a /v1 client token (DELETE /api/v1/tokens/{name}).
func (c *HTTP) RemoveAPIToken(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("remove API token: empty name: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/tokens/"+url.PathEscape(name), nil, nil)
}

var _ TokenService = (*HTTP)(nil)
