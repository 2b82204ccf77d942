package api

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// The Backend's desktop methods for every fakeBackend: they answer zero values. desktopBackend
// scripts them.

func (f *fakeBackend) SetPaused(context.Context, bool) error { return nil }

func (f *fakeBackend) TestProvider(context.Context, client.ProviderConfig) (client.ProviderCheck, error) {
	return client.ProviderCheck{}, nil
}

func (f *fakeBackend) DetectProviders(context.Context) ([]client.ProviderConfig, error) {
	return nil, nil
}

// desktopBackend records the desktop calls and answers what the test set.
type desktopBackend struct {
	*fakeBackend
	paused   []bool
	tested   []client.ProviderConfig
	check    client.ProviderCheck
	detected []client.ProviderConfig
	err      error // returned by every desktop method when set
}

func (b *desktopBackend) SetPaused(_ context.Context, p bool) error {
	b.paused = append(b.paused, p)
	return b.err
}

func (b *desktopBackend) TestProvider(_ context.Context, p client.ProviderConfig) (client.ProviderCheck, error) {
	b.tested = append(b.tested, p)
	return b.check, b.err
}

func (b *desktopBackend) DetectProviders(context.Context) ([]client.ProviderConfig, error) {
	return b.detected, b.err
}

func TestDesktopRoutes(t *testing.T) {
	ollama := client.ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"}
	tests := []struct {
		name, method, path, body string
		b                        desktopBackend
		want                     int
		wantBody                 string
		check                    func(t *testing.T, b *desktopBackend)
	}{
		{name: "pause", method: "POST", path: "/api/v1/pause", body: `{"paused":true}`, want: 204,
			check: func(t *testing.T, b *desktopBackend) {
				if len(b.paused) != 1 || !b.paused[0] {
					t.Errorf("backend got %v", b.paused)
				}
			}},
		{name: "resume", method: "POST", path: "/api/v1/pause", body: `{"paused":false}`, want: 204,
			check: func(t *testing.T, b *desktopBackend) {
				if len(b.paused) != 1 || b.paused[0] {
					t.Errorf("backend got %v", b.paused)
				}
			}},
		{name: "pause without the field", method: "POST", path: "/api/v1/pause", body: `{}`, want: 400,
			wantBody: `{"error":{"status":400,"message":"field \"paused\" (true or false) is required"}}`},
		{name: "pause with a string", method: "POST", path: "/api/v1/pause", body: `{"paused":"yes"}`, want: 400},
		{name: "pause with an unknown field", method: "POST", path: "/api/v1/pause", body: `{"paused":true,"for":"1h"}`, want: 400},
		{name: "pause without a body", method: "POST", path: "/api/v1/pause", want: 400},
		{name: "pause by GET", method: "GET", path: "/api/v1/pause", want: 405},
		{name: "pause fails", method: "POST", path: "/api/v1/pause", body: `{"paused":true}`,
			b: desktopBackend{err: fmt.Errorf("saving the pause: %w", client.ErrUnavailable)}, want: 503},
		{name: "test", method: "POST", path: "/api/v1/providers/test",
			body: `{"name":"ds","base_url":"https://api.deepseek.com/v1","model":"deepseek-chat","api_key":"sk-1"}`,
			b: desktopBackend{check: client.ProviderCheck{OK: true, Latency: 1500 * time.Millisecond, Model: "deepseek-chat",
				Models: []string{"deepseek-chat", "deepseek-reasoner"}, Reply: "OK"}},
			want:     200,
			wantBody: `{"ok":true,"latency":1500000000,"model":"deepseek-chat","models":["deepseek-chat","deepseek-reasoner"],"reply":"OK"}`,
			check: func(t *testing.T, b *desktopBackend) {
				want := client.ProviderConfig{Name: "ds", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-1"}
				if len(b.tested) != 1 || b.tested[0] != want {
					t.Errorf("backend got %+v", b.tested)
				}
			}},
		{name: "test that fails", method: "POST", path: "/api/v1/providers/test", body: `{"name":"ds","base_url":"http://x/v1","model":"m"}`,
			b:    desktopBackend{check: client.ProviderCheck{Error: "provider ds: HTTP 401: Incorrect API key provided", Latency: 2}},
			want: 200, wantBody: `{"ok":false,"error":"provider ds: HTTP 401: Incorrect API key provided","latency":2}`},
		{name: "test without a name", method: "POST", path: "/api/v1/providers/test", body: `{"base_url":"http://x/v1","model":"m"}`, want: 400,
			wantBody: `{"error":{"status":400,"message":"provider name is empty"}}`},
		{name: "test with an unknown field", method: "POST", path: "/api/v1/providers/test", body: `{"name":"p","key":"sk"}`, want: 400},
		{name: "test refused by the kernel", method: "POST", path: "/api/v1/providers/test", body: `{"name":"p","base_url":"ftp://x","model":"m"}`,
			b: desktopBackend{err: fmt.Errorf("%w: provider p: base URL must be http", client.ErrInvalid)}, want: 400},
		{name: "detect", method: "GET", path: "/api/v1/providers/detect", b: desktopBackend{detected: []client.ProviderConfig{ollama}},
			want: 200, wantBody: `{"providers":[{"name":"ollama","base_url":"http://127.0.0.1:11434/v1","model":"qwen2.5:7b"}]}`},
		{name: "detect finds nothing", method: "GET", path: "/api/v1/providers/detect", want: 200, wantBody: `{"providers":[]}`},
		{name: "detect refuses a query", method: "GET", path: "/api/v1/providers/detect?port=1", want: 400},
		{name: "detect by POST", method: "POST", path: "/api/v1/providers/detect", want: 405},
		{name: "a provider named test can still be removed", method: "DELETE", path: "/api/v1/providers/test", want: 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			b.fakeBackend = &fakeBackend{}
			sv := serveUnix(t, New(&b, Options{}), "")
			resp, body := sv.do(t, tt.method, tt.path, tt.body, nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d (body %s)", resp.StatusCode, tt.want, body)
			}
			if tt.wantBody != "" && strings.TrimSpace(body) != tt.wantBody {
				t.Fatalf("body\n%s\nwant\n%s", strings.TrimSpace(body), tt.wantBody)
			}
			if tt.check != nil {
				tt.check(t, &b)
			}
		})
	}
}
