package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestWindowRoute(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var mu sync.Mutex
	var gotSession string
	b := &fakeBackend{window: func(_ context.Context, id string) (client.Window, error) {
		mu.Lock()
		gotSession = id
		mu.Unlock()
		switch id {
		case "nope":
			return client.Window{}, fmt.Errorf("session %q: %w", id, client.ErrNotFound)
		case "cold":
			return client.Window{}, fmt.Errorf("memory is warming up: %w", client.ErrUnavailable)
		case "empty":
			return client.Window{Session: id, Budget: 100}, nil
		}
		return client.Window{Session: id, Input: "咖啡", Budget: 4096, Used: 12, Pinned: 1, Sunk: 3,
			Items: []client.WindowItem{{ID: 7, Time: at, Role: "user", Content: "我喜欢咖啡", Tokens: 12,
				Score: 0.5, Reason: "recent", Source: "pinned"}}}, nil
	}}
	sv := serveUnix(t, New(b, Options{}), "")
	tests := []struct {
		name, path  string
		want        int
		wantBody    string // decoded JSON equality; "" to skip
		wantMsg     string // exact error message; "" to skip
		wantSession string // what the backend saw; "" to skip
	}{
		{name: "window", path: "/api/v1/window?session=main", want: 200,
			wantBody: `{"session":"main","input":"咖啡","budget":4096,"used":12,"pinned":1,"sunk":3,"items":[` +
				`{"id":7,"time":"2026-03-04T05:06:07Z","role":"user","content":"我喜欢咖啡","tokens":12,"score":0.5,"reason":"recent","source":"pinned"}]}`,
			wantSession: "main"},
		{name: "escaped session id", path: "/api/v1/window?session=" + url.QueryEscape("qq:群/1 &x"), want: 200,
			wantSession: "qq:群/1 &x"},
		{name: "no items is []", path: "/api/v1/window?session=empty", want: 200,
			wantBody: `{"session":"empty","input":"","budget":100,"used":0,"pinned":0,"sunk":0,"items":[]}`},
		{name: "session missing", path: "/api/v1/window", want: 400, wantMsg: "session is required"},
		{name: "session empty", path: "/api/v1/window?session=", want: 400, wantMsg: "session is required"},
		{name: "session blank", path: "/api/v1/window?session=%20", want: 400, wantMsg: "session is required"},
		{name: "session twice", path: "/api/v1/window?session=a&session=b", want: 400,
			wantMsg: `query parameter "session" given 2 times`},
		{name: "unknown parameter", path: "/api/v1/window?session=main&limit=3", want: 400,
			wantMsg: `unknown query parameter "limit"`},
		{name: "unknown session", path: "/api/v1/window?session=nope", want: 404, wantMsg: `session "nope": not found`},
		{name: "warming up", path: "/api/v1/window?session=cold", want: 503, wantMsg: "memory is warming up: unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			gotSession = ""
			mu.Unlock()
			resp, body := sv.do(t, "GET", tt.path, "", nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.wantBody != "" {
				assertJSONEqual(t, body, tt.wantBody)
			}
			if tt.wantMsg != "" {
				if e := apiError(t, body); e.Status != tt.want || e.Message != tt.wantMsg {
					t.Errorf("error %+v, want %d %q", e, tt.want, tt.wantMsg)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.wantSession != "" && gotSession != tt.wantSession {
				t.Errorf("backend saw session %q, want %q", gotSession, tt.wantSession)
			}
			if tt.want == 400 && gotSession != "" {
				t.Errorf("a refused request reached the backend (session %q)", gotSession)
			}
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		resp, body := sv.do(t, "POST", "/api/v1/window?session=main", "", nil)
		if resp.StatusCode != 405 || resp.Header.Get("Allow") == "" {
			t.Fatalf("status %d Allow %q; body %s", resp.StatusCode, resp.Header.Get("Allow"), body)
		}
	})
}

func TestSearchMemoryRoute(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var mu sync.Mutex
	var got *client.MemoryQuery
	b := &fakeBackend{searchMemory: func(_ context.Context, q client.MemoryQuery) ([]client.MemoryHit, error) {
		mu.Lock()
		got = &q
		mu.Unlock()
		switch q.Text {
		case "nothing":
			return nil, nil
		case "boom":
			return nil, fmt.Errorf("index: %w", client.ErrUnavailable)
		case "bad session":
			return nil, fmt.Errorf("session %q: %w", q.Session, client.ErrNotFound)
		}
		return []client.MemoryHit{{ID: 3, Session: "qq", Time: at, Role: "user", Channel: "qq", Partner: "alice",
			Scope: "group:42", Layer: 2, Content: "咖啡 & 茶", Score: 1.25, Reason: "bm25"}}, nil
	}}
	sv := serveUnix(t, New(b, Options{}), "")
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return "/api/v1/memory/search?" + v.Encode()
	}
	tests := []struct {
		name, path string
		want       int
		wantBody   string              // decoded JSON equality; "" to skip
		wantMsg    string              // exact error message; "" to skip
		wantQuery  *client.MemoryQuery // what the backend saw; nil to skip
	}{
		{name: "defaults", path: q("q", "咖啡 & 茶"), want: 200,
			wantBody: `{"hits":[{"id":3,"session":"qq","time":"2026-03-04T05:06:07Z","role":"user","channel":"qq","partner":"alice",` +
				`"scope":"group:42","layer":2,"content":"咖啡 & 茶","score":1.25,"reason":"bm25"}]}`,
			wantQuery: &client.MemoryQuery{Text: "咖啡 & 茶", K: 10}},
		{name: "every parameter", path: q("q", "a+b=c?", "session", "qq:g/1", "k", "100", "scope", "group:42", "layer", "2"), want: 200,
			wantQuery: &client.MemoryQuery{Text: "a+b=c?", Session: "qq:g/1", K: 100, Scope: "group:42", Layer: 2}},
		{name: "k 1, private, layer 1", path: q("q", "x", "k", "1", "scope", "private", "layer", "1"), want: 200,
			wantQuery: &client.MemoryQuery{Text: "x", K: 1, Scope: "private", Layer: 1}},
		{name: "public, layer 0", path: q("q", "x", "scope", "public", "layer", "0"), want: 200,
			wantQuery: &client.MemoryQuery{Text: "x", K: 10, Scope: "public"}},
		{name: "empty session is the owner", path: q("q", "x", "session", ""), want: 200,
			wantQuery: &client.MemoryQuery{Text: "x", K: 10}},
		{name: "no hits is []", path: q("q", "nothing"), want: 200, wantBody: `{"hits":[]}`},
		{name: "q missing", path: "/api/v1/memory/search", want: 400, wantMsg: "q is required"},
		{name: "q blank", path: q("q", " \t"), want: 400, wantMsg: "q is required"},
		{name: "q twice", path: "/api/v1/memory/search?q=a&q=b", want: 400, wantMsg: `query parameter "q" given 2 times`},
		{name: "k zero", path: q("q", "x", "k", "0"), want: 400, wantMsg: `k must be an integer from 1 to 100, got "0"`},
		{name: "k too big", path: q("q", "x", "k", "101"), want: 400, wantMsg: `k must be an integer from 1 to 100, got "101"`},
		{name: "k negative", path: q("q", "x", "k", "-3"), want: 400, wantMsg: `k must be an integer from 1 to 100, got "-3"`},
		{name: "k not a number", path: q("q", "x", "k", "ten"), want: 400, wantMsg: `k must be an integer from 1 to 100, got "ten"`},
		{name: "k empty", path: q("q", "x", "k", ""), want: 400, wantMsg: `k must be an integer from 1 to 100, got ""`},
		{name: "scope unknown", path: q("q", "x", "scope", "friends"), want: 400,
			wantMsg: `scope must be private, public or group:<id>, got "friends"`},
		{name: "scope group without id", path: q("q", "x", "scope", "group:"), want: 400,
			wantMsg: `scope must be private, public or group:<id>, got "group:"`},
		{name: "scope empty", path: q("q", "x", "scope", ""), want: 400,
			wantMsg: `scope must be private, public or group:<id>, got ""`},
		{name: "scope wrong case", path: q("q", "x", "scope", "Public"), want: 400,
			wantMsg: `scope must be private, public or group:<id>, got "Public"`},
		{name: "layer 3", path: q("q", "x", "layer", "3"), want: 400, wantMsg: `layer must be 0 (both), 1 or 2, got "3"`},
		{name: "layer L2", path: q("q", "x", "layer", "L2"), want: 400, wantMsg: `layer must be 0 (both), 1 or 2, got "L2"`},
		{name: "unknown parameter", path: q("q", "x", "limit", "5"), want: 400, wantMsg: `unknown query parameter "limit"`},
		{name: "unknown parameters sorted", path: q("q", "x", "zeta", "1", "alpha", "2"), want: 400,
			wantMsg: `unknown query parameters "alpha", "zeta"`},
		{name: "backend unavailable", path: q("q", "boom"), want: 503, wantMsg: "index: unavailable"},
		{name: "backend not found", path: q("q", "bad session", "session", "gone"), want: 404, wantMsg: `session "gone": not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			resp, body := sv.do(t, "GET", tt.path, "", nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.wantBody != "" {
				assertJSONEqual(t, body, tt.wantBody)
			}
			if tt.wantMsg != "" {
				if e := apiError(t, body); e.Status != tt.want || e.Message != tt.wantMsg {
					t.Errorf("error %+v, want %d %q", e, tt.want, tt.wantMsg)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.want == 400 && got != nil {
				t.Errorf("a refused request reached the backend: %+v", *got)
			}
			if tt.wantQuery != nil && (got == nil || *got != *tt.wantQuery) {
				t.Errorf("backend saw %+v, want %+v", got, *tt.wantQuery)
			}
		})
	}
}

func TestCreateSessionScope(t *testing.T) {
	var mu sync.Mutex
	var got client.Session
	b := &fakeBackend{createSession: func(_ context.Context, s client.Session) (client.Session, error) {
		mu.Lock()
		got = s
		mu.Unlock()
		return s, nil
	}}
	sv := serveUnix(t, New(b, Options{}), "")
	tests := []struct {
		name, body string
		want       int
		wantMsg    string         // substring of the error message
		wantGot    client.Session // what the backend saw on success
	}{
		{"channel, partner and scope", `{"id":"qq-g1","channel":"qq","partner":"群 1","scope":"group:1"}`, 201, "",
			client.Session{ID: "qq-g1", Channel: "qq", Partner: "群 1", Scope: "group:1"}},
		{"public", `{"scope":"public"}`, 201, "", client.Session{Scope: "public"}},
		{"private", `{"scope":"private","channel":"waiter"}`, 201, "", client.Session{Scope: "private", Channel: "waiter"}},
		{"no scope", `{"title":"t"}`, 201, "", client.Session{Title: "t"}},
		{"bad scope", `{"scope":"everyone"}`, 400, `scope must be private, public or group:<id>, got "everyone"`, client.Session{}},
		{"group without id", `{"scope":"group:"}`, 400, "scope must be", client.Session{}},
		{"wrong type", `{"partner":7}`, 400, `field "partner"`, client.Session{}},
		{"still unknown fields", `{"scope":"public","visibility":"all"}`, 400, `unknown field "visibility"`, client.Session{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			got = client.Session{}
			mu.Unlock()
			resp, body := sv.do(t, "POST", "/api/v1/sessions", tt.body, map[string]string{"Content-Type": "application/json"})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.want != 201 {
				if e := apiError(t, body); !strings.Contains(e.Message, tt.wantMsg) {
					t.Errorf("error %q lacks %q", e.Message, tt.wantMsg)
				}
				if got != (client.Session{}) {
					t.Errorf("a refused request reached the backend: %+v", got)
				}
				return
			}
			if got != tt.wantGot {
				t.Errorf("backend saw %+v, want %+v", got, tt.wantGot)
			}
			assertJSONEqual(t, body, mustJSON(t, tt.wantGot))
		})
	}
}

// mustJSON encodes v or fails the test.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
