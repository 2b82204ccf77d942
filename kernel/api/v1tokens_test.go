package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory/memtest"
)

// TestV1ClientTokens: the owner adds tokens over /api/v1/tokens; each reaches /v1 only, with its
// client (owner or guest) passed to the backend; a guest's conversation sessions are its own; a
// removed token is refused; the store keeps only hashes, and a new server reads them back.
func TestV1ClientTokens(t *testing.T) {
	const ownerTok = "the-owners-token"
	settings := memtest.NewMem(nil)
	var mu sync.Mutex
	var got []client.CompletionRequest
	b := &fakeBackend{complete: func(_ context.Context, req client.CompletionRequest, _ func(client.ChatEvent)) (client.ChatResult, error) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		return client.ChatResult{TurnID: "t1", Text: "ok"}, nil
	}}
	s := New(b, Options{Token: ownerTok, Settings: settings})
	sv := serveTCP(t, s, nil, nil)
	owner := map[string]string{"Authorization": "Bearer " + ownerTok}
	add := func(name string, isOwner bool) client.APIToken {
		t.Helper()
		resp, body := sv.do(t, "POST", "/api/v1/tokens", fmt.Sprintf(`{"name":%q,"owner":%v}`, name, isOwner), owner)
		var tok client.APIToken
		if resp.StatusCode != 201 || json.Unmarshal([]byte(body), &tok) != nil || !strings.HasPrefix(tok.Token, APITokenPrefix) {
			t.Fatalf("add %s: %d %s", name, resp.StatusCode, body)
		}
		return tok
	}
	app, admin := add("notes-app", false), add("my-scripts", true)
	if app.Scope != "group:token:notes-app" || admin.Scope != "private" {
		t.Fatalf("scopes %q %q", app.Scope, admin.Scope)
	}
	stored, err := settings.ListSettings(context.Background(), "")
	if err != nil || len(stored) == 0 {
		t.Fatalf("settings: %v, %v", stored, err)
	}
	for _, v := range stored {
		if strings.Contains(v, app.Token) || strings.Contains(v, admin.Token) {
			t.Fatalf("a token stored in clear: %s", v)
		}
	}
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, body, auth string
		want                           int
		wantMsg                        string
		wantClient                     string
		wantGuest                      bool
	}{
		{"guest on /v1", "POST", "/v1/chat/completions", chat, app.Token, 200, "", "notes-app", true},
		{"owner token on /v1", "POST", "/v1/chat/completions", chat, admin.Token, 200, "", "my-scripts", false},
		{"the owner's own token", "POST", "/v1/chat/completions", chat, ownerTok, 200, "", "", false},
		{"guest lists models", "GET", "/v1/models", "", app.Token, 200, "", "", false},
		{"guest on /api/v1", "GET", "/api/v1/status", "", app.Token, 403, "a /v1 client token", "", false},
		{"owner client token on /api/v1", "GET", "/api/v1/tokens", "", admin.Token, 403, "a /v1 client token", "", false},
		{"an unknown token", "GET", "/v1/models", "", APITokenPrefix + "nope", 401, "invalid bearer token", "", false},
		{"a token's prefix", "GET", "/v1/models", "", app.Token[:20], 401, "invalid bearer token", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			resp, body := sv.do(t, tt.method, tt.path, tt.body, map[string]string{"Authorization": "Bearer " + tt.auth})
			if resp.StatusCode != tt.want || !strings.Contains(body, tt.wantMsg) {
				t.Fatalf("%d %s, want %d %q", resp.StatusCode, body, tt.want, tt.wantMsg)
			}
			// A refused request's connection is closed, and the answer says so: a client that
			// reused it would find the next request's context cancelled (its answer lost).
			if refused := tt.want == 401 || tt.want == 403; resp.Close != refused {
				t.Fatalf("Connection: close %v on a %d", resp.Close, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.method == "POST" && tt.want == 200 {
				if len(got) != 1 || got[0].Client != tt.wantClient || got[0].Guest != tt.wantGuest {
					t.Fatalf("backend got %+v", got)
				}
				mine := conversationSession("m", []completionMessage{{Role: "user", Content: json.RawMessage(`"hi"`)}}, tt.wantClient)
				if got[0].Session != mine {
					t.Fatalf("session %s, want %s (the token's own conversations)", got[0].Session, mine)
				}
			}
		})
	}
	if conversationSession("m", nil, "notes-app") == conversationSession("m", nil, "") {
		t.Fatal("a guest's conversation shares the owner's session")
	}

	// List, remove, and read back from the store.
	resp, body := sv.do(t, "GET", "/api/v1/tokens", "", owner)
	if resp.StatusCode != 200 || !strings.Contains(body, `"name":"my-scripts"`) || !strings.Contains(body, `"name":"notes-app"`) || strings.Contains(body, `"token"`) {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	if resp, body := sv.do(t, "POST", "/api/v1/tokens", `{"name":"notes-app"}`, owner); resp.StatusCode != 400 || !strings.Contains(body, "exists") {
		t.Fatalf("add twice: %d %s", resp.StatusCode, body)
	}
	if resp, body := sv.do(t, "POST", "/api/v1/tokens", `{"name":"Bad Name"}`, owner); resp.StatusCode != 400 || !strings.Contains(body, "lower-case") {
		t.Fatalf("bad name: %d %s", resp.StatusCode, body)
	}
	if resp, body := sv.do(t, "DELETE", "/api/v1/tokens/notes-app", "", owner); resp.StatusCode != 204 {
		t.Fatalf("remove: %d %s", resp.StatusCode, body)
	}
	if resp, _ := sv.do(t, "GET", "/v1/models", "", map[string]string{"Authorization": "Bearer " + app.Token}); resp.StatusCode != 401 {
		t.Fatalf("a removed token: %d", resp.StatusCode)
	}
	if resp, _ := sv.do(t, "DELETE", "/api/v1/tokens/notes-app", "", owner); resp.StatusCode != 404 {
		t.Fatalf("remove twice: %d", resp.StatusCode)
	}
	s2 := New(b, Options{Token: ownerTok, Settings: settings})
	sv2 := serveTCP(t, s2, nil, nil)
	if resp, body := sv2.do(t, "GET", "/v1/models", "", map[string]string{"Authorization": "Bearer " + admin.Token}); resp.StatusCode != 200 {
		t.Fatalf("a stored token after a restart: %d %s", resp.StatusCode, body)
	}
	// Without a settings store, tokens cannot be added (and none authorise).
	s3 := New(b, Options{Token: ownerTok})
	sv3 := serveTCP(t, s3, nil, nil)
	if resp, body := sv3.do(t, "POST", "/api/v1/tokens", `{"name":"x"}`, owner); resp.StatusCode != 503 {
		t.Fatalf("no settings: %d %s", resp.StatusCode, body)
	}
}
