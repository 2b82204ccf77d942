package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// approvalBackend is a fakeBackend with approvals.
type approvalBackend struct {
	*fakeBackend
	mu      sync.Mutex
	pending map[string]client.Approval
}

func (b *approvalBackend) Approvals(context.Context) ([]client.Approval, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []client.Approval{}
	for _, id := range []string{"ap1", "ap2"} {
		if a, ok := b.pending[id]; ok {
			out = append(out, a)
		}
	}
	return out, nil
}

func (b *approvalBackend) AnswerApproval(_ context.Context, id string, approve bool) (client.Approval, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.pending[id]
	if !ok {
		return client.Approval{}, fmt.Errorf("%w: no pending approval %q", client.ErrNotFound, id)
	}
	delete(b.pending, id)
	a.State = client.ApprovalDenied
	if approve {
		a.State = client.ApprovalApproved
	}
	return a, nil
}

var _ client.ApprovalService = (*approvalBackend)(nil)

func TestApprovalRoutes(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := &approvalBackend{fakeBackend: &fakeBackend{}, pending: map[string]client.Approval{
		"ap1": {ID: "ap1", Plugin: "shell", Title: "Run a command", Detail: "$ ls", Session: "main", Created: created,
			Expires: created.Add(2 * time.Minute), State: client.ApprovalPending},
		"ap2": {ID: "ap2", Plugin: "shell", Title: "Run a command", Channel: "qq", Partner: "group_1", Created: created,
			Expires: created.Add(2 * time.Minute), State: client.ApprovalPending},
	}}
	srv := New(b, Options{})
	sv := serveUnix(t, srv, "")
	resp, body := sv.do(t, "POST", "/api/v1/approvals/credential", `{"client":"waiter"}`, nil)
	var cred client.ApprovalCredential
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &cred) != nil || cred.Client != "waiter" || len(cred.Credential) < 40 {
		t.Fatalf("credential: %d %s", resp.StatusCode, body)
	}
	withCred := map[string]string{client.ApprovalCredentialHeader: cred.Credential}
	for _, tt := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
		wantBody                 string
	}{
		{"a bare connection cannot answer", "POST", "/api/v1/approvals/ap1", `{"approve":true}`, nil, 403, "needs the owner's approval credential"},
		{"nor with a made-up credential", "POST", "/api/v1/approvals/ap1", `{"approve":true}`,
			map[string]string{client.ApprovalCredentialHeader: "guess"}, 403, "unknown approval credential"},
		{"a credential needs a client name", "POST", "/api/v1/approvals/credential", `{"client":" "}`, nil, 400, `field \"client\"`},
		{"a credential refuses unknown fields", "POST", "/api/v1/approvals/credential", `{"client":"x","owner":true}`, nil, 400, "owner"},
		{"answer needs the field", "POST", "/api/v1/approvals/ap1", `{}`, withCred, 400, `field \"approve\" (true or false) is required`},
		{"answer needs a body", "POST", "/api/v1/approvals/ap1", ``, withCred, 400, ""},
		{"unknown field", "POST", "/api/v1/approvals/ap1", `{"approve":true,"by":"group member"}`, withCred, 400, `by`},
		{"not a bool", "POST", "/api/v1/approvals/ap1", `{"approve":"yes"}`, withCred, 400, ""},
		{"unknown query", "GET", "/api/v1/approvals?all=1", ``, withCred, 400, `unknown query parameter \"all\"`},
		{"approve", "POST", "/api/v1/approvals/ap1", `{"approve":true}`, withCred, 200, `"state":"approved"`},
		{"answered already", "POST", "/api/v1/approvals/ap1", `{"approve":false}`, withCred, 404, `no pending approval \"ap1\"`},
		{"deny", "POST", "/api/v1/approvals/ap2", `{"approve":false}`, withCred, 200, `"state":"denied"`},
		{"empty list", "GET", "/api/v1/approvals", ``, withCred, 200, `{"approvals":[]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sv.do(t, tt.method, tt.path, tt.body, tt.hdr)
			if resp.StatusCode != tt.want || !strings.Contains(body, tt.wantBody) {
				t.Fatalf("%s %s: %d %s, want %d containing %q", tt.method, tt.path, resp.StatusCode, body, tt.want, tt.wantBody)
			}
		})
	}

	// The HTTP client over the same routes.
	b.pending["ap3"] = client.Approval{ID: "ap3", Plugin: "shell", Title: "t", State: client.ApprovalPending}
	b.pending["ap1"] = client.Approval{ID: "ap1", Plugin: "shell", Title: "Run a command", Created: created, State: client.ApprovalPending}
	c, err := client.Dial(client.Options{Socket: sv.path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.Approvals(context.Background())
	if err != nil || len(list) != 1 || list[0].ID != "ap1" || !list[0].Created.Equal(created) {
		t.Fatalf("client list %+v %v", list, err)
	}
	got, err := c.AnswerApproval(context.Background(), "ap1", false)
	if err != nil || got.State != client.ApprovalDenied {
		t.Fatalf("client answer %+v %v", got, err)
	}
	if _, err := c.AnswerApproval(context.Background(), "ap1", true); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("client answer again: %v", err)
	}
	// A kernel that forgot the client's credential (it restarted) is asked for a new one.
	srv.creds.mu.Lock()
	clear(srv.creds.by)
	srv.creds.mu.Unlock()
	if got, err := c.AnswerApproval(context.Background(), "ap3", true); err != nil || got.State != client.ApprovalApproved {
		t.Fatalf("answer after the credential was forgotten: %+v %v", got, err)
	}
	if _, err := c.AnswerApproval(context.Background(), "", true); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("client empty id: %v", err)
	}
}

func TestApprovalRoutesWithNonePending(t *testing.T) {
	sv := serveUnix(t, New(&fakeBackend{}, Options{}), "")
	for _, r := range []struct {
		method, path, body string
		status             int
		want               string
	}{{"GET", "/api/v1/approvals", "", 200, `{"approvals":[]}`}, {"POST", "/api/v1/approvals/ap1", `{"approve":true}`, 403, `approval credential`}} {
		resp, body := sv.do(t, r.method, r.path, r.body, nil)
		if resp.StatusCode != r.status || !strings.Contains(body, r.want) {
			t.Fatalf("%s %s: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
}

func TestChatStreamCarriesApprovals(t *testing.T) {
	ap := client.Approval{ID: "ap1", Plugin: "shell", Title: "Run a command", Session: "main", State: client.ApprovalPending}
	b := &fakeBackend{chat: func(_ context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
		emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1", Session: "main"})
		emit(client.ChatEvent{Type: client.EventApproval, TurnID: "t1", Session: "main", Approval: &ap})
		emit(client.ChatEvent{Type: client.EventFinal, TurnID: "t1", Session: "main", Text: "ok"})
		return client.ChatResult{TurnID: "t1", Session: "main", Text: "ok"}, nil
	}}
	sv := serveUnix(t, New(b, Options{}), "")
	c, err := client.Dial(client.Options{Socket: sv.path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []client.ChatEvent
	if _, err := c.Chat(context.Background(), client.ChatRequest{Input: "hi"}, func(ev client.ChatEvent) { got = append(got, ev) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Type != client.EventApproval || got[1].Approval == nil || *got[1].Approval != ap {
		t.Fatalf("events %+v", got)
	}
}
