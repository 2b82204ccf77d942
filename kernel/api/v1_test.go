package api

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestCompletionRetriesReplay: a retry of a /v1 request (the same Idempotency-Key, or without
// one a retry count ≥ 1 and the same body) is answered from its first attempt, success or
// error, without a second turn; an identical request without either header is a new turn.
func TestCompletionRetriesReplay(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"book the table"}]}`
	tests := []struct {
		name      string
		hdrs      []map[string]string // one request each
		fail      bool                // the backend fails like an overloaded provider
		wantTurns int32
	}{
		{"idempotency key", []map[string]string{{"Idempotency-Key": "k1"}, {"Idempotency-Key": "k1", "X-Stainless-Retry-Count": "1"}, {"Idempotency-Key": "k1", "X-Stainless-Retry-Count": "2"}}, false, 1},
		{"503 replayed", []map[string]string{{"Idempotency-Key": "k2"}, {"Idempotency-Key": "k2", "X-Stainless-Retry-Count": "1"}}, true, 1},
		{"retry count without key", []map[string]string{{"X-Stainless-Retry-Count": "0"}, {"X-Stainless-Retry-Count": "1"}, {"X-Stainless-Retry-Count": "2"}}, false, 1}, // as the openai npm client retries
		{"sdk regenerate", []map[string]string{{"X-Stainless-Retry-Count": "0"}, {"X-Stainless-Retry-Count": "0"}}, false, 2},
		{"sdk regenerate then retry", []map[string]string{{"X-Stainless-Retry-Count": "0"}, {"X-Stainless-Retry-Count": "0"}, {"X-Stainless-Retry-Count": "1"}}, false, 2},
		{"other keys", []map[string]string{{"Idempotency-Key": "a"}, {"Idempotency-Key": "b"}}, false, 2},
		{"regenerate", []map[string]string{{}, {}}, false, 2},
		{"other token", []map[string]string{{"Idempotency-Key": "k3", "Authorization": "Bearer one"}, {"Idempotency-Key": "k3", "Authorization": "Bearer two"}}, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var turns atomic.Int32
			s := New(&fakeBackend{complete: func(context.Context, client.CompletionRequest, func(client.ChatEvent)) (client.ChatResult, error) {
				n := turns.Add(1)
				if tt.fail {
					return client.ChatResult{}, &client.Error{Status: http.StatusServiceUnavailable, Message: "the model's provider failed: overloaded", RetryAfter: 7}
				}
				return client.ChatResult{TurnID: "t" + string(rune('0'+n)), Text: "done"}, nil
			}}, Options{})
			sv := serveUnix(t, s, "")
			var first string
			for i, h := range tt.hdrs {
				resp, out := sv.do(t, "POST", "/v1/chat/completions", body, h)
				switch {
				case tt.fail && (resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "7"):
					t.Fatalf("request %d: %d Retry-After %q: %s", i, resp.StatusCode, resp.Header.Get("Retry-After"), out)
				case !tt.fail && resp.StatusCode != 200:
					t.Fatalf("request %d: %d %s", i, resp.StatusCode, out)
				}
				if i == 0 {
					first = out
				} else if tt.wantTurns == 1 && (out != first || resp.Header.Get("X-Hologram-Replayed") != "true") {
					t.Fatalf("retry %d not answered from the first attempt: %s vs %s", i, out, first)
				}
			}
			if got := turns.Load(); got != tt.wantTurns {
				t.Fatalf("%d turns ran, want %d", got, tt.wantTurns)
			}
		})
	}
}

// TestCORS: a preflight from an allowed origin is answered 204 without a token, with that origin
// (never "*"), the methods and the headers the OpenAI SDK sends; its requests carry the origin;
// another origin gets no CORS header and is refused.
func TestCORS(t *testing.T) {
	s := New(&fakeBackend{models: func(context.Context) ([]string, error) { return []string{"m"}, nil }},
		Options{AllowedOrigins: []string{"http://app.example:8080"}})
	sv := serveUnix(t, s, "")
	preflight := map[string]string{"Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, x-stainless-retry-count, x-stainless-os, x-evil"}
	for _, tc := range []struct {
		origin string
		ok     bool
	}{{"http://app.example:8080", true}, {"http://evil.example", false}} {
		h := map[string]string{"Origin": tc.origin}
		for k, v := range preflight {
			h[k] = v
		}
		resp, _ := sv.do(t, "OPTIONS", "/v1/chat/completions", "", h)
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		if !tc.ok {
			if acao != "" || resp.Header.Get("Access-Control-Allow-Headers") != "" || resp.StatusCode == 204 {
				t.Fatalf("%s: preflight %d with CORS headers %q", tc.origin, resp.StatusCode, acao)
			}
			continue
		}
		allow := resp.Header.Get("Access-Control-Allow-Headers")
		if resp.StatusCode != 204 || acao != tc.origin || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(allow, "authorization") || !strings.Contains(allow, "x-stainless-retry-count") || strings.Contains(allow, "x-evil") {
			t.Fatalf("preflight: %d ACAO %q headers %q", resp.StatusCode, acao, allow)
		}
		resp, out := sv.do(t, "GET", "/v1/models", "", map[string]string{"Origin": tc.origin})
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != tc.origin {
			t.Fatalf("request from the allowed origin: %d %q %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), out)
		}
	}
}

// TestModelByID: GET /v1/models/{id} answers a listed model (ids may hold slashes) and 404
// model_not_found otherwise.
func TestModelByID(t *testing.T) {
	s := New(&fakeBackend{models: func(context.Context) ([]string, error) { return []string{"gpt-x", "openrouter/auto"}, nil }}, Options{})
	sv := serveUnix(t, s, "")
	for _, tc := range []struct {
		id   string
		want int
	}{{"gpt-x", 200}, {"openrouter/auto", 200}, {"nope", 404}} {
		resp, out := sv.do(t, "GET", "/v1/models/"+tc.id, "", nil)
		if resp.StatusCode != tc.want || (tc.want == 200 && !strings.Contains(out, `"id":"`+tc.id+`"`)) || (tc.want == 404 && !strings.Contains(out, "model_not_found")) {
			t.Fatalf("%s: %d %s", tc.id, resp.StatusCode, out)
		}
	}
}

// TestToolResultsWithoutATurn: tool results that answer no waiting call are 409, naming what to
// do; nothing reaches the backend.
func TestToolResultsWithoutATurn(t *testing.T) {
	var turns atomic.Int32
	s := New(&fakeBackend{complete: func(context.Context, client.CompletionRequest, func(client.ChatEvent)) (client.ChatResult, error) {
		turns.Add(1)
		return client.ChatResult{}, nil
	}}, Options{})
	sv := serveUnix(t, s, "")
	body := `{"messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_9","content":"sunny"}]}`
	resp, out := sv.do(t, "POST", "/v1/chat/completions", body, nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(out, "answers no waiting call") || turns.Load() != 0 {
		t.Fatalf("%d %s (%d turns)", resp.StatusCode, out, turns.Load())
	}
}
