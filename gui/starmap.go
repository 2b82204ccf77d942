package gui

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/starmap"
)

// Star map settings.
const (
	// skyEvents is how many recent L2 events (sources of triples) the sky shows beside the
	// entities.
	skyEvents = 300
	// eventKind is the star kind of an L2 event.
	eventKind = "memory"
	// eventLabelRunes is how much of an event's text labels its star.
	eventLabelRunes = 32
)

// Periods of the time filter.
const (
	PeriodAll   = ""
	PeriodDay   = "day"
	PeriodWeek  = "week"
	PeriodMonth = "month"
	PeriodYear  = "year"
)

var periodLength = map[string]time.Duration{
	PeriodDay: 24 * time.Hour, PeriodWeek: 7 * 24 * time.Hour, PeriodMonth: 30 * 24 * time.Hour, PeriodYear: 365 * 24 * time.Hour,
}

// Sky is one immutable snapshot of the star map: the memory graph as stars and links, laid out,
// indexed for hit-testing, with the current search matches and filter. Node i is the entity
// Entities[i] for i < len(Entities), else the event Events[i-len(Entities)].
type Sky struct {
	Graph    starmap.Graph
	Layout   starmap.Layout
	Index    *starmap.Index
	Entities []client.Entity
	Events   []client.GraphEvt
	Triples  []client.Triple
	// Highlight marks the search matches; Dim the nodes the filter leaves out.
	Highlight, Dim map[int]bool
	// Matches are the search matches, best first.
	Matches []int
	// Owner is the node of the owner (every name they go by, merged into one star), -1 for none.
	Owner int
	// Relations are the relation types drawn in colour, most frequent first (the legend); the
	// other predicates are drawn in the default colour.
	Relations []Relation

	// Timeline says the sky is laid out along time (facts by valid-from) rather than as worlds;
	// From and To are the oldest and newest times on it.
	Timeline bool
	From, To time.Time

	byEntity map[int64]int
	class    map[string]int // predicate → edge class
	worlds   starmap.Layout // the worlds layout (kept for reloads while the timeline shows)
	ended    map[int]bool   // entities all of whose facts have ended or been superseded
	byEvent  map[int64]int
}

// Relation is one relation type of the legend: a predicate, its edge class and how many facts
// have it.
type Relation struct {
	Predicate string
	Class     int
	Count     int
}

// RelationClass returns the edge class a predicate is drawn in (0: the default colour).
func (s *Sky) RelationClass(predicate string) int { return s.class[predicate] }

// Kind groups of the kind filter.
const (
	GroupPeople = "people"
	GroupPlaces = "places"
	GroupThings = "things"
	GroupEvents = "events"
	GroupTime   = "time"
)

// Groups are the kind filter's groups, in toolbar order.
var Groups = []string{GroupPeople, GroupPlaces, GroupThings, GroupEvents, GroupTime}

// kindGroup is the group of the kind filter a kind belongs to.
func kindGroup(kind string) string {
	switch kind {
	case "person":
		return GroupPeople
	case "place":
		return GroupPlaces
	case "event", eventKind:
		return GroupEvents
	case "time":
		return GroupTime
	}
	return GroupThings
}

// ownerNames are the names the owner goes by in memory (by memory.NameKey): the subject of
// their first-person statements and the words for it.
var ownerNames = map[string]bool{"owner": true, "me": true, "i": true, "myself": true, "user": true, "我": true, "我自己": true}

// namePredicates state a name: "owner — name — Sasha" makes Sasha the owner's profile name.
var namePredicates = map[string]bool{"name": true, "is called": true, "is named": true, "named": true, "called": true,
	"名字": true, "叫": true, "叫做": true}

// selfNaming finds the owner naming themselves in their own words: "my name is Sasha",
// "call me Sasha", "我叫小明", "我的名字是小明".
var selfNaming = regexp.MustCompile(`(?i:\bmy\s+name\s+is|\bcall\s+me|\bi\s+am\s+called)\s+(\p{Lu}[\p{L}'-]+)|(?:我叫|我的名字是|我的名字叫)(\p{Han}{1,4})`)

