package client

import (
	"context"
	"net/http"
)

// SetPaused pauses or resumes the kernel (POST /api/v1/pause {"paused": bool}).
func (c *HTTP) SetPaused(ctx context.Context, paused bool) error {
	return c.do(ctx, http.MethodPost, "/api/v1/pause", struct {
		Paused bool `json:"paused"`
	}{paused}, nil)
}

// TestProvider makes one real request to a provider that is not saved
// (POST /api/v1/providers/test). A provider that fails is ProviderCheck.OK false, not an error.
// The kernel bounds the test (20 s by default), within the client's timeout.
func (c *HTTP) TestProvider(ctx context.Context, p ProviderConfig) (ProviderCheck, error) {
	var out ProviderCheck
	err := c.do(ctx, http.MethodPost, "/api/v1/providers/test", p, &out)
	return out, err
}

// DetectProviders lists the local OpenAI-compatible servers the kernel found
// (GET /api/v1/providers/detect).
func (c *HTTP) DetectProviders(ctx context.Context) ([]ProviderConfig, error) {
	var out struct {
		Providers []ProviderConfig `json:"providers"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/providers/detect", nil, &out)
	return out.Providers, err
}
