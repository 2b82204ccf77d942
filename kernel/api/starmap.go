package api

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/starmap"
)

// StarMap is the answer of GET /api/v1/memory/starmap: the memory graph laid out by the
// starmap package (its Worlds layout, as the desktop draws it) in the compact form the web UI
// draws in a canvas, and the predicates of the coloured relation classes.
type StarMap struct {
	starmap.Scene
	// Relations names the predicate of each relation class from 1 (index 0 is class 1).
	Relations []string `json:"relations"`
	// Total counts the entities drawn.
	Total int `json:"total"`
}

// handleStarMap answers GET /api/v1/memory/starmap?scope=…&history=… with a [StarMap] of every
// entity and the triples among them (the graph route's pages, all of them).
func (s *Server) handleStarMap(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "scope", "history"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if err := checkScopeField("scope", q.Get("scope")); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	history, rerr := parseBool(q, "history")
	if rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	gq := client.GraphQuery{Scope: q.Get("scope"), History: history, Limit: client.MaxGraphLimit}
	var ents []client.Entity
	var trs []client.Triple
	for {
		page, err := s.b.Graph(r.Context(), gq)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		ents, trs = append(ents, page.Entities...), append(trs, page.Triples...)
		if page.Next == "" || len(page.Entities) == 0 {
			break
		}
		gq.After = page.Next
	}
	g, relations, centre := skyGraph(ents, trs)
	l := starmap.Worlds(g, starmap.WorldOptions{Centre: centre})
	writeJSON(w, http.StatusOK, StarMap{Scene: starmap.NewScene(g, l, time.Now()), Relations: relations, Total: len(ents)})
}

// skyGraph turns entities and triples into the star map's graph as the desktop does: people are
// hubs, the owner (an entity named owner, me or user) is the centre, the most frequent
// predicates get a relation class (colour) each.
func skyGraph(ents []client.Entity, trs []client.Triple) (g starmap.Graph, relations []string, centre int) {
	centre = -1
	byID := make(map[int64]int, len(ents))
	g.Nodes = make([]starmap.Node, len(ents))
	for i, e := range ents {
		byID[e.ID] = i
		g.Nodes[i] = starmap.Node{ID: e.ID, Label: e.Name, Kind: e.Kind, Mentions: e.Mentions, Recalled: e.LastRecalled,
			Pinned: e.Pinned, Hub: e.Kind == "person"}
		switch strings.ToLower(strings.TrimSpace(e.Name)) {
		case "owner", "me", "user":
			if centre < 0 {
				centre = i
			}
		}
	}
	count := map[string]int{}
	for _, t := range trs {
		count[t.Predicate]++
	}
	for p := range count {
		relations = append(relations, p)
	}
	slices.SortFunc(relations, func(a, b string) int { return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b)) })
	relations = relations[:min(len(relations), starmap.RelationClasses-1)]
	class := make(map[string]int, len(relations))
	for k, p := range relations {
		class[p] = k + 1
	}
	if relations == nil {
		relations = []string{}
	}
	g.Edges = make([]starmap.Edge, 0, len(trs))
	for _, t := range trs {
		a, okA := byID[t.Subject]
		b, okB := byID[t.Object]
		if okA && okB && a != b {
			g.Edges = append(g.Edges, starmap.Edge{From: a, To: b, Weight: 1, Class: class[t.Predicate], Label: t.Predicate})
		}
	}
	return g, relations, centre
}
