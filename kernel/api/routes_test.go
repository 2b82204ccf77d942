package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestRoutes(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var gotLimit int
	var gotID, gotName string
	var gotProvider client.ProviderConfig
	b := &fakeBackend{
		health: func(context.Context) (client.Health, error) { return client.Health{OK: true, Ready: true}, nil },
		status: func(context.Context) (client.Status, error) {
			return client.Status{PID: 42, Sessions: 2, Ready: []string{"memory"}}, nil
		},
		sessions: func(context.Context) ([]client.Session, error) {
			return []client.Session{{ID: "main", Title: "Main", Created: created}}, nil
		},
		createSession: func(_ context.Context, s client.Session) (client.Session, error) {
			if s.ID == "" {
				s.ID = "new"
			}
			return s, nil
		},
		setInstructions: func(_ context.Context, id string, in client.Instructions) (client.Session, error) {
			gotID = id
			return client.Session{ID: id, SystemPrompt: in.SystemPrompt, Model: in.Model}, nil
		},
		history: func(_ context.Context, id string, limit int) ([]client.Message, error) {
			gotID, gotLimit = id, limit
			return []client.Message{{ID: 1, Role: "user", Content: "hi"}}, nil
		},
		providers: func(context.Context) ([]client.Provider, error) {
			return []client.Provider{{Name: "p", BaseURL: "http://x", Model: "m", HasKey: true}}, nil
		},
		addProvider: func(_ context.Context, p client.ProviderConfig) (client.Provider, error) {
			gotProvider = p
			return client.Provider{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, HasKey: p.APIKey != ""}, nil
		},
		removeProvider: func(_ context.Context, name string) error {
			gotName = name
			if name == "nope" {
				return fmt.Errorf("provider %q: %w", name, client.ErrNotFound)
			}
			return nil
		},
		tools: func(context.Context) ([]client.Tool, error) {
			return []client.Tool{{Name: "read_file", Source: "builtin"}}, nil
		},
		cancel: func(_ context.Context, id string) error {
			if id != "t1" {
				return fmt.Errorf("turn %q: %w", id, client.ErrNotFound)
			}
			return nil
		},
	}
	s := New(b, Options{Version: "1.2.3"})
	sv := serveUnix(t, s, "")

	tests := []struct {
		name, method, path, body string
		want                     int
		wantBody                 string // JSON the answer must equal (decoded), or "" to skip
		check                    func(t *testing.T)
	}{
		{name: "health", method: "GET", path: "/api/v1/health", want: 200,
			wantBody: `{"ok":true,"version":"1.2.3","ready":true}`},
		{name: "status", method: "GET", path: "/api/v1/status", want: 200,
			check: func(t *testing.T) {}},
		{name: "sessions", method: "GET", path: "/api/v1/sessions", want: 200,
			wantBody: `{"sessions":[{"id":"main","title":"Main","system_prompt":"","model":"","created":"2025-01-02T03:04:05Z","updated":"0001-01-01T00:00:00Z"}]}`},
		{name: "create session", method: "POST", path: "/api/v1/sessions", body: `{"title":"T"}`, want: 201,
			wantBody: `{"id":"new","title":"T","system_prompt":"","model":"","created":"0001-01-01T00:00:00Z","updated":"0001-01-01T00:00:00Z"}`},
		{name: "create session empty body", method: "POST", path: "/api/v1/sessions", want: 201},
		{name: "instructions", method: "PUT", path: "/api/v1/sessions/s%2F1/instructions", body: `{"system_prompt":"be brief","model":"m"}`, want: 200,
			check: func(t *testing.T) {
				if gotID != "s/1" {
					t.Errorf("session id %q, want s/1", gotID)
				}
			}},
		{name: "history", method: "GET", path: "/api/v1/sessions/main/history?limit=5", want: 200,
			check: func(t *testing.T) {
				if gotID != "main" || gotLimit != 5 {
					t.Errorf("history(%q, %d), want (main, 5)", gotID, gotLimit)
				}
			}},
		{name: "history no limit", method: "GET", path: "/api/v1/sessions/main/history", want: 200,
			check: func(t *testing.T) {
				if gotLimit != 0 {
					t.Errorf("limit %d, want 0", gotLimit)
				}
			}},
		{name: "history limit zero", method: "GET", path: "/api/v1/sessions/main/history?limit=0", want: 200},
		{name: "history limit negative", method: "GET", path: "/api/v1/sessions/main/history?limit=-1", want: 400},
		{name: "history limit not a number", method: "GET", path: "/api/v1/sessions/main/history?limit=ten", want: 400},
		{name: "history limit empty", method: "GET", path: "/api/v1/sessions/main/history?limit=", want: 400},
		{name: "providers", method: "GET", path: "/api/v1/providers", want: 200,
			wantBody: `{"providers":[{"name":"p","base_url":"http://x","model":"m","priority":0,"has_key":true}]}`},
		{name: "add provider", method: "POST", path: "/api/v1/providers",
			body: `{"name":"p","base_url":"http://x","model":"m","api_key":"sk-1","priority":2}`, want: 201,
			wantBody: `{"name":"p","base_url":"http://x","model":"m","priority":0,"has_key":true}`,
			check: func(t *testing.T) {
				if gotProvider.APIKey != "sk-1" || gotProvider.Priority != 2 {
					t.Errorf("provider %+v", gotProvider)
				}
			}},
		{name: "add provider without name", method: "POST", path: "/api/v1/providers", body: `{"base_url":"http://x"}`, want: 400,
			wantBody: `{"error":{"status":400,"message":"provider name is empty"}}`},
		{name: "remove provider", method: "DELETE", path: "/api/v1/providers/p", want: 204,
			check: func(t *testing.T) {
				if gotName != "p" {
					t.Errorf("removed %q", gotName)
				}
			}},
		{name: "remove unknown provider", method: "DELETE", path: "/api/v1/providers/nope", want: 404,
			wantBody: `{"error":{"status":404,"message":"provider \"nope\": not found"}}`},
		{name: "tools", method: "GET", path: "/api/v1/tools", want: 200,
			wantBody: `{"tools":[{"name":"read_file","description":"","parameters":null,"parallel_safe":false,"source":"builtin"}]}`},
		{name: "cancel", method: "POST", path: "/api/v1/turns/t1/cancel", want: 204},
		{name: "cancel unknown turn", method: "POST", path: "/api/v1/turns/t2/cancel", want: 404},
		{name: "unknown path", method: "GET", path: "/api/v1/nope", want: 404,
			wantBody: `{"error":{"status":404,"message":"no route for GET /api/v1/nope"}}`},
		{name: "root", method: "GET", path: "/", want: 404},
		{name: "wrong method", method: "DELETE", path: "/api/v1/sessions", want: 405},
		{name: "wrong method on chat", method: "GET", path: "/api/v1/chat", want: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sv.do(t, tt.method, tt.path, tt.body, nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != "default-src 'none'" {
				t.Errorf("CSP %q", got)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if tt.want != http.StatusNoContent {
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if !json.Valid([]byte(body)) {
					t.Errorf("body is not JSON: %q", body)
				}
			}
			if tt.want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
				t.Errorf("405 without Allow header")
			}
			if tt.wantBody != "" {
				assertJSONEqual(t, body, tt.wantBody)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}

// assertJSONEqual compares two JSON documents semantically.
func assertJSONEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("body\n got %s\nwant %s", gb, wb)
	}
}

func TestDecoding(t *testing.T) {
	s := New(&fakeBackend{}, Options{MaxBodyBytes: 256})
	sv := serveUnix(t, s, "")
	tests := []struct {
		name, path, body string
		want             int
		wantMsg          string // substring of the error message
	}{
		{"unknown field", "/api/v1/sessions", `{"title":"x","foo":1}`, 400, `unknown field "foo"`},
		{"malformed", "/api/v1/sessions", `{"title":`, 400, "malformed JSON"},
		{"syntax error", "/api/v1/sessions", `{"title" "x"}`, 400, "malformed JSON: invalid character"},
		{"wrong type", "/api/v1/sessions", `{"title":5}`, 400, `field "title"`},
		{"trailing garbage", "/api/v1/sessions", `{"title":"x"} xyz`, 400, "unexpected data after the JSON object"},
		{"second object", "/api/v1/sessions", `{"title":"x"}{"title":"y"}`, 400, "unexpected data after the JSON object"},
		{"not an object", "/api/v1/sessions", `[1]`, 400, "cannot use JSON array"},
		{"too large", "/api/v1/sessions", `{"title":"` + strings.Repeat("a", 300) + `"}`, 413, "larger than 256 bytes"},
		{"too large after the object", "/api/v1/sessions", `{"title":"x"}` + strings.Repeat(" ", 300), 413, "larger than 256 bytes"},
		{"empty body", "/api/v1/chat", ``, 400, "request body is empty"},
		{"empty input", "/api/v1/chat", `{"input":"  "}`, 400, "input is empty"},
		{"chat unknown field", "/api/v1/chat", `{"input":"hi","stream":true}`, 400, `unknown field "stream"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sv.do(t, "POST", tt.path, tt.body, map[string]string{"Content-Type": "application/json"})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			e := apiError(t, body)
			if e.Status != tt.want || !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("error %+v, want status %d and message containing %q", e, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		panic   bool
		want    int
		wantMsg string
	}{
		{"not found", fmt.Errorf("session %q: %w", "x", client.ErrNotFound), false, 404, `session "x": not found`},
		{"invalid", fmt.Errorf("bad model: %w", client.ErrInvalid), false, 400, "bad model: invalid request"},
		{"unavailable", fmt.Errorf("no provider: %w", client.ErrUnavailable), false, 503, "no provider: unavailable"},
		{"unauthorized", client.ErrUnauthorized, false, 403, "unauthorized"},
		{"client error", fmt.Errorf("wrapped: %w", &client.Error{Status: 409, Message: "busy"}), false, 409, "busy"},
		{"other", errors.New("disk on fire"), false, 500, "disk on fire"},
		{"panic", nil, true, 500, "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			s := New(&fakeBackend{sessions: func(context.Context) ([]client.Session, error) {
				if tt.panic {
					panic("boom")
				}
				return nil, tt.err
			}}, Options{Logger: logs.logger()})
			sv := serveUnix(t, s, "")
			resp, body := sv.do(t, "GET", "/api/v1/sessions", "", nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			e := apiError(t, body)
			if e.Status != tt.want || e.Message != tt.wantMsg {
				t.Errorf("error %+v, want %d %q", e, tt.want, tt.wantMsg)
			}
			if strings.Contains(body, "goroutine") || strings.Contains(body, "boom") {
				t.Errorf("body leaks the panic: %s", body)
			}
			if tt.panic && !strings.Contains(logs.String(), "boom") {
				t.Errorf("panic not logged: %s", logs.String())
			}
		})
	}
}

func TestErrorStatusCancelled(t *testing.T) {
	if st, _ := errorStatus(fmt.Errorf("turn: %w", context.Canceled)); st != statusClientClosed {
		t.Errorf("context.Canceled maps to %d, want %d", st, statusClientClosed)
	}
	if st, _ := errorStatus(context.DeadlineExceeded); st != http.StatusGatewayTimeout {
		t.Errorf("context.DeadlineExceeded maps to %d", st)
	}
}

func TestOrigin(t *testing.T) {
	s := New(&fakeBackend{}, Options{AllowedOrigins: []string{"https://App.example:8443"}})
	sv := serveUnix(t, s, "")
	tests := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"none", nil, 200},
		{"foreign origin", map[string]string{"Origin": "https://evil.example"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"foreign referer", map[string]string{"Referer": "https://evil.example/page"}, 403},
		{"allowed origin", map[string]string{"Origin": "https://app.example:8443"}, 200},
		{"allowed referer", map[string]string{"Referer": "https://app.example:8443/x/y?z"}, 200},
		{"allowed origin, foreign referer", map[string]string{"Origin": "https://app.example:8443", "Referer": "http://evil/"}, 403},
		{"other port", map[string]string{"Origin": "https://app.example"}, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sv.do(t, "GET", "/api/v1/status", "", tt.hdr)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
		})
	}
}
