package gui

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/starmap"
)

// Building the sky from the graph: nodes, relations, the timeline and world layouts, search.

// buildSky turns the graph into stars and links and lays them out as people and their worlds
// (starmap.Worlds: the owner at the centre, people as hubs), keeping prev's positions. The
// owner's names are one star; the most frequent predicates get a colour each.
func buildSky(ents []client.Entity, trs []client.Triple, events []client.GraphEvt, prev *Sky) *Sky {
	s := &Sky{Triples: trs, Owner: -1, byEntity: make(map[int64]int, len(ents)), byEvent: make(map[int64]int, len(events)),
		class: map[string]int{}}
	owner, profile := ownerEntities(ents, trs, events)
	// The owner's star stands for all their names: the entity called "owner" if there is one.
	var ownerEnt *client.Entity
	for i := range ents {
		e := &ents[i]
		if owner[e.ID] && (ownerEnt == nil || nameKey(e.Name) == "owner" && nameKey(ownerEnt.Name) != "owner") {
			ownerEnt = e
		}
	}
	s.Graph.Nodes = make([]starmap.Node, 0, len(ents)+len(events))
	for _, e := range ents {
		if owner[e.ID] && e.ID != ownerEnt.ID {
			continue
		}
		i := len(s.Entities)
		s.Entities = append(s.Entities, e)
		s.byEntity[e.ID] = i
		nd := starmap.Node{ID: e.ID, Label: e.Name, Kind: e.Kind, Mentions: e.Mentions, Recalled: e.LastRecalled, Pinned: e.Pinned,
			Hub: e.Kind == "person"}
		if owner[e.ID] {
			s.Owner = i
			nd.Label, nd.Kind, nd.Hub = cmpOr(profile, T("me")), "person", true
		}
		s.Graph.Nodes = append(s.Graph.Nodes, nd)
	}
	if ownerEnt != nil {
		on := &s.Graph.Nodes[s.Owner]
		on.Mentions = 0
		for _, e := range ents {
			if owner[e.ID] {
				s.byEntity[e.ID] = s.Owner
				on.Mentions += e.Mentions
				on.Pinned = on.Pinned || e.Pinned
				if e.LastRecalled.After(on.Recalled) {
					on.Recalled = e.LastRecalled
				}
			}
		}
	}
	// Relation classes: the most frequent predicates, one colour each.
	count := map[string]int{}
	for _, t := range trs {
		count[t.Predicate]++
	}
	for p, c := range count {
		s.Relations = append(s.Relations, Relation{Predicate: p, Count: c})
	}
	slices.SortFunc(s.Relations, func(a, b Relation) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Predicate, b.Predicate))
	})
	s.Relations = s.Relations[:min(len(s.Relations), starmap.RelationClasses-1)]
	for k := range s.Relations {
		s.Relations[k].Class = k + 1
		s.class[s.Relations[k].Predicate] = k + 1
	}
	byTriple := make(map[int64]client.Triple, len(trs))
	for _, t := range trs {
		byTriple[t.ID] = t
		a, okA := s.byEntity[t.Subject]
		b, okB := s.byEntity[t.Object]
		if okA && okB && a != b {
			s.Graph.Edges = append(s.Graph.Edges, starmap.Edge{From: a, To: b, Weight: 1, Class: s.class[t.Predicate], Label: t.Predicate})
		}
	}
	s.Events = events
	for j, e := range events {
		i := len(s.Entities) + j
		s.byEvent[e.ID] = i
		// Events get negative ids in the layout so they never collide with entities'.
		s.Graph.Nodes = append(s.Graph.Nodes, starmap.Node{ID: -e.ID, Label: snippet(e.Content, eventLabelRunes), Kind: eventKind})
		linked := map[int]bool{}
		for _, tid := range e.Triples {
			t, ok := byTriple[tid]
			if !ok {
				continue
			}
			for _, end := range []int64{t.Subject, t.Object} {
				if k, ok := s.byEntity[end]; ok && !linked[k] {
					linked[k] = true
					s.Graph.Edges = append(s.Graph.Edges, starmap.Edge{From: i, To: k, Weight: 0.5})
				}
			}
		}
	}
	var previous map[int64]starmap.Point
	if prev != nil && len(prev.worlds.Pos) == len(prev.Graph.Nodes) && len(prev.Graph.Nodes) > 0 {
		previous = make(map[int64]starmap.Point, len(prev.Graph.Nodes))
		for i, n := range prev.Graph.Nodes {
			previous[n.ID] = prev.worlds.Pos[i]
		}
	}
	s.worlds = starmap.Worlds(s.Graph, starmap.WorldOptions{Centre: s.Owner, Previous: previous})
	s.Layout = s.worlds
	s.Index = starmap.NewIndex(s.Layout)
	return s
}

