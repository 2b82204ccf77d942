package api

import (
	"context"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// The fake's session admin: the calls it got, answered with what it was asked.
type sessionCall struct {
	id, title string
	forget    bool
}

var sessionCalls = map[*fakeBackend][]sessionCall{}

func (f *fakeBackend) RenameSession(ctx context.Context, id, title string) (client.Session, error) {
	sessionCalls[f] = append(sessionCalls[f], sessionCall{id: id, title: title})
	return client.Session{ID: id, Title: title}, nil
}

func (f *fakeBackend) DeleteSession(ctx context.Context, id string, forget bool) (client.SessionDeleted, error) {
	sessionCalls[f] = append(sessionCalls[f], sessionCall{id: id, forget: forget})
	return client.SessionDeleted{Session: id, Forgotten: forget}, nil
}

// TestSessionAdminRoutes: PATCH and DELETE /api/v1/sessions/{id} pass what they were given
// and refuse a request they cannot read, with the reason.
func TestSessionAdminRoutes(t *testing.T) {
	b := &fakeBackend{}
	sv := serveUnix(t, New(b, Options{}), "")
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name, method, path, body string
		want                     int
		wantMsg                  string       // substring of the error message (want != 200)
		call                     *sessionCall // what reached the backend (want 200)
	}{
		{"rename", "PATCH", "/api/v1/sessions/trip", `{"title":"Trip to Porto"}`, 200, "", &sessionCall{id: "trip", title: "Trip to Porto"}},
		{"rename without title", "PATCH", "/api/v1/sessions/trip", `{}`, 400, "nothing to change", nil},
		{"rename unknown field", "PATCH", "/api/v1/sessions/trip", `{"name":"x"}`, 400, `unknown field "name"`, nil},
		{"delete", "DELETE", "/api/v1/sessions/trip", "", 200, "", &sessionCall{id: "trip"}},
		{"delete and forget", "DELETE", "/api/v1/sessions/trip?forget=true", "", 200, "", &sessionCall{id: "trip", forget: true}},
		{"delete, forget false", "DELETE", "/api/v1/sessions/trip?forget=0", "", 200, "", &sessionCall{id: "trip"}},
		{"delete, forget not a bool", "DELETE", "/api/v1/sessions/trip?forget=maybe", "", 400, `forget must be true or false, got "maybe"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(sessionCalls[b])
			resp, body := sv.do(t, tt.method, tt.path, tt.body, json)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			calls := sessionCalls[b][before:]
			if tt.want != 200 {
				if e := apiError(t, body); !strings.Contains(e.Message, tt.wantMsg) {
					t.Errorf("error %+v, want %q", e, tt.wantMsg)
				}
				if len(calls) != 0 {
					t.Errorf("a refused request reached the backend: %+v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0] != *tt.call {
				t.Errorf("backend got %+v, want %+v", calls, *tt.call)
			}
		})
	}
}
