package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestStarMapRoute: GET /api/v1/memory/starmap reads every page of the graph (the scope and
// history passed on), lays it out and answers the scene: one column entry per entity, the edges
// among them (an edge to an entity not listed is left out), people as hubs, the most frequent
// predicate the first relation class; bad queries are 400.
func TestStarMapRoute(t *testing.T) {
	g := &graphBackend{graph: func(q client.GraphQuery) (client.GraphPage, error) {
		switch q.After {
		case "":
			return client.GraphPage{Entities: []client.Entity{{ID: 1, Name: "owner", Kind: "person"}, {ID: 2, Name: "Porto", Kind: "place", Pinned: true}},
				Triples: []client.Triple{{ID: 7, Subject: 1, Predicate: "lives in", Object: 2}}, Next: "2", Total: 3}, nil
		case "2":
			return client.GraphPage{Entities: []client.Entity{{ID: 5, Name: "Beatriz", Kind: "person", Mentions: 4}},
				Triples: []client.Triple{{ID: 8, Subject: 5, Predicate: "sister of", Object: 1}, {ID: 9, Subject: 5, Predicate: "sister of", Object: 1},
					{ID: 10, Subject: 5, Predicate: "knows", Object: 99}}, Total: 3}, nil
		}
		return client.GraphPage{}, fmt.Errorf("cursor %q", q.After)
	}}
	sv := serveUnix(t, New(g, Options{}), "")
	for _, tc := range []struct {
		path      string
		want      int
		wantCalls []string
	}{
		{"/api/v1/memory/starmap?scope=group:7&history=1", 200, []string{
			"Graph {Scope:group:7 History:true After: Limit:10000 Events:0 Scene:}",
			"Graph {Scope:group:7 History:true After:2 Limit:10000 Events:0 Scene:}"}},
		{"/api/v1/memory/starmap?scope=everyone", 400, nil},
		{"/api/v1/memory/starmap?history=maybe", 400, nil},
		{"/api/v1/memory/starmap?limit=5", 400, nil},
	} {
		resp, err := sv.client.Get(sv.base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var sm StarMap
		err = json.NewDecoder(resp.Body).Decode(&sm)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.path, resp.StatusCode, tc.want)
		}
		if calls := g.take(); !slices.Equal(calls, tc.wantCalls) {
			t.Errorf("%s: backend calls %q, want %q", tc.path, calls, tc.wantCalls)
		}
		if tc.want != http.StatusOK {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sm.ID, []int64{1, 2, 5}) || !slices.Equal(sm.Label, []string{"owner", "Porto", "Beatriz"}) || sm.Total != 3 {
			t.Errorf("nodes %v %q (total %d)", sm.ID, sm.Label, sm.Total)
		}
		if !slices.Equal(sm.Flags, []int{2, 1, 2}) || !slices.Equal(sm.Mentions, []int{0, 0, 4}) {
			t.Errorf("flags %v mentions %v, want hubs, pinned Porto, 4 mentions", sm.Flags, sm.Mentions)
		}
		// sister of (twice) is class 1, lives in class 2; the edge to entity 99 is left out.
		if !slices.Equal(sm.Relations, []string{"sister of", "knows", "lives in"}) || !slices.Equal(sm.Edges, []int32{0, 1, 3, 2, 0, 1, 2, 0, 1}) {
			t.Errorf("relations %q edges %v", sm.Relations, sm.Edges)
		}
		// The owner is the centre of the Worlds layout.
		if sm.X[0] != 0 || sm.Y[0] != 0 || sm.Radius <= 0 {
			t.Errorf("owner at (%v, %v), radius %v", sm.X[0], sm.Y[0], sm.Radius)
		}
	}
}
