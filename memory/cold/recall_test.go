package cold

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
)

// fixture: one conversation between Ann and Bob, one turn a minute, on 2023-05-08, plus a
// private note in another session.
func fixture(t *testing.T, turns [][2]string) (*memtest.Mem, []memory.Event) {
	t.Helper()
	ctx := context.Background()
	m := memtest.NewMem(nil)
	for _, s := range []memory.Session{{ID: "chat", Scope: memory.Scope{Kind: memory.ScopeGroup, Group: "g"}}, {ID: "private"}} {
		if _, err := m.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	var evs []memory.Event
	for i, tn := range turns {
		evs = append(evs, memory.Event{Session: "chat", Role: memory.RoleUser, Partner: tn[0], Content: tn[1],
			Time: start.Add(time.Duration(i) * time.Minute), Scope: memory.Scope{Kind: memory.ScopeGroup, Group: "g"}})
	}
	stored, err := m.AppendEvents(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.AppendEvents(ctx, []memory.Event{{Session: "private", Role: memory.RoleUser, Content: "my secret hiking plan", Time: start}}); err != nil {
		t.Fatal(err)
	}
	return m, stored
}

func recaller(t *testing.T, m *memtest.Mem, partners ...string) *Recaller {
	t.Helper()
	r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Partners: func(context.Context, memory.Viewer) ([]string, error) { return partners, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func contents(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Event.Content)
	}
	return out
}

func TestRecall(t *testing.T) {
	turns := [][2]string{
		{"Ann", "I went hiking in the mountains"},        // 0
		{"Bob", "hiking is great, I love the mountains"}, // 1
		{"Ann", "what did you do yesterday"},             // 2: a topic question…
		{"Bob", "we baked bread all afternoon"},          // 3: …answered by the next turn
		{"Ann", "nice weather today"},                    // 4
	}
	group := memory.Viewer{Group: "g"}
	cases := []struct {
		name  string
		query string
		v     memory.Viewer
		first string
		why   string
		not   string
	}{
		{"partner named prefers what they said", "Bob hiking mountains", group, turns[1][1], "said by Bob", ""},
		{"the other partner", "Ann hiking mountains", group, turns[0][1], "said by Ann", ""},
		{"the answer turn inherits its topic's score", "what did you do yesterday", group, turns[2][1], "", ""},
		{"date asked", "what happened on 8 May 2023 weather", group, turns[4][1], "on the date asked", ""},
		{"a group viewer never sees the private note", "secret hiking plan", group, "", "", "my secret hiking plan"},
		{"the owner sees it", "secret hiking plan", memory.OwnerViewer, "my secret hiking plan", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := fixture(t, turns)
			hits, err := recaller(t, m, "Ann", "Bob").Recall(context.Background(), Query{Text: tc.query, Viewer: tc.v, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || (tc.first != "" && hits[0].Event.Content != tc.first) {
				t.Fatalf("first hit %q, want %q (all: %q)", contents(hits), tc.first, contents(hits))
			}
			if tc.why != "" && !strings.Contains(hits[0].Reason, tc.why) {
				t.Fatalf("reason %q lacks %q", hits[0].Reason, tc.why)
			}
			for _, h := range hits {
				if tc.not != "" && h.Event.Content == tc.not {
					t.Fatalf("%q surfaced to %+v", tc.not, tc.v)
				}
				if h.Score <= 0 || h.Reason == "" {
					t.Fatalf("hit without score or reason: %+v", h)
				}
			}
		})
	}
	t.Run("context lifts the turn after a match", func(t *testing.T) {
		m, _ := fixture(t, turns)
		hits, err := recaller(t, m).Recall(context.Background(), Query{Text: "yesterday", Viewer: group, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if got := contents(hits); len(got) < 2 || got[1] != turns[3][1] {
			t.Fatalf("the answer after the matching question is not second: %q", got)
		}
		if !strings.Contains(hits[1].Reason, "context") {
			t.Fatalf("reason %q", hits[1].Reason)
		}
	})
	t.Run("exclude, K and empty queries", func(t *testing.T) {
		m, stored := fixture(t, turns)
		r := recaller(t, m)
		hits, err := r.Recall(context.Background(), Query{Text: "hiking mountains", Viewer: group, K: 1, Exclude: map[int64]bool{stored[0].ID: true}})
		if err != nil || len(hits) != 1 || hits[0].Event.ID == stored[0].ID {
			t.Fatalf("%+v %v", hits, err)
		}
		if hits, err := r.Recall(context.Background(), Query{Text: "?! …", Viewer: group}); err != nil || len(hits) != 0 {
			t.Fatalf("no terms: %+v %v", hits, err)
		}
	})
}

func TestQueryDates(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{"What did Melanie paint on October 13, 2023?", "[{2023 October 13}]"},
		{"When was the 8 May, 2023 meeting", "[{2023 May 8}]"},
		{"plans for May 2023", "[{2023 May 0}]"},
		{"you may go", "[]"},
		{"I'll march on", "[]"},
		{"2023年5月8日我们去了哪里", "[{2023 May 8}]"},
		{"5月的计划", "[{0 May 0}]"},
		{"logs from 2024-02-29", "[{2024 February 29}]"},
	}
	for _, tc := range cases {
		got := fmt.Sprint(queryDates(tc.in))
		if got != tc.want {
			t.Errorf("queryDates(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	at := time.Date(2023, 10, 13, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    qdate
		want bool
	}{
		{qdate{2023, 10, 13}, true}, {qdate{2023, 10, 14}, true}, {qdate{2023, 10, 16}, false},
		{qdate{0, 10, 13}, true}, {qdate{2023, 10, 0}, true}, {qdate{2022, 10, 0}, false}, {qdate{0, 11, 0}, false},
	} {
		if got := onDate(at, []qdate{tc.d}); got != tc.want {
			t.Errorf("onDate(%v) = %v", tc.d, got)
		}
	}
}

func TestParamsWith(t *testing.T) {
	def := DefaultParams()
	cases := []struct {
		name string
		over map[string]float64
		want func(Params) bool
		err  string
	}{
		{"none", nil, func(p Params) bool { return p == def }, ""},
		{"float", map[string]float64{"date_boost": 0}, func(p Params) bool { return p.DateBoost == 0 && p.PrevWeight == def.PrevWeight }, ""},
		{"int rounds", map[string]float64{"max_candidates": 99.6}, func(p Params) bool { return p.MaxCands == 100 }, ""},
		{"duration in seconds", map[string]float64{"burst_gap_seconds": 90}, func(p Params) bool { return p.BurstGap == 90*time.Second }, ""},
		{"unknown", map[string]float64{"dat_boost": 1}, nil, `unknown recall parameter "dat_boost"`},
		{"negative", map[string]float64{"prev_weight": -1}, nil, "prev_weight must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := def.With(tc.over)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !tc.want(p) {
				t.Fatalf("With(%v) = %+v, %v", tc.over, p, err)
			}
		})
	}
	if n := len(ParamNames()); n != len(def.fields()) || n < 10 {
		t.Errorf("ParamNames has %d names", n)
	}
}
