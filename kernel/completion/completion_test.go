package completion

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

func msgs(texts ...string) []client.IngestMessage {
	var out []client.IngestMessage
	for i, s := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, client.IngestMessage{Role: role, Content: s})
	}
	return out
}

// TestUnseen: what of a resent conversation is new.
func TestUnseen(t *testing.T) {
	stored := msgs("u1", "a1", "u2", "a2")
	for _, tc := range []struct {
		name        string
		seen, prior []client.IngestMessage
		want        []client.IngestMessage
	}{
		{"next turn", stored, msgs("u1", "a1", "u2", "a2"), nil},
		{"regenerate: a prefix from the start", stored, msgs("u1", "a1"), nil},
		{"a window of the end", stored, msgs("u2", "a2")[0:2], nil},
		{"new session", nil, msgs("u1", "a1"), msgs("u1", "a1")},
		{"a history the session lacks", msgs("x", "y"), msgs("u1", "a1"), msgs("u1", "a1")},
		{"continues the stored end", msgs("u1", "a1"), msgs("u1", "a1", "u2", "a2"), msgs("u1", "a1", "u2", "a2")[2:]},
		{"whitespace is not new", stored, []client.IngestMessage{{Role: "user", Content: " u1\n"}}, nil},
	} {
		if got := Unseen(tc.seen, tc.prior); !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: Unseen = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUpstreamError: a failed provider is 503 (with its Retry-After), 504 or 502; other errors
// pass through.
func TestUpstreamError(t *testing.T) {
	wrap := func(err error) error {
		return &agent.ProviderError{Err: fmt.Errorf("llm request (round 1) via p: %w", err)}
	}
	other := errors.New("unknown session")
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		retryAfter int
	}{
		{"overloaded", wrap(&llm.APIError{Status: 503, Message: "busy", RetryAfter: 3 * time.Second}), http.StatusServiceUnavailable, 3},
		{"rate limited without Retry-After", wrap(&llm.APIError{Status: 429}), http.StatusServiceUnavailable, 1},
		{"server error", wrap(&llm.APIError{Status: 500}), http.StatusBadGateway, 2},
		{"refused request", wrap(&llm.APIError{Status: 400, Message: "bad schema"}), http.StatusBadGateway, 2},
		{"timeout", wrap(fmt.Errorf("read: %w", errDeadline{})), http.StatusGatewayTimeout, 2},
	} {
		var ce *client.Error
		if !errors.As(UpstreamError(tc.err), &ce) || ce.Status != tc.status || ce.RetryAfter != tc.retryAfter || !strings.Contains(ce.Message, "provider failed") {
			t.Errorf("%s: %+v", tc.name, ce)
		}
	}
	if UpstreamError(other) != other || UpstreamError(nil) != nil {
		t.Error("an error that is not the provider's changed")
	}
}

// errDeadline is a net.Error timeout.
type errDeadline struct{}

func (errDeadline) Error() string   { return "i/o timeout" }
func (errDeadline) Timeout() bool   { return true }
func (errDeadline) Temporary() bool { return true }

// TestResend: a request ending where the stored branch goes on with a user message is a
// regenerate (the same message) or an edit (another one).
func TestResend(t *testing.T) {
	stored := msgs("u1", "a1", "u2", "a2")
	for _, tc := range []struct {
		name        string
		prior       []client.IngestMessage
		last        string
		regen, edit int
	}{
		{"next turn", stored, "u3", -1, -1},
		{"regenerate the last reply", msgs("u1", "a1"), "u2", 2, -1},
		{"regenerate the first", nil, "u1", 0, -1},
		{"edit the last question", msgs("u1", "a1"), "u2 but shorter", -1, 2},
		{"edit the first", nil, "something else", -1, 0},
		{"another conversation", msgs("x", "y"), "u2", -1, -1},
	} {
		if r, e := Resend(stored, tc.prior, tc.last); r != tc.regen || e != tc.edit {
			t.Errorf("%s: Resend = %d, %d; want %d, %d", tc.name, r, e, tc.regen, tc.edit)
		}
	}
}

// TestScope: `user` is an end user's scope whatever the token; a guest token's own group
// otherwise; the owner's private; a guest never runs in a session of another scope.
func TestScope(t *testing.T) {
	private := memory.Scope{Kind: memory.ScopePrivate}
	tests := []struct {
		name      string
		req       client.CompletionRequest
		want      memory.Scope
		guest     bool
		session   memory.Scope // the existing session's
		wantError string
	}{
		{"the owner", client.CompletionRequest{Session: "v1-ab"}, private, false, private, ""},
		{"the owner in a group's session", client.CompletionRequest{Session: "grp"}, private, false, memory.Scope{Kind: memory.ScopeGroup, Group: "qq/1"}, ""},
		{"an owner token", client.CompletionRequest{Session: "v1-ab", Client: "scripts"}, private, false, private, ""},
		{"an end user", client.CompletionRequest{Session: "alice", User: true}, memory.Scope{Kind: memory.ScopeGroup, Group: "user:alice"}, true, memory.Scope{Kind: memory.ScopeGroup, Group: "user:alice"}, ""},
		{"an end user of a guest token", client.CompletionRequest{Session: "alice", User: true, Client: "app", Guest: true}, memory.Scope{Kind: memory.ScopeGroup, Group: "user:alice"}, true, memory.Scope{Kind: memory.ScopeGroup, Group: "user:alice"}, ""},
		{"a guest token", client.CompletionRequest{Session: "v1-cd", Client: "app", Guest: true}, memory.Scope{Kind: memory.ScopeGroup, Group: "token:app"}, true, memory.Scope{Kind: memory.ScopeGroup, Group: "token:app"}, ""},
		{"a guest naming the owner's session", client.CompletionRequest{Session: "main", Client: "app", Guest: true}, memory.Scope{Kind: memory.ScopeGroup, Group: "token:app"}, true, private, "not token app's"},
		{"a user naming another's session", client.CompletionRequest{Session: "grp", User: true}, memory.Scope{Kind: memory.ScopeGroup, Group: "user:grp"}, true, memory.Scope{Kind: memory.ScopeGroup, Group: "qq/1"}, "not user grp's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, guest := Scope(tt.req)
			if got != tt.want || guest != tt.guest {
				t.Fatalf("Scope = %v %v, want %v %v", got, guest, tt.want, tt.guest)
			}
			err := CheckScope(tt.req, memory.Session{ID: tt.req.Session, Scope: tt.session}, got, guest)
			switch {
			case tt.wantError == "" && err != nil:
				t.Fatal(err)
			case tt.wantError != "" && (err == nil || !strings.Contains(err.Error(), tt.wantError) || !errors.Is(err, client.ErrInvalid)):
				t.Fatalf("err %v, want %q", err, tt.wantError)
			}
		})
	}
}
