package memtest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// IndexedStore is a store with its full-text index and layers, what [RunIndexTests] exercises.
type IndexedStore = interface {
	memory.Store
	memory.Index
	memory.Layers
}

// RunIndexTests runs the [memory.Index] and [memory.Layers] conformance suite. open must return a
// new, empty store using the default tokenizer ([memory.DefaultTokenize]) for each call; the
// suite closes it. Subtests cover visibility, filters, BM25 ordering, indexed text, DocFreq,
// Neighbours, Events, SetLayer/Touch/LayerEvents, History after layer changes and episodes.
func RunIndexTests(t *testing.T, open func(t *testing.T) IndexedStore) {
	t.Helper()
	newStore := func(t *testing.T) IndexedStore {
		t.Helper()
		s := open(t)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	t.Run("Visibility", func(t *testing.T) { testVisibility(t, newStore(t)) })
	t.Run("Filters", func(t *testing.T) { testFilters(t, newStore(t)) })
	t.Run("Ranking", func(t *testing.T) { testRanking(t, newStore(t)) })
	t.Run("IndexedText", func(t *testing.T) { testIndexedText(t, newStore(t)) })
	t.Run("DocFreq", func(t *testing.T) { testDocFreq(t, newStore(t)) })
	t.Run("Neighbours", func(t *testing.T) { testNeighbours(t, newStore(t)) })
	t.Run("Layers", func(t *testing.T) { testLayers(t, newStore(t)) })
	t.Run("Episodes", func(t *testing.T) { testEpisodes(t, newStore(t)) })
}

var (
	private = memory.Scope{Kind: memory.ScopePrivate}
	public  = memory.Scope{Kind: memory.ScopePublic}
	groupA  = memory.Scope{Kind: memory.ScopeGroup, Group: "A"}
	groupB  = memory.Scope{Kind: memory.ScopeGroup, Group: "B"}
)

func mustSearch(t *testing.T, s memory.Index, q memory.TextQuery) []memory.TextHit {
	t.Helper()
	hits, err := s.SearchTerms(context.Background(), q)
	if err != nil {
		t.Fatalf("SearchTerms(%+v): %v", q, err)
	}
	return hits
}

func hitContents(hits []memory.TextHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Event.Content)
	}
	return out
}

func eventContents(evs []memory.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Content)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func testVisibility(t *testing.T, s IndexedStore) {
	ctx := context.Background()
	for _, id := range []string{"own", "ga", "gb", "pub"} {
		mustCreate(t, s, memory.Session{ID: id})
	}
	evs := mustAppend(t, s,
		memory.Event{Session: "own", Role: memory.RoleUser, Content: "zebra secret password", Scope: private},
		memory.Event{Session: "ga", Role: memory.RoleUser, Content: "zebra alpha", Scope: groupA},
		memory.Event{Session: "gb", Role: memory.RoleUser, Content: "zebra beta", Scope: groupB},
		memory.Event{Session: "pub", Role: memory.RoleUser, Content: "zebra public", Scope: public},
		memory.Event{Session: "own", Role: memory.RoleUser, Content: "zebra tail", Scope: public},
	)
	tests := []struct {
		name   string
		viewer memory.Viewer
		want   []string
	}{
		{"owner", memory.OwnerViewer, []string{"zebra alpha", "zebra beta", "zebra public", "zebra secret password", "zebra tail"}},
		{"group A", memory.Viewer{Group: "A"}, []string{"zebra alpha", "zebra public", "zebra tail"}},
		{"group B", memory.Viewer{Group: "B"}, []string{"zebra beta", "zebra public", "zebra tail"}},
		{"public", memory.Viewer{}, []string{"zebra public", "zebra tail"}},
		{"viewer of a group session", memory.ViewerFor(memory.Session{Scope: groupA}), []string{"zebra alpha", "zebra public", "zebra tail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hitContents(mustSearch(t, s, memory.TextQuery{Terms: []string{"zebra", "secret", "password", "alpha", "beta"}, Viewer: tt.viewer}))
			if !reflect.DeepEqual(sorted(got), tt.want) {
				t.Fatalf("visible hits = %q, want %q", got, tt.want)
			}
			if !tt.viewer.Owner {
				for _, term := range []string{"secret", "password"} {
					if hits := mustSearch(t, s, memory.TextQuery{Terms: []string{term}, Viewer: tt.viewer}); len(hits) != 0 {
						t.Fatalf("the private secret reached a non-owner viewer: %q", hitContents(hits))
					}
				}
			}
			// Neighbours apply the same rule.
			nb, err := s.Neighbours(ctx, []int64{evs[1].ID}, 10, tt.viewer)
			if err != nil {
				t.Fatalf("Neighbours: %v", err)
			}
			for _, e := range nb {
				if !tt.viewer.CanSee(e.Scope) {
					t.Fatalf("Neighbours returned %q (%s) to %+v", e.Content, e.Scope, tt.viewer)
				}
			}
		})
	}
	nb, err := s.Neighbours(ctx, []int64{evs[4].ID}, 1, memory.Viewer{Group: "A"})
	if err != nil || len(nb) != 0 {
		t.Fatalf("Neighbours of a public event next to a secret, seen by group A = %q, %v; want none", eventContents(nb), err)
	}
}

