package api

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// assistantBackend is the fake backend with assistants (one preset, "tr").
type assistantBackend struct {
	fakeBackend
	saved  client.Assistant
	title  string
	starts int
}

func (b *assistantBackend) Assistants(context.Context) ([]client.Assistant, error) {
	return []client.Assistant{{ID: "tr", Name: "Translator", Tools: []string{}}}, nil
}

func (b *assistantBackend) SaveAssistant(_ context.Context, a client.Assistant) (client.Assistant, error) {
	if a.Name == "" {
		return client.Assistant{}, fmt.Errorf("%w: an assistant needs a name", client.ErrInvalid)
	}
	b.saved = a
	a.ID = "made-from-name"
	return a, nil
}

func (b *assistantBackend) RemoveAssistant(_ context.Context, id string) error {
	if id != "tr" {
		return fmt.Errorf("%w: no assistant %q", client.ErrNotFound, id)
	}
	return nil
}

func (b *assistantBackend) StartAssistant(_ context.Context, id, title string) (client.Session, error) {
	if id != "tr" {
		return client.Session{}, fmt.Errorf("%w: no assistant %q", client.ErrNotFound, id)
	}
	b.starts++
	b.title = title
	return client.Session{ID: "tr-1", Title: "Translator"}, nil
}

func (b *assistantBackend) SessionTools(_ context.Context, session string) (client.SessionTools, error) {
	return client.SessionTools{Session: session, Assistant: "tr", Tools: []string{"web"}}, nil
}

// TestAssistantRoutes: the routes' answers, statuses and errors; a backend without assistants
// answers 503.
func TestAssistantRoutes(t *testing.T) {
	b := &assistantBackend{}
	sv := serveUnix(t, New(b, Options{MaxBodyBytes: 1 << 10}), "")
	json := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		method, path, body string
		want               int
		in                 string // in the body
	}{
		{"GET", "/api/v1/assistants", "", 200, `"assistants":[{"id":"tr","name":"Translator","instructions":"","model":"","tools":[]}]`},
		{"POST", "/api/v1/assistants", `{"name":"X","tools":["files"]}`, 200, `"id":"made-from-name"`},
		{"POST", "/api/v1/assistants", `{"name":""}`, 400, "needs a name"},
		{"POST", "/api/v1/assistants", `{"name":"X","colour":"red"}`, 400, `unknown field \"colour\"`},
		{"POST", "/api/v1/assistants", `{"name":"` + strings.Repeat("x", 2000) + `"}`, 413, "larger than"},
		{"DELETE", "/api/v1/assistants/tr", "", 204, ""},
		{"DELETE", "/api/v1/assistants/ghost", "", 404, `no assistant \"ghost\"`},
		{"POST", "/api/v1/assistants/tr/sessions", "", 201, `"id":"tr-1"`},
		{"POST", "/api/v1/assistants/tr/sessions", `{"title":"Menu"}`, 201, `"title":"Translator"`},
		{"POST", "/api/v1/assistants/tr/sessions", `{"name":"Menu"}`, 400, `unknown field \"name\"`},
		{"POST", "/api/v1/assistants/ghost/sessions", "{}", 404, "no assistant"},
		{"GET", "/api/v1/sessions/tr-1/tools", "", 200, `{"session":"tr-1","assistant":"tr","tools":["web"]}`},
	} {
		resp, body := sv.do(t, tc.method, tc.path, tc.body, json)
		if resp.StatusCode != tc.want || !strings.Contains(string(body), tc.in) {
			t.Errorf("%s %s %.40s: %d %s; want %d with %s", tc.method, tc.path, tc.body, resp.StatusCode, body, tc.want, tc.in)
		}
	}
	if b.saved.Name != "X" || len(b.saved.Tools) != 1 || b.starts != 2 || b.title != "Menu" {
		t.Errorf("backend saw %+v, %d starts, title %q", b.saved, b.starts, b.title)
	}

	plain := serveUnix(t, New(&fakeBackend{}, Options{}), "")
	resp, body := plain.do(t, "GET", "/api/v1/assistants", "", nil)
	if e := apiError(t, body); resp.StatusCode != 503 || !strings.Contains(e.Message, "keeps no assistants") {
		t.Errorf("without assistants: %d %s", resp.StatusCode, body)
	}
}