// nameKey is the key names are compared by (as memory.NameKey).
func nameKey(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// ownerEntities returns the entities that are the owner — named "owner", "me" and the like, the
// names those are said to have ("owner — name — Sasha"), and the person the owner names
// themselves as in their own messages among events ("my name is Sasha") — with the profile name
// ("" when memory knows none).
func ownerEntities(ents []client.Entity, trs []client.Triple, events []client.GraphEvt) (ids map[int64]bool, profile string) {
	ids = map[int64]bool{}
	for _, e := range ents {
		if ownerNames[nameKey(e.Name)] {
			ids[e.ID] = true
		}
	}
	if len(ids) == 0 {
		return ids, ""
	}
	kind := map[int64]string{}
	for _, e := range ents {
		kind[e.ID] = e.Kind
	}
	for _, t := range trs {
		if ids[t.Subject] && namePredicates[nameKey(t.Predicate)] && t.SupersededBy == 0 && (kind[t.Object] == "person" || kind[t.Object] == "") {
			ids[t.Object] = true
			if profile == "" {
				profile = t.ObjectName
			}
		}
	}
	// A name the owner gives themselves is theirs whatever kind the extractor guessed for it.
	byName := map[string]int64{}
	for _, e := range ents {
		if _, ok := byName[nameKey(e.Name)]; !ok {
			byName[nameKey(e.Name)] = e.ID
		}
	}
	for _, ev := range events {
		if ev.Role != "user" || ev.Partner != "" {
			continue
		}
		for _, m := range selfNaming.FindAllStringSubmatch(ev.Content, -1) {
			name := cmpOr(m[1], m[2])
			if id, ok := byName[nameKey(name)]; ok && !ids[id] {
				ids[id] = true
			}
			// The name is the owner's own word for themselves, whether or not the extractor
			// made an entity of it.
			if profile == "" {
				profile = name
			}
		}
	}
	return ids, profile
}

// EntityNode returns the node of an entity.
func (s *Sky) EntityNode(id int64) (int, bool) {
	i, ok := s.byEntity[id]
	return i, ok
}

// EventNode returns the node of an L2 event.
func (s *Sky) EventNode(id int64) (int, bool) {
	i, ok := s.byEvent[id]
	return i, ok
}

// Entity returns node i's entity, if it is one.
func (s *Sky) Entity(i int) (client.Entity, bool) {
	if i < 0 || i >= len(s.Entities) {
		return client.Entity{}, false
	}
	return s.Entities[i], true
}

// Event returns node i's event, if it is one.
func (s *Sky) Event(i int) (client.GraphEvt, bool) {
	j := i - len(s.Entities)
	if i < 0 || j < 0 || j >= len(s.Events) {
		return client.GraphEvt{}, false
	}
	return s.Events[j], true
}

// Selection is what the side panel shows: an entity with its triples and blocks, or an event.
type Selection struct {
	Node   int // -1: nothing selected
	Entity *client.EntityDetail
	Event  *client.GraphEvt
}

// StarMapVM is the star map's state: the sky (read from the kernel's graph, laid out off the UI
// goroutine and cached, so a reload keeps every known star in place), the search and filters,
// the selection and the actions on it. Its methods block on the kernel; the view runs them off
// the UI goroutine. It is safe for concurrent use.
type StarMapVM struct {
	vmTasks
	svc   client.Service
	now   func() time.Time
	trace func(kind string, fields map[string]any)

	// Status is the outcome of the last load or action; Failed says whether it is an error.
	Status binding.String
	Failed binding.Bool
	Busy   binding.Bool
	// Stars and Links count the sky's nodes and edges.
	Stars, Links binding.Int
	// Query is the search text; Scope, Scene and Period the filter ("" for all).
	Query, Scope, Scene, Period binding.String
	// Show holds the kind filter: one switch per group of Groups (all on at first).
	Show map[string]binding.Bool
	// Timeline lays the sky out along time: facts by valid-from, superseded ones faded.
	Timeline binding.Bool
	// Scopes and Scenes are the filter's choices (scopes present in the sky; the kernel's scenes).
	Scopes binding.Item[[]string]
	Scenes binding.Item[[]client.Scene]
	// Selected is the side panel's content.
	Selected binding.Item[Selection]
	// Version changes whenever the sky snapshot does (the view redraws).
	Version binding.Int

	loadMu sync.Mutex // one load at a time
	mu     sync.Mutex
	sky    *Sky
	lit    map[int64]bool // entities of the scene filter (nil: no scene filter)
	litEvt map[int64]bool // events of the scene filter
}

// NewStarMapVM returns the star map's view-model over svc; trace (may be nil) records loads.
func NewStarMapVM(svc client.Service, trace func(kind string, fields map[string]any)) *StarMapVM {
	vm := &StarMapVM{
		svc: svc, now: time.Now, trace: trace,
		Status: binding.NewString(), Failed: binding.NewBool(), Busy: binding.NewBool(),
		Stars: binding.NewInt(), Links: binding.NewInt(),
		Query: binding.NewString(), Scope: binding.NewString(), Scene: binding.NewString(), Period: binding.NewString(),
		Scopes: newSliceBinding[string](), Scenes: newSliceBinding[client.Scene](),
		Selected: binding.NewItem(func(a, b Selection) bool { return false }),
		Version:  binding.NewInt(),
		Show:     map[string]binding.Bool{},
		Timeline: binding.NewBool(),
		sky:      &Sky{Highlight: map[int]bool{}, Dim: map[int]bool{}, byEntity: map[int64]int{}, byEvent: map[int64]int{}},
	}
	_ = vm.Selected.Set(Selection{Node: -1})
	for _, g := range Groups {
		vm.Show[g] = binding.NewBool()
		_ = vm.Show[g].Set(true)
	}
	return vm
}

func (vm *StarMapVM) report(msg string, failed bool) {
	_ = vm.Failed.Set(failed)
	_ = vm.Status.Set(msg)
}

// Sky returns the current snapshot (never nil; do not modify it).
func (vm *StarMapVM) Sky() *Sky {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.sky
}

// publish makes s the current sky with the search and filter applied.
func (vm *StarMapVM) publish(s *Sky) {
	vm.mu.Lock()
	vm.apply(s)
	vm.sky = s
	vm.mu.Unlock()
	_ = vm.Stars.Set(len(s.Graph.Nodes))
	_ = vm.Links.Set(len(s.Graph.Edges))
	v, _ := vm.Version.Get()
	_ = vm.Version.Set(v + 1)
}

// Load reads the whole graph (every page, with the recent L2 events), lays it out starting
// from the current sky's positions, and publishes it; the selection is re-read.
func (vm *StarMapVM) Load(ctx context.Context) error {
	vm.loadMu.Lock()
	defer vm.loadMu.Unlock()
	_ = vm.Busy.Set(true)
	defer vm.Busy.Set(false)
	var ents []client.Entity
	var trs []client.Triple
	evs := map[int64]client.GraphEvt{}
	for after := ""; ; {
		page, err := vm.svc.Graph(ctx, client.GraphQuery{After: after, Limit: client.MaxGraphLimit, Events: skyEvents})
		if err != nil {
			vm.report(Tf("Could not read the memory graph: %v", err), true)
			return fmt.Errorf("star map: %w", err)
		}
		ents = append(ents, page.Entities...)
		trs = append(trs, page.Triples...)
		for _, e := range page.Events {
			if old, ok := evs[e.ID]; ok {
				e.Triples = append(old.Triples, e.Triples...)
			}
			evs[e.ID] = e
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	scenes, err := vm.svc.Scenes(ctx)
	if err != nil {
		vm.report(Tf("Could not read the scenes: %v", err), true)
		return fmt.Errorf("star map scenes: %w", err)
	}
	events := make([]client.GraphEvt, 0, len(evs))
	for _, e := range evs {
		events = append(events, e)
	}
	// The newest skyEvents, in id order.
	slices.SortFunc(events, func(a, b client.GraphEvt) int { return cmp.Compare(b.ID, a.ID) })
	events = events[:min(len(events), skyEvents)]
	slices.SortFunc(events, func(a, b client.GraphEvt) int { return cmp.Compare(a.ID, b.ID) })

	start := time.Now()
	s := buildSky(ents, trs, events, vm.Sky())
	if on, _ := vm.Timeline.Get(); on {
		s.layOutTimeline()
	}
	rawEntities := len(ents)
	took := time.Since(start)
	_ = vm.Scenes.Set(scenes)
	_ = vm.Scopes.Set(skyScopes(s))
	if err := vm.refreshScene(ctx); err != nil {
		return err
	}
	vm.publish(s)
	vm.report(Tf("%d stars, %d links.", len(s.Graph.Nodes), len(s.Graph.Edges)), false)
	if vm.trace != nil {
		vm.trace("starmap", map[string]any{"nodes": len(s.Graph.Nodes), "edges": len(s.Graph.Edges),
			"entities": rawEntities, "stars_entities": len(s.Entities), "owner": s.Owner >= 0, "triples": len(s.Triples), "events": len(s.Events),
			"layout_ms": took.Milliseconds(), "iterations": s.Layout.Iterations})
	}
	// Keep the side panel current (an action may have changed or removed what it shows).
	sel, _ := vm.Selected.Get()
	switch {
	case sel.Entity != nil:
		if i, ok := s.EntityNode(sel.Entity.Entity.ID); ok {
			return vm.Select(ctx, i)
		}
		_ = vm.Selected.Set(Selection{Node: -1})
	case sel.Event != nil:
		if i, ok := s.EventNode(sel.Event.ID); ok {
			return vm.Select(ctx, i)
		}
		_ = vm.Selected.Set(Selection{Node: -1})
	}
	return nil
}

// refreshScene reads the scene filter's part of the graph from the kernel.
func (vm *StarMapVM) refreshScene(ctx context.Context) error {
	key, _ := vm.Scene.Get()
	if key == "" {
		vm.mu.Lock()
		vm.lit, vm.litEvt = nil, nil
		vm.mu.Unlock()
		return nil
	}
	lit, litEvt := map[int64]bool{}, map[int64]bool{}
	for after := ""; ; {
		page, err := vm.svc.Graph(ctx, client.GraphQuery{After: after, Limit: client.MaxGraphLimit, Scene: key})
		if err != nil {
			vm.report(Tf("Could not read the scene %s: %v", key, err), true)
			return fmt.Errorf("star map scene %s: %w", key, err)
		}
		for _, t := range page.Triples {
			lit[t.Subject], lit[t.Object] = true, true
			for _, id := range t.Sources {
				litEvt[id] = true
			}
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	vm.mu.Lock()
	vm.lit, vm.litEvt = lit, litEvt
	vm.mu.Unlock()
	return nil
}

// Refilter applies a changed search text or filter to the current sky (reading the scene's
// part of the graph when the scene filter changed).
func (vm *StarMapVM) Refilter(ctx context.Context) error {
	if err := vm.refreshScene(ctx); err != nil {
		return err
	}
	vm.mu.Lock()
	old := vm.sky
	s := *old // a new snapshot: the view may be drawing the old one
	vm.mu.Unlock()
	switch on, _ := vm.Timeline.Get(); {
	case on && !s.Timeline:
		s.layOutTimeline()
		vm.publish(&s)
		vm.report(Tf("Timeline from %s (left) to %s (right); rows: people, places, things, events, time.",
			s.From.Local().Format("2006-01-02"), s.To.Local().Format("2006-01-02")), false)
		return nil
	case !on && s.Timeline:
		s.layOutWorlds()
		vm.publish(&s)
		vm.report(Tf("%d stars, %d links.", len(s.Graph.Nodes), len(s.Graph.Edges)), false)
		return nil
	}
	vm.publish(&s)
	return nil
}

// apply computes s's search matches and dimmed nodes from the bindings; vm.mu is held.
func (vm *StarMapVM) apply(s *Sky) {
	q, _ := vm.Query.Get()
	scope, _ := vm.Scope.Get()
	period, _ := vm.Period.Get()
	key, _ := vm.Scene.Get()
	since := time.Time{}
	if d, ok := periodLength[period]; ok {
		since = vm.now().Add(-d)
	}
	s.Highlight, s.Dim, s.Matches = map[int]bool{}, map[int]bool{}, nil
	hidden := map[string]bool{}
	for g, b := range vm.Show {
		if on, _ := b.Get(); !on {
			hidden[g] = true
		}
	}
	for i := range s.Graph.Nodes {
		var nodeScope string
		var at time.Time
		var inScene bool
		if e, ok := s.Entity(i); ok {
			nodeScope, at, inScene = e.Scope, e.Updated, vm.lit[e.ID]
			if e.LastRecalled.After(at) {
				at = e.LastRecalled
			}
		} else if ev, ok := s.Event(i); ok {
			nodeScope, at, inScene = ev.Scope, ev.Time, vm.litEvt[ev.ID]
		}
		if (scope != "" && nodeScope != scope) || (!since.IsZero() && at.Before(since)) || (key != "" && !inScene) ||
			hidden[kindGroup(s.Graph.Nodes[i].Kind)] || s.ended[i] {
			s.Dim[i] = true
		}
	}
	s.Matches = searchSky(s, q)
	for _, i := range s.Matches {
		s.Highlight[i] = true
	}
}

// Search applies the search text and returns the best match (-1: none), which the view flies to
// and selects.
func (vm *StarMapVM) Search(ctx context.Context) (int, error) {
	if err := vm.Refilter(ctx); err != nil {
		return -1, err
	}
	s := vm.Sky()
	q, _ := vm.Query.Get()
	if strings.TrimSpace(q) == "" {
		vm.report("", false)
		return -1, nil
	}
	if len(s.Matches) == 0 {
		vm.report(Tf("No star matches %q.", strings.TrimSpace(q)), false)
		return -1, nil
	}
	best := s.Matches[0]
	if len(s.Matches) == 1 {
		vm.report(Tf("One star matches %q.", strings.TrimSpace(q)), false)
	} else {
		vm.report(Tf("%d stars match %q.", len(s.Matches), strings.TrimSpace(q)), false)
	}
	return best, vm.Select(ctx, best)
}

// Select shows node i in the side panel (-1 clears it): an entity is read from the kernel with
// all its triples (history included) and blocks.
func (vm *StarMapVM) Select(ctx context.Context, i int) error {
	s := vm.Sky()
	if e, ok := s.Entity(i); ok {
		d, err := vm.svc.Entity(ctx, e.ID)
		if err != nil {
			vm.report(Tf("Could not read %s: %v", e.Name, err), true)
			return fmt.Errorf("entity %d: %w", e.ID, err)
		}
		_ = vm.Selected.Set(Selection{Node: i, Entity: &d})
		if vm.trace != nil {
			vm.trace("starmap_selected", map[string]any{"label": e.Name, "facts": len(d.Triples)})
		}
		return nil
	}
	if ev, ok := s.Event(i); ok {
		_ = vm.Selected.Set(Selection{Node: i, Event: &ev})
		return nil
	}
	_ = vm.Selected.Set(Selection{Node: -1})
	return nil
}

// EventContext returns an event with its neighbours in its session (a triple's source, opened in
// context).
func (vm *StarMapVM) EventContext(ctx context.Context, id int64) ([]client.MemoryHit, error) {
	evs, err := vm.svc.EventContext(ctx, id, client.DefaultContextRadius)
	if err != nil {
		vm.report(Tf("Could not read event %d: %v", id, err), true)
		return nil, fmt.Errorf("event %d: %w", id, err)
	}
	return evs, nil
}