func testFilters(t *testing.T, s IndexedStore) {
	ctx := context.Background()
	mustCreate(t, s, memory.Session{ID: "s1"})
	mustCreate(t, s, memory.Session{ID: "s2"})
	evs := mustAppend(t, s,
		memory.Event{Session: "s1", Role: memory.RoleUser, Content: "kiwi one"},
		memory.Event{Session: "s1", Role: memory.RoleUser, Content: "kiwi two"},
		memory.Event{Session: "s2", Role: memory.RoleUser, Content: "kiwi three"},
		memory.Event{Session: "s2", Role: memory.RoleUser, Content: "kiwi four"},
	)
	if err := s.SetLayer(ctx, []int64{evs[1].ID, evs[3].ID}, memory.LayerL2); err != nil {
		t.Fatalf("SetLayer: %v", err)
	}
	tests := []struct {
		name string
		q    memory.TextQuery
		want []string
	}{
		{"all", memory.TextQuery{}, []string{"kiwi four", "kiwi one", "kiwi three", "kiwi two"}},
		{"L2", memory.TextQuery{Layers: []memory.Layer{memory.LayerL2}}, []string{"kiwi four", "kiwi two"}},
		{"L1", memory.TextQuery{Layers: []memory.Layer{memory.LayerL1}}, []string{"kiwi one", "kiwi three"}},
		{"L1 and L2", memory.TextQuery{Layers: []memory.Layer{memory.LayerL1, memory.LayerL2}}, []string{"kiwi four", "kiwi one", "kiwi three", "kiwi two"}},
		{"session", memory.TextQuery{Session: "s1"}, []string{"kiwi one", "kiwi two"}},
		{"session and layer", memory.TextQuery{Session: "s2", Layers: []memory.Layer{memory.LayerL2}}, []string{"kiwi four"}},
		{"unknown session", memory.TextQuery{Session: "ghost"}, nil},
		{"limit", memory.TextQuery{Limit: 2}, nil}, // checked by count below
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Terms, q.Viewer = []string{"kiwi"}, memory.OwnerViewer
			got := hitContents(mustSearch(t, s, q))
			if q.Limit > 0 {
				if len(got) != q.Limit {
					t.Fatalf("Limit %d returned %d hits", q.Limit, len(got))
				}
				return
			}
			if !reflect.DeepEqual(sorted(got), tt.want) {
				t.Fatalf("hits = %q, want %q", got, tt.want)
			}
		})
	}
	_, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"kiwi"}, Viewer: memory.OwnerViewer, Layers: []memory.Layer{7}})
	wantErr(t, "SearchTerms with layer 7", err, memory.ErrInvalid, "layer")
}