// layOutTimeline lays the sky out along time (starmap.Timeline): an entity at the earliest
// valid-from of its facts, an event at its time, in one lane per kind group; it marks the
// entities whose facts have all ended (superseded or past their valid-to) to be faded.
func (s *Sky) layOutTimeline() {
	at := make([]time.Time, len(s.Graph.Nodes))
	lanes := make([]int, len(s.Graph.Nodes))
	live := map[int]bool{}
	s.ended = map[int]bool{}
	for _, t := range s.Triples {
		from := t.ValidFrom
		if from.IsZero() {
			from = t.Created
		}
		current := t.SupersededBy == 0 && (t.ValidTo.IsZero() || t.ValidTo.After(time.Now()))
		for _, id := range []int64{t.Subject, t.Object} {
			i, ok := s.byEntity[id]
			if !ok {
				continue
			}
			if !from.IsZero() && (at[i].IsZero() || from.Before(at[i])) {
				at[i] = from
			}
			if current {
				live[i] = true
			} else if !live[i] {
				s.ended[i] = true
			}
		}
	}
	for i := range live {
		delete(s.ended, i)
	}
	for i, n := range s.Graph.Nodes {
		lanes[i] = slices.Index(Groups, kindGroup(n.Kind))
		if e, ok := s.Entity(i); ok && at[i].IsZero() {
			at[i] = e.Created
		} else if ev, ok := s.Event(i); ok {
			at[i] = ev.Time
		}
	}
	s.Timeline = true
	s.From, s.To = time.Time{}, time.Time{}
	for _, t := range at {
		if !t.IsZero() && (s.From.IsZero() || t.Before(s.From)) {
			s.From = t
		}
		if t.After(s.To) {
			s.To = t
		}
	}
	s.Layout = starmap.Timeline(s.Graph, at, lanes)
	s.Index = starmap.NewIndex(s.Layout)
}

// layOutWorlds goes back to the worlds layout.
func (s *Sky) layOutWorlds() {
	s.Timeline = false
	s.ended = nil
	s.Layout = s.worlds
	s.Index = starmap.NewIndex(s.Layout)
}

// snippet is the first n runes of s on one line.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// skyScopes lists the scopes present in a sky, private and public first.
func skyScopes(s *Sky) []string {
	seen := map[string]bool{}
	for _, e := range s.Entities {
		seen[e.Scope] = true
	}
	for _, e := range s.Events {
		seen[e.Scope] = true
	}
	out := make([]string, 0, len(seen))
	for sc := range seen {
		if sc != "" {
			out = append(out, sc)
		}
	}
	rank := func(s string) int {
		switch s {
		case client.ScopePrivate:
			return 0
		case client.ScopePublic:
			return 1
		}
		return 2
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b)) })
	return out
}

// searchSky returns the nodes whose label (or entity text) holds q, case-insensitively: exact
// names first, then prefixes, then the rest, each by mentions.
func searchSky(s *Sky, q string) []int {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == "" {
		return nil
	}
	type match struct{ i, rank, mentions int }
	var ms []match
	for i, n := range s.Graph.Nodes {
		label := strings.ToLower(n.Label)
		text := ""
		if e, ok := s.Entity(i); ok {
			text = strings.ToLower(e.Text)
		} else if ev, ok := s.Event(i); ok {
			text = strings.ToLower(ev.Content)
		}
		rank := -1
		switch {
		case label == q:
			rank = 0
		case strings.HasPrefix(label, q):
			rank = 1
		case strings.Contains(label, q):
			rank = 2
		case strings.Contains(text, q):
			rank = 3
		}
		if rank >= 0 {
			ms = append(ms, match{i, rank, n.Mentions})
		}
	}
	slices.SortStableFunc(ms, func(a, b match) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(b.mentions, a.mentions), cmp.Compare(a.i, b.i))
	})
	out := make([]int, len(ms))
	for k, m := range ms {
		out[k] = m.i
	}
	return out
}
