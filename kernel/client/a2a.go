package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// A2APeer is another agent allowed to talk to this one over A2A (docs/channels.md): it has its
// own bearer token, its own session (channel "a2a", partner "<name>"), its own scope ("group:a2a-<name>",
// never the owner's private memories) and its own rate limit.
type A2APeer struct {
	Name    string    `json:"name"`
	Channel string    `json:"channel"` // a2a
	Partner string    `json:"partner"` // the peer's name: its sessions' and events' channel/partner is a2a/<name>
	Session string    `json:"session"` // the peer's session id
	Scope   string    `json:"scope"`   // group:a2a-<name>
	Created time.Time `json:"created"`
	// Token is set only in the answer of AddA2APeer: it is stored hashed and never shown again.
	Token string `json:"token,omitempty"`
}

// A2AService manages the A2A peers. It is served by the kernel's A2A server when A2A is on
// (the TCP listener is configured and [a2a] enabled is not false); ErrUnavailable otherwise.
type A2AService interface {
	// A2APeers lists the peers, by name.
	A2APeers(ctx context.Context) ([]A2APeer, error)
	// AddA2APeer adds a peer and returns it with its new token (shown once); a peer of the same
	// name is ErrInvalid (remove it first to give it a new token).
	AddA2APeer(ctx context.Context, name string) (A2APeer, error)
	// RemoveA2APeer removes a peer: its token stops working at once. ErrNotFound when unknown.
	RemoveA2APeer(ctx context.Context, name string) error
}

// A2APeers lists the A2A peers (GET /api/v1/a2a/peers).
func (c *HTTP) A2APeers(ctx context.Context) ([]A2APeer, error) {
	var out struct {
		Peers []A2APeer `json:"peers"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/a2a/peers", nil, &out)
	return out.Peers, err
}

// AddA2APeer adds an A2A peer (POST /api/v1/a2a/peers); the answer holds its token.
func (c *HTTP) AddA2APeer(ctx context.Context, name string) (A2APeer, error) {
	var out A2APeer
	err := c.do(ctx, http.MethodPost, "/api/v1/a2a/peers", struct {
		Name string `json:"name"`
	}{name}, &out)
	return out, err
}

// RemoveA2APeer removes an A2A peer (DELETE /api/v1/a2a/peers/{name}).
func (c *HTTP) RemoveA2APeer(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("remove A2A peer: empty name: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/a2a/peers/"+url.PathEscape(name), nil, nil)
}

var _ A2AService = (*HTTP)(nil)