func testRanking(t *testing.T, s IndexedStore) {
	mustCreate(t, s, memory.Session{ID: "a"})
	var batch []memory.Event
	add := func(content string) {
		batch = append(batch, memory.Event{Session: "a", Role: memory.RoleUser, Content: content})
	}
	add("apple apple apple")                                            // 0: high tf, short
	add("apple banana cherry date elder fig grape honeydew lime mango") // 1: once, long
	add("apple quince")                                                 // 2: once, short, with a rare term
	for i := range 12 {
		add(fmt.Sprintf("filler words number %d about nothing", i))
	}
	for i := range 3 {
		add(fmt.Sprintf("common apple %d", i))
	}
	evs := mustAppend(t, s, batch...)
	owner := memory.OwnerViewer

	hits := mustSearch(t, s, memory.TextQuery{Terms: []string{"apple"}, Viewer: owner})
	if len(hits) != 6 {
		t.Fatalf("apple matched %d events, want 6: %q", len(hits), hitContents(hits))
	}
	if hits[0].Event.ID != evs[0].ID {
		t.Fatalf("best hit for apple = %q, want the event with apple three times", hits[0].Event.Content)
	}
	if last := hits[len(hits)-1]; last.Event.ID != evs[1].ID {
		t.Fatalf("worst hit for apple = %q, want the long event", last.Event.Content)
	}
	for i, h := range hits {
		if h.Score <= 0 {
			t.Fatalf("hit %d score %v, want > 0 (higher is better)", i, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("hits not best first: %v after %v", h.Score, hits[i-1].Score)
		}
		if i > 0 && h.Score == hits[i-1].Score && h.Event.ID < hits[i-1].Event.ID {
			t.Fatalf("equal scores not in id order")
		}
	}
	// A rare term outweighs a common one (IDF), and each event counts once however many terms
	// it matches.
	hits = mustSearch(t, s, memory.TextQuery{Terms: []string{"apple", "quince", "Apple"}, Viewer: owner, Limit: 3})
	if len(hits) != 3 || hits[0].Event.ID != evs[2].ID {
		t.Fatalf("best hit for apple OR quince = %q, want %q first and 3 hits", hitContents(hits), evs[2].Content)
	}
	tests := []struct {
		name  string
		terms []string
	}{
		{"no terms", nil},
		{"blank terms", []string{"", "  "}},
		{"fts syntax is literal", []string{`"apple`, `apple*`, "NOT", "(", "a:b", "apple OR", "-", "^"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := s.SearchTerms(context.Background(), memory.TextQuery{Terms: tt.terms, Viewer: owner})
			if err != nil {
				t.Fatalf("SearchTerms(%q): %v", tt.terms, err)
			}
			for _, h := range hits {
				if !strings.Contains(h.Indexed, "apple") {
					t.Fatalf("SearchTerms(%q) returned %q", tt.terms, h.Event.Content)
				}
			}
			if tt.name != "fts syntax is literal" && len(hits) != 0 {
				t.Fatalf("SearchTerms(%q) = %q, want nothing", tt.terms, hitContents(hits))
			}
		})
	}
}

func testIndexedText(t *testing.T, s IndexedStore) {
	ctx := context.Background()
	mustCreate(t, s, memory.Session{ID: "a"})
	evs := mustAppend(t, s,
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "Hello, World! 北京大学"},
		memory.Event{Session: "a", Role: memory.RoleAssistant, Content: "Checking.",
			ToolCalls: []memory.ToolCall{{ID: "c1", Name: "weather_now", Arguments: `{"city":"Oslo"}`}}},
		memory.Event{Session: "a", Role: memory.RoleTool, ToolCallID: "c1", ToolName: "forecast", Content: `{"temp":21}`},
		memory.Event{Session: "a", Role: memory.RoleSystem, Content: ""},
	)
	want := []string{"hello world 北京大学", "checking weather now city oslo", "temp 21 forecast", ""}
	hits, err := s.Events(ctx, []int64{evs[3].ID, evs[1].ID, 999999, evs[0].ID, evs[2].ID})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if len(hits) != 4 {
		t.Fatalf("Events returned %d hits, want 4 (unknown ids skipped)", len(hits))
	}
	for i, h := range hits {
		if h.Event.ID != evs[i].ID || !reflect.DeepEqual(h.Event, evs[i]) {
			t.Fatalf("Events hit %d = %+v, want %+v (id order)", i, h.Event, evs[i])
		}
		if h.Indexed != want[i] {
			t.Errorf("event %d indexed as %q, want %q", i, h.Indexed, want[i])
		}
	}
	for _, tt := range []struct {
		term string
		want int64
	}{{"forecast", evs[2].ID}, {"weather", evs[1].ID}, {"oslo", evs[1].ID}, {"北京大学", evs[0].ID}, {"21", evs[2].ID}} {
		hits := mustSearch(t, s, memory.TextQuery{Terms: []string{tt.term}, Viewer: memory.OwnerViewer})
		if len(hits) != 1 || hits[0].Event.ID != tt.want || hits[0].Indexed != want[slices.IndexFunc(evs, func(e memory.Event) bool { return e.ID == tt.want })] {
			t.Errorf("SearchTerms(%q) = %+v, want event %d with its tokens", tt.term, hits, tt.want)
		}
	}
}

func testDocFreq(t *testing.T, s IndexedStore) {
	mustCreate(t, s, memory.Session{ID: "a"})
	mustAppend(t, s,
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "red red blue"},
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "red green"},
		memory.Event{Session: "a", Role: memory.RoleUser, Content: "yellow", Scope: public},
		memory.Event{Session: "a", Role: memory.RoleUser, Content: ""},
	)
	df, total, err := s.DocFreq(context.Background(), []string{"red", "blue", "purple", "yellow", "RED"})
	if err != nil {
		t.Fatalf("DocFreq: %v", err)
	}
	if want := []int{2, 1, 0, 1, 2}; !reflect.DeepEqual(df, want) || total != 4 {
		t.Fatalf("DocFreq = %v, %d; want %v, 4", df, total, want)
	}
	if df, total, err := s.DocFreq(context.Background(), nil); err != nil || len(df) != 0 || total != 4 {
		t.Fatalf("DocFreq(nil) = %v, %d, %v; want none, 4", df, total, err)
	}
}

