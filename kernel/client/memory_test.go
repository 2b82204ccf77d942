package client_test

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// lastQuery returns the decoded query of the fake's last request and its path without the query.
func lastQuery(t *testing.T, f *clienttest.Fake) (string, url.Values) {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	last := reqs[len(reqs)-1]
	u, err := url.ParseRequestURI(last.Path)
	if err != nil {
		t.Fatal(err)
	}
	return last.Method + " " + u.Path, u.Query()
}

func TestWindow(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	f := clienttest.New()
	c := dialUnix(t, f)
	odd := "qq:群 1&x=y/z"
	for _, id := range []string{"work", odd} {
		if _, err := c.CreateSession(ctx, client.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	set := client.Window{Session: odd, Input: "咖啡 & 茶", Budget: 100, Used: 9, Pinned: 1, Sunk: 2,
		Items: []client.WindowItem{{ID: 4, Time: at, Role: "user", Content: "我喜欢咖啡 & 茶", Tokens: 9, Score: 0.75,
			Reason: "bm25 0.75", Source: "scored"}}}
	f.SetWindow(set)

	tests := []struct {
		name     string
		session  string
		want     client.Window
		wantErr  error
		wantSent bool // whether a request reaches the kernel
	}{
		{"set window round-trips an odd id", odd, set, nil, true},
		{"derived from empty history", "work", client.Window{Session: "work", Budget: 4096, Items: []client.WindowItem{}}, nil, true},
		{"unknown session", "nope", client.Window{}, client.ErrNotFound, true},
		{"empty session", "", client.Window{}, client.ErrInvalid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Requests())
			got, err := c.Window(ctx, tt.session)
			if sent := len(f.Requests()) > before; sent != tt.wantSent {
				t.Fatalf("request sent: %v, want %v", sent, tt.wantSent)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			path, q := lastQuery(t, f)
			if path != "GET /api/v1/window" || !reflect.DeepEqual(q, url.Values{"session": {tt.session}}) {
				t.Errorf("request %s %v", path, q)
			}
		})
	}
}

func TestSearchMemory(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	f := clienttest.New()
	c := dialUnix(t, f)
	if _, err := c.CreateSession(ctx, client.Session{ID: "qq-g1", Channel: "qq", Partner: "群友", Scope: "group:1"}); err != nil {
		t.Fatal(err)
	}
	private := client.MemoryHit{ID: 1, Session: "main", Time: at, Role: "user", Scope: "private", Layer: 2,
		Content: "我喜欢咖啡 & 茶"}
	group := client.MemoryHit{ID: 2, Session: "qq-g1", Time: at.Add(time.Minute), Role: "user", Channel: "qq",
		Partner: "群友", Scope: "group:1", Layer: 1, Content: "群里也聊咖啡"}
	public := client.MemoryHit{ID: 3, Session: "blog", Time: at.Add(2 * time.Minute), Role: "assistant",
		Scope: "public", Layer: 2, Content: "Coffee & tea: 咖啡 a+b=c?"}
	f.AddMemory(private, group, public)
	scored := func(h client.MemoryHit, score float64, reason string) client.MemoryHit {
		h.Score, h.Reason = score, reason
		return h
	}

	tests := []struct {
		name      string
		q         client.MemoryQuery
		want      []client.MemoryHit
		wantQuery url.Values // what the kernel received; nil: not checked
		wantErr   error
	}{
		{"chinese and ampersand round-trip", client.MemoryQuery{Text: "咖啡 & 茶"},
			[]client.MemoryHit{scored(private, 1, "fake: 3/3 terms"), scored(public, 2.0/3, "fake: 2/3 terms"), scored(group, 1.0/3, "fake: 1/3 terms")},
			url.Values{"q": {"咖啡 & 茶"}}, nil},
		{"reserved characters", client.MemoryQuery{Text: "a+b=c?", K: 5},
			[]client.MemoryHit{scored(public, 1, "fake: 1/1 terms")}, url.Values{"q": {"a+b=c?"}, "k": {"5"}}, nil},
		{"k limits", client.MemoryQuery{Text: "咖啡", K: 1},
			[]client.MemoryHit{scored(public, 1, "fake: 1/1 terms")}, nil, nil},
		{"scope filter", client.MemoryQuery{Text: "咖啡", Scope: "group:1"},
			[]client.MemoryHit{scored(group, 1, "fake: 1/1 terms")}, url.Values{"q": {"咖啡"}, "scope": {"group:1"}}, nil},
		{"layer filter", client.MemoryQuery{Text: "咖啡", Layer: 2},
			[]client.MemoryHit{scored(public, 1, "fake: 1/1 terms"), scored(private, 1, "fake: 1/1 terms")},
			url.Values{"q": {"咖啡"}, "layer": {"2"}}, nil},
		{"group session's view", client.MemoryQuery{Text: "咖啡", Session: "qq-g1"},
			[]client.MemoryHit{scored(public, 1, "fake: 1/1 terms"), scored(group, 1, "fake: 1/1 terms")},
			url.Values{"q": {"咖啡"}, "session": {"qq-g1"}}, nil},
		{"no hits is empty, not nil", client.MemoryQuery{Text: "nothing here"}, []client.MemoryHit{}, nil, nil},
		{"k too big is refused by the kernel", client.MemoryQuery{Text: "x", K: 101}, nil, nil, client.ErrInvalid},
		{"bad scope is refused by the kernel", client.MemoryQuery{Text: "x", Scope: "friends"}, nil, nil, client.ErrInvalid},
		{"unknown session", client.MemoryQuery{Text: "x", Session: "nope"}, nil, nil, client.ErrNotFound},
		{"blank text is refused before sending", client.MemoryQuery{Text: "  "}, nil, nil, client.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.Requests())
			got, err := c.SearchMemory(ctx, tt.q)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if strings.TrimSpace(tt.q.Text) == "" && len(f.Requests()) != before {
					t.Errorf("a blank query reached the kernel")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			path, q := lastQuery(t, f)
			if path != "GET /api/v1/memory/search" {
				t.Errorf("request %s", path)
			}
			if tt.wantQuery != nil && !reflect.DeepEqual(q, tt.wantQuery) {
				t.Errorf("kernel received %v, want %v", q, tt.wantQuery)
			}
		})
	}
}

func TestCreateSessionWhereabouts(t *testing.T) {
	ctx := context.Background()
	f := clienttest.New()
	c := dialUnix(t, f)
	s, err := c.CreateSession(ctx, client.Session{ID: "qq-g1", Channel: "qq", Partner: "群 1", Scope: "group:1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Channel != "qq" || s.Partner != "群 1" || s.Scope != "group:1" {
		t.Errorf("session %+v", s)
	}
	reqs := f.Requests()
	if b := reqs[len(reqs)-1].Body; b != `{"id":"qq-g1","channel":"qq","partner":"群 1","scope":"group:1"}` {
		t.Errorf("body %s", b)
	}
	if _, err := c.CreateSession(ctx, client.Session{Scope: "everyone"}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("bad scope: error %v, want ErrInvalid", err)
	}
}

func TestCheckScope(t *testing.T) {
	tests := []struct {
		scope string
		ok    bool
	}{
		{"private", true},
		{"public", true},
		{"group:1", true},
		{"group:qq_群", true},
		{"", false},
		{"group:", false},
		{"group:a b", false},
		{"Public", false},
		{"groups:1", false},
		{" private", false},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			err := client.CheckScope(tt.scope)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckScope(%q) = %v, want ok=%v", tt.scope, err, tt.ok)
			}
			if err != nil && !errors.Is(err, client.ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
		})
	}
}
