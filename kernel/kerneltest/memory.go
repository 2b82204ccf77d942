package kerneltest

import (
	"errors"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// The memory cases of the conformance suite: the context window and memory search.

func testWindow(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	for _, tc := range []struct {
		name, session string
		want          error
	}{
		{"unknown session", "nope", client.ErrNotFound},
		{"empty session", "", client.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w, err := s.Window(ctx, tc.session); !errors.Is(err, tc.want) {
				t.Fatalf("Window(%q) = %+v, %v; want %v", tc.session, w, err, tc.want)
			}
		})
	}
	w, err := s.Window(ctx, "main")
	if err != nil || w.Session != "main" || w.Budget <= 0 || len(w.Items) != 0 {
		t.Fatalf("Window of the empty main session = %+v, %v", w, err)
	}
	addFake(t, s)
	// The window a turn's prompt is built from is computed before its own input is stored: after
	// two turns it holds the first turn, scored against the second input.
	for _, in := range []string{"remember the heron by the canal", "what bird did I see"} {
		if _, err := s.Chat(ctx, client.ChatRequest{Input: in}, nil); err != nil {
			t.Fatal(err)
		}
	}
	w, err = s.Window(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if w.Input != "what bird did I see" || len(w.Items) != 2 || w.Used <= 0 || w.Used > w.Budget || w.Pinned != 2 {
		t.Fatalf("Window after two turns = %+v", w)
	}
	want := []struct{ role, content string }{{"user", "remember the heron by the canal"}, {"assistant", "PONG remember the heron by the canal"}}
	for i, it := range w.Items {
		if it.Role != want[i].role || it.Content != want[i].content || it.ID == 0 || it.Tokens <= 0 || it.Time.IsZero() ||
			it.Source != "pinned" || it.Reason == "" {
			t.Errorf("item %d = %+v, want a pinned %s %q with id, time, tokens and reason", i, it, want[i].role, want[i].content)
		}
	}
}

func testSearchMemory(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	addFake(t, s)
	if _, err := s.CreateSession(ctx, client.Session{ID: "qq-g1", Channel: "qq", Scope: "group:g1"}); err != nil {
		t.Fatal(err)
	}
	const private = "the spare key hides under the blue flowerpot"
	const group = "our group picnic moves to the flowerpot garden"
	for _, c := range []client.ChatRequest{{Input: private}, {Session: "qq-g1", Input: group}} {
		if _, err := s.Chat(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	bad := []struct {
		name string
		q    client.MemoryQuery
		want error
	}{
		{"empty query", client.MemoryQuery{Text: "  "}, client.ErrInvalid},
		{"k above 100", client.MemoryQuery{Text: "flowerpot", K: 101}, client.ErrInvalid},
		{"negative k", client.MemoryQuery{Text: "flowerpot", K: -1}, client.ErrInvalid},
		{"bad scope", client.MemoryQuery{Text: "flowerpot", Scope: "friends"}, client.ErrInvalid},
		{"group scope without id", client.MemoryQuery{Text: "flowerpot", Scope: "group:"}, client.ErrInvalid},
		{"bad layer", client.MemoryQuery{Text: "flowerpot", Layer: 3}, client.ErrInvalid},
		{"unknown session", client.MemoryQuery{Text: "flowerpot", Session: "nope"}, client.ErrNotFound},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if hits, err := s.SearchMemory(ctx, tc.q); !errors.Is(err, tc.want) {
				t.Fatalf("SearchMemory(%+v) = %+v, %v; want %v", tc.q, hits, err, tc.want)
			}
		})
	}
	contents := func(hits []client.MemoryHit) map[string]client.MemoryHit {
		m := map[string]client.MemoryHit{}
		for _, h := range hits {
			m[h.Content] = h
		}
		return m
	}
	ok := []struct {
		name    string
		q       client.MemoryQuery
		want    []string // contents that must be found
		notWant []string // contents that must not be
	}{
		{"owner sees every scope", client.MemoryQuery{Text: "flowerpot"}, []string{private, group}, nil},
		{"k limits", client.MemoryQuery{Text: "flowerpot", K: 1}, nil, nil},
		{"scope filter", client.MemoryQuery{Text: "flowerpot", Scope: "group:g1"}, []string{group}, []string{private}},
		{"a group session sees its group only", client.MemoryQuery{Text: "flowerpot", Session: "qq-g1"}, []string{group}, []string{private, "PONG " + private}},
		{"layer 1", client.MemoryQuery{Text: "flowerpot", Layer: 1}, []string{private, group}, nil},
		{"layer 2 is empty", client.MemoryQuery{Text: "flowerpot", Layer: 2}, nil, []string{private, group}},
		{"no match is empty", client.MemoryQuery{Text: "xylophone"}, nil, []string{private, group}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := s.SearchMemory(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			got := contents(hits)
			for _, w := range tc.want {
				if _, ok := got[w]; !ok {
					t.Errorf("%q not found: %+v", w, hits)
				}
			}
			for _, w := range tc.notWant {
				if _, ok := got[w]; ok {
					t.Errorf("%q found: %+v", w, hits)
				}
			}
			if tc.q.K == 1 && len(hits) != 1 {
				t.Errorf("k=1 gave %d hits", len(hits))
			}
			for i, h := range hits {
				if h.ID == 0 || h.Session == "" || h.Time.IsZero() || h.Score <= 0 || h.Reason == "" || h.Scope == "" || h.Layer < 1 || h.Layer > 2 {
					t.Errorf("hit %d incomplete: %+v", i, h)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hits not best first: %+v", hits)
				}
				if tc.q.Scope != "" && h.Scope != tc.q.Scope || tc.q.Layer != 0 && h.Layer != tc.q.Layer {
					t.Errorf("hit %d outside the filter %+v: %+v", i, tc.q, h)
				}
			}
		})
	}
	if g := contents(mustSearch(t, s, client.MemoryQuery{Text: "flowerpot"}))[group]; g.Session != "qq-g1" || g.Channel != "qq" || g.Scope != "group:g1" || g.Role != "user" {
		t.Fatalf("the group event carries its session's channel and scope: %+v", g)
	}
}

func mustSearch(t *testing.T, s client.Service, q client.MemoryQuery) []client.MemoryHit {
	t.Helper()
	hits, err := s.SearchMemory(ctxT(t), q)
	if err != nil {
		t.Fatalf("SearchMemory(%+v): %v", q, err)
	}
	return hits
}