func testNeighbours(t *testing.T, s IndexedStore) {
	ctx := context.Background()
	mustCreate(t, s, memory.Session{ID: "a"})
	mustCreate(t, s, memory.Session{ID: "b"})
	var batch []memory.Event
	for i := 1; i <= 5; i++ { // a1 b1 a2 b2 a3 b3 a4 a5: ids interleave across sessions
		batch = append(batch, memory.Event{Session: "a", Role: memory.RoleUser, Content: fmt.Sprint("a", i), Scope: public})
		if i <= 3 {
			batch = append(batch, memory.Event{Session: "b", Role: memory.RoleUser, Content: fmt.Sprint("b", i), Scope: public})
		}
	}
	batch = append(batch, memory.Event{Session: "a", Role: memory.RoleUser, Content: "a6 private"})
	evs := mustAppend(t, s, batch...)
	id := func(content string) int64 {
		for _, e := range evs {
			if e.Content == content {
				return e.ID
			}
		}
		t.Fatalf("no event %q", content)
		return 0
	}
	tests := []struct {
		name    string
		anchors []string
		radius  int
		viewer  memory.Viewer
		want    []string
	}{
		{"radius 1", []string{"a3"}, 1, memory.OwnerViewer, []string{"a2", "a4"}},
		{"radius 2 at the start", []string{"a1"}, 2, memory.OwnerViewer, []string{"a2", "a3"}},
		{"other session", []string{"b2"}, 1, memory.OwnerViewer, []string{"b1", "b3"}},
		{"anchors excluded, overlap merged", []string{"a3", "a4"}, 1, memory.OwnerViewer, []string{"a2", "a5"}},
		{"two sessions", []string{"a1", "b3"}, 1, memory.OwnerViewer, []string{"b2", "a2"}},
		{"invisible dropped", []string{"a5"}, 1, memory.Viewer{}, []string{"a4"}},
		{"owner sees private", []string{"a5"}, 1, memory.OwnerViewer, []string{"a4", "a6 private"}},
		{"radius 0", []string{"a3"}, 0, memory.OwnerViewer, nil},
		{"big radius", []string{"b1"}, 100, memory.OwnerViewer, []string{"b2", "b3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ids []int64
			for _, c := range tt.anchors {
				ids = append(ids, id(c))
			}
			got, err := s.Neighbours(ctx, ids, tt.radius, tt.viewer)
			if err != nil {
				t.Fatalf("Neighbours: %v", err)
			}
			var wantIDs []int64
			for _, c := range tt.want {
				wantIDs = append(wantIDs, id(c))
			}
			slices.Sort(wantIDs)
			var gotIDs []int64
			for _, e := range got {
				gotIDs = append(gotIDs, e.ID)
			}
			if !reflect.DeepEqual(gotIDs, wantIDs) {
				t.Fatalf("Neighbours(%v, %d) = %q, want %q in id order", tt.anchors, tt.radius, eventContents(got), tt.want)
			}
		})
	}
	if got, err := s.Neighbours(ctx, []int64{999999}, 3, memory.OwnerViewer); err != nil || len(got) != 0 {
		t.Fatalf("Neighbours of an unknown id = %v, %v; want nothing", got, err)
	}
}

