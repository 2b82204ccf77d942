package api

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// The fake's branch service: the calls it got ("page session before limit", "switch session id").
var branchCalls = map[*fakeBackend][]string{}

func (f *fakeBackend) HistoryPage(ctx context.Context, q client.HistoryQuery) (client.HistoryPage, error) {
	branchCalls[f] = append(branchCalls[f], fmt.Sprintf("page %s %d %d", q.Session, q.Before, q.Limit))
	return client.HistoryPage{Messages: []client.Message{{ID: 7, Role: "user", Content: "hi",
		Branch: &client.Branch{Index: 2, Count: 2, Siblings: []int64{5, 7}}}}, More: true}, nil
}

func (f *fakeBackend) SwitchBranch(ctx context.Context, session string, id int64) error {
	branchCalls[f] = append(branchCalls[f], fmt.Sprintf("switch %s %d", session, id))
	return nil
}

// TestBranchRoutes: paged history and the branch switch pass what they were given and refuse
// what they cannot read, with the reason.
func TestBranchRoutes(t *testing.T) {
	b := &fakeBackend{}
	sv := serveUnix(t, New(b, Options{}), "")
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name, method, path, body string
		want                     int
		wantBody                 string // substring of the body (the error message when want is 4xx)
		call                     string
	}{
		{"newest page", "GET", "/api/v1/sessions/trip/history?page=1", "", 200, `"more":true`, "page trip 0 0"},
		{"page before", "GET", "/api/v1/sessions/trip/history?before=40&limit=20", "", 200,
			`"branch":{"index":2,"count":2,"siblings":[5,7]}`, "page trip 40 20"},
		{"before not a number", "GET", "/api/v1/sessions/trip/history?before=x", "", 400, `before must be one integer >= 0, got "x"`, ""},
		{"limit too large", "GET", "/api/v1/sessions/trip/history?page=1&limit=501", "", 400, "limit must be one integer >= 0 and <= 500", ""},
		{"unknown parameter", "GET", "/api/v1/sessions/trip/history?page=1&after=3", "", 400, `"after"`, ""},
		{"switch", "POST", "/api/v1/sessions/trip/branch", `{"message":12}`, 204, "", "switch trip 12"},
		{"switch without message", "POST", "/api/v1/sessions/trip/branch", `{}`, 400, "message must be a message id", ""},
		{"switch unknown field", "POST", "/api/v1/sessions/trip/branch", `{"id":12}`, 400, `unknown field "id"`, ""},
		{"base prompt", "GET", "/api/v1/prompt", "", 200, `"default":true`, ""},
		{"set base prompt", "PUT", "/api/v1/prompt", `{"template":"Hi {owner}","owner":"Sasha"}`, 200, `"owner":"Sasha"`, `prompt "Hi {owner}" false "Sasha"`},
		{"set preview", "PUT", "/api/v1/prompt", `{"template":"x","preview":"y"}`, 400, "preview is read only", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(branchCalls[b])
			resp, body := sv.do(t, tt.method, tt.path, tt.body, json)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if tt.want >= 400 {
				if e := apiError(t, body); !strings.Contains(e.Message, tt.wantBody) {
					t.Errorf("error %+v, want %q", e, tt.wantBody)
				}
			} else if !strings.Contains(body, tt.wantBody) {
				t.Errorf("body %s, want %q in it", body, tt.wantBody)
			}
			calls := branchCalls[b][before:]
			if tt.call == "" && len(calls) != 0 || tt.call != "" && (len(calls) != 1 || calls[0] != tt.call) {
				t.Errorf("backend got %q, want %q", calls, tt.call)
			}
		})
	}
}

func (f *fakeBackend) BasePrompt(ctx context.Context) (client.BasePrompt, error) {
	return client.BasePrompt{Template: "You are {owner}'s agent.", Default: true}, nil
}

func (f *fakeBackend) SetBasePrompt(ctx context.Context, p client.BasePrompt) (client.BasePrompt, error) {
	branchCalls[f] = append(branchCalls[f], fmt.Sprintf("prompt %q %v %q", p.Template, p.Default, p.Owner))
	return p, nil
}
