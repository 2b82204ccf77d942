package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// TestSearchTermsTimeWindow: with no terms and a time window SearchTerms lists the window's
// events, oldest first, visible ones only, bounded by Limit; with terms the window filters.
func TestSearchTermsTimeWindow(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for _, id := range []string{"a", "g"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	at := func(d, h int) time.Time { return time.Date(2023, 5, d, h, 0, 0, 0, time.UTC) }
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "g1"}
	if _, err := s.AppendEvents(ctx, []memory.Event{
		{Session: "a", Role: memory.RoleUser, Content: "dentist in the morning", Time: at(5, 9)},
		{Session: "a", Role: memory.RoleUser, Content: "lunch with Anna", Time: at(5, 13)},
		{Session: "g", Role: memory.RoleUser, Content: "group lunch plans", Time: at(5, 12), Scope: group},
		{Session: "a", Role: memory.RoleUser, Content: "lunch again", Time: at(6, 13)},
		{Session: "a", Role: memory.RoleUser, Content: "late night", Time: at(4, 23)},
	}); err != nil {
		t.Fatal(err)
	}
	day5 := memory.TextQuery{From: at(5, 0), To: at(6, 0)}
	cases := []struct {
		name string
		q    memory.TextQuery
		want []string
	}{
		{"the day, owner", withViewer(day5, memory.OwnerViewer), []string{"dentist in the morning", "group lunch plans", "lunch with Anna"}},
		{"the day, the group", withViewer(day5, memory.Viewer{Group: "g1"}), []string{"group lunch plans"}},
		{"the day, one session", func() memory.TextQuery { q := withViewer(day5, memory.OwnerViewer); q.Session = "a"; return q }(), []string{"dentist in the morning", "lunch with Anna"}},
		{"the day, limit 1", func() memory.TextQuery { q := withViewer(day5, memory.OwnerViewer); q.Limit = 1; return q }(), []string{"dentist in the morning"}},
		{"terms within the day", func() memory.TextQuery {
			q := withViewer(day5, memory.OwnerViewer)
			q.Terms = []string{"lunch"}
			return q
		}(), []string{"group lunch plans", "lunch with Anna"}},
		{"no terms, no window", memory.TextQuery{Viewer: memory.OwnerViewer}, nil},
	}
	for _, tc := range cases {
		hits, err := s.SearchTerms(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Event.Content)
		}
		if tc.name == "terms within the day" { // ranked by score: compare as sets
			if len(got) != 2 || !(contains(got, "group lunch plans") && contains(got, "lunch with Anna")) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
		for _, h := range hits {
			if h.Indexed == "" {
				t.Errorf("%s: %q without its index terms", tc.name, h.Event.Content)
			}
		}
	}
}

func withViewer(q memory.TextQuery, v memory.Viewer) memory.TextQuery { q.Viewer = v; return q }

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