func testLayers(t *testing.T, s IndexedStore) {
	ctx := context.Background()
	mustCreate(t, s, memory.Session{ID: "a"})
	mustCreate(t, s, memory.Session{ID: "b"})
	var batch []memory.Event
	for i := range 6 {
		batch = append(batch, memory.Event{Session: "a", Role: memory.RoleUser, Content: fmt.Sprint("event ", i)})
	}
	evs := mustAppend(t, s, append(batch, memory.Event{Session: "b", Role: memory.RoleUser, Content: "other"})...)
	_ = mustHistory(t, s, "a", 3) // warm any History cache before the changes
	_ = mustHistory(t, s, "a", 0)

	layer := func(l memory.Layer) []int64 {
		t.Helper()
		got, err := s.LayerEvents(ctx, "a", l)
		if err != nil {
			t.Fatalf("LayerEvents(%d): %v", l, err)
		}
		var ids []int64
		for _, e := range got {
			if e.Layer != l {
				t.Fatalf("LayerEvents(%d) returned an event in layer %d", l, e.Layer)
			}
			ids = append(ids, e.ID)
		}
		return ids
	}
	if got := layer(memory.LayerL2); len(got) != 0 {
		t.Fatalf("new events in L2: %v", got)
	}
	if err := s.SetLayer(ctx, []int64{evs[4].ID, evs[1].ID, evs[0].ID}, memory.LayerL2); err != nil {
		t.Fatalf("SetLayer: %v", err)
	}
	if got, want := layer(memory.LayerL2), []int64{evs[0].ID, evs[1].ID, evs[4].ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("L2 = %v, want %v", got, want)
	}
	if got, want := layer(memory.LayerL1), []int64{evs[2].ID, evs[3].ID, evs[5].ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("L1 = %v, want %v", got, want)
	}
	if err := s.SetLayer(ctx, []int64{evs[1].ID}, memory.LayerL1); err != nil { // back to L1
		t.Fatalf("SetLayer: %v", err)
	}

	t1 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	t2 := t1.Add(time.Hour)
	for _, touch := range []struct {
		ids []int64
		at  time.Time
	}{{[]int64{evs[4].ID, evs[0].ID}, t2}, {[]int64{evs[4].ID, evs[4].ID}, t1}} {
		if err := s.Touch(ctx, touch.ids, touch.at); err != nil {
			t.Fatalf("Touch: %v", err)
		}
	}

	want := map[int64]struct {
		layer    memory.Layer
		accesses int
		last     time.Time
	}{
		evs[0].ID: {memory.LayerL2, 1, t2.UTC()},
		evs[1].ID: {memory.LayerL1, 0, time.Time{}},
		evs[4].ID: {memory.LayerL2, 2, t2.UTC()}, // the earlier touch does not move LastAccess back
		evs[5].ID: {memory.LayerL1, 0, time.Time{}},
	}
	check := func(what string, got []memory.Event) {
		t.Helper()
		for _, e := range got {
			w, ok := want[e.ID]
			if !ok {
				continue
			}
			if e.Layer != w.layer || e.Accesses != w.accesses || !e.LastAccess.Equal(w.last) || e.LastAccess.Location() != time.UTC {
				t.Errorf("%s: event %d has layer %d, %d accesses, last %v; want %d, %d, %v",
					what, e.ID, e.Layer, e.Accesses, e.LastAccess, w.layer, w.accesses, w.last)
			}
		}
	}
	check("History(all)", mustHistory(t, s, "a", 0))
	check("History(3)", mustHistory(t, s, "a", 3))
	hits, err := s.Events(ctx, []int64{evs[0].ID, evs[1].ID, evs[4].ID, evs[5].ID})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	var fromEvents []memory.Event
	for _, h := range hits {
		fromEvents = append(fromEvents, h.Event)
	}
	check("Events", fromEvents)
	l2, err := s.LayerEvents(ctx, "a", memory.LayerL2)
	if err != nil {
		t.Fatalf("LayerEvents: %v", err)
	}
	check("LayerEvents", l2)

	t.Run("Errors", func(t *testing.T) {
		before := mustHistory(t, s, "a", 0)
		err := s.SetLayer(ctx, []int64{evs[2].ID, 999999}, memory.LayerL2)
		wantErr(t, "SetLayer with an unknown id", err, memory.ErrNotFound, "999999")
		err = s.Touch(ctx, []int64{evs[2].ID, 999999}, t2)
		wantErr(t, "Touch with an unknown id", err, memory.ErrNotFound, "999999")
		wantErr(t, "SetLayer(3)", s.SetLayer(ctx, []int64{evs[2].ID}, 3), memory.ErrInvalid, "layer")
		if after := mustHistory(t, s, "a", 0); !reflect.DeepEqual(after, before) {
			t.Fatalf("a failed SetLayer or Touch changed events")
		}
		_, err = s.LayerEvents(ctx, "ghost", memory.LayerL1)
		wantErr(t, "LayerEvents(ghost)", err, memory.ErrNotFound, "ghost")
		_, err = s.LayerEvents(ctx, "a", 0)
		wantErr(t, "LayerEvents(0)", err, memory.ErrInvalid, "layer")
		for _, call := range []func() error{
			func() error { return s.SetLayer(ctx, nil, memory.LayerL2) },
			func() error { return s.Touch(ctx, nil, t1) },
		} {
			if err := call(); err != nil {
				t.Fatalf("empty id list: %v", err)
			}
		}
		if got, err := s.LayerEvents(ctx, "b", memory.LayerL2); err != nil || len(got) != 0 {
			t.Fatalf("LayerEvents(b, L2) = %v, %v; want none", got, err)
		}
	})
}
