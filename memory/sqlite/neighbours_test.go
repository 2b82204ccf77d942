package sqlite_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// TestNeighbours checks Neighbours against a reference computed from the appended events: three
// sessions written interleaved (so their ids interleave), events of mixed scopes, anchors close
// together (their ranges overlap), at a session's ends, and in different sessions.
func TestNeighbours(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	sessions := []string{"a", "b", "c"}
	for _, id := range sessions {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	bySession := map[string][]memory.Event{}
	var all []memory.Event
	for i := 0; i < 90; i++ {
		sess := sessions[rng.IntN(len(sessions))]
		scope := memory.Scope{}
		switch rng.IntN(4) {
		case 0:
			scope = memory.Scope{Kind: memory.ScopeGroup, Group: "g"}
		case 1:
			scope = memory.Scope{Kind: memory.ScopePublic}
		}
		got, err := s.AppendEvents(ctx, []memory.Event{{Session: sess, Role: memory.RoleUser, Content: "event " + strconv.Itoa(i), Scope: scope, Tokens: 2}})
		if err != nil {
			t.Fatal(err)
		}
		bySession[sess] = append(bySession[sess], got[0])
		all = append(all, got[0])
	}
	ref := func(anchors []int64, radius int, v memory.Viewer) []int64 {
		isAnchor := map[int64]bool{}
		for _, id := range anchors {
			isAnchor[id] = true
		}
		want := map[int64]bool{}
		for _, id := range anchors {
			for _, evs := range bySession {
				for i, e := range evs {
					if e.ID != id {
						continue
					}
					for j := max(0, i-radius); j <= min(len(evs)-1, i+radius); j++ {
						if !isAnchor[evs[j].ID] && v.CanSee(evs[j].Scope) {
							want[evs[j].ID] = true
						}
					}
				}
			}
		}
		out := make([]int64, 0, len(want))
		for id := range want {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	a, b := bySession["a"], bySession["b"]
	cases := []struct {
		name    string
		anchors []int64
		radius  int
		viewer  memory.Viewer
	}{
		{"one anchor", []int64{a[10].ID}, 2, memory.OwnerViewer},
		{"overlapping anchors", []int64{a[10].ID, a[11].ID, a[13].ID}, 3, memory.OwnerViewer},
		{"touching ranges", []int64{a[4].ID, a[9].ID}, 2, memory.OwnerViewer},
		{"first and last of a session", []int64{a[0].ID, a[len(a)-1].ID}, 4, memory.OwnerViewer},
		{"ranges that start together", []int64{a[2].ID, a[0].ID, a[1].ID}, 5, memory.OwnerViewer},
		{"ranges that end together", []int64{a[len(a)-1].ID, a[len(a)-3].ID}, 5, memory.OwnerViewer},
		{"two sessions", []int64{a[5].ID, b[5].ID, b[6].ID}, 3, memory.OwnerViewer},
		{"radius over the session", []int64{b[3].ID}, 1000, memory.OwnerViewer},
		{"group viewer", []int64{a[10].ID, b[2].ID}, 5, memory.Viewer{Group: "g"}},
		{"public viewer", []int64{a[10].ID, b[2].ID}, 5, memory.Viewer{}},
		{"unknown id", []int64{1 << 40}, 3, memory.OwnerViewer},
	}
	for _, tc := range cases {
		got, err := s.Neighbours(ctx, tc.anchors, tc.radius, tc.viewer)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ids := make([]int64, 0, len(got))
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if want := ref(tc.anchors, tc.radius, tc.viewer); !slices.Equal(ids, want) {
			t.Errorf("%s: Neighbours = %v, want %v", tc.name, ids, want)
		}
	}
	// Random anchor sets against the reference.
	for i := 0; i < 50; i++ {
		var anchors []int64
		for n := 1 + rng.IntN(8); n > 0; n-- {
			anchors = append(anchors, all[rng.IntN(len(all))].ID)
		}
		radius := 1 + rng.IntN(6)
		got, err := s.Neighbours(ctx, anchors, radius, memory.OwnerViewer)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, 0, len(got))
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if want := ref(anchors, radius, memory.OwnerViewer); !slices.Equal(ids, want) {
			t.Errorf("random %d (anchors %v, radius %d): Neighbours = %v, want %v", i, anchors, radius, ids, want)
		}
	}
}
