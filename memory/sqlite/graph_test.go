package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// Scopes the graph tests use.
var (
	grPriv = memory.Scope{}
	grPub  = memory.Scope{Kind: memory.ScopePublic}
	grA    = memory.Scope{Kind: memory.ScopeGroup, Group: "a"}
	grB    = memory.Scope{Kind: memory.ScopeGroup, Group: "b"}
)

// grT0 is the time the graph tests start at.
var grT0 = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// grClock is a settable clock.
type grClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *grClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *grClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// grFix is a store in a temporary file with a settable clock and one session ("chat").
type grFix struct {
	t     *testing.T
	ctx   context.Context
	s     *sqlite.Store
	clock *grClock
	path  string
}

func newGrFix(t *testing.T) *grFix {
	t.Helper()
	f := &grFix{t: t, ctx: context.Background(), clock: &grClock{t: grT0}, path: filepath.Join(t.TempDir(), "memory.db")}
	f.open()
	if _, err := f.s.CreateSession(f.ctx, memory.Session{ID: "chat"}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return f
}

// open opens (or reopens) the store file.
func (f *grFix) open() {
	f.t.Helper()
	s, err := sqlite.Open(f.ctx, f.path, sqlite.Options{Clock: f.clock.now})
	if err != nil {
		f.t.Fatalf("Open: %v", err)
	}
	f.t.Cleanup(func() { s.Close() })
	f.s = s
}

// reopen closes the store and opens the file again.
func (f *grFix) reopen() {
	f.t.Helper()
	if err := f.s.Close(); err != nil {
		f.t.Fatalf("Close: %v", err)
	}
	f.open()
}

// event appends an L2 event and returns it as stored.
func (f *grFix) event(e memory.Event) memory.Event {
	f.t.Helper()
	if e.Session == "" {
		e.Session = "chat"
	}
	if e.Role == "" {
		e.Role = memory.RoleUser
	}
	if e.Layer == 0 {
		e.Layer = memory.LayerL2
	}
	out, err := f.s.AppendEvents(f.ctx, []memory.Event{e})
	if err != nil {
		f.t.Fatalf("AppendEvents: %v", err)
	}
	return out[0]
}

// ev appends an L2 user event saying content, in scope sc, at time at, and returns its id.
func (f *grFix) ev(content string, sc memory.Scope, at time.Time) int64 {
	f.t.Helper()
	return f.event(memory.Event{Content: content, Scope: sc, Time: at}).ID
}

func (f *grFix) apply(d memory.Distillation) memory.DistillResult {
	f.t.Helper()
	res, err := f.s.ApplyDistillation(f.ctx, d)
	if err != nil {
		f.t.Fatalf("ApplyDistillation: %v", err)
	}
	return res
}

// distil applies facts read from events (all of them sources unless a fact names its own).
func (f *grFix) distil(events []int64, facts ...memory.Fact) memory.DistillResult {
	f.t.Helper()
	for i := range facts {
		if facts[i].Sources == nil {
			facts[i].Sources = events
		}
	}
	return f.apply(memory.Distillation{Events: events, Facts: facts, Origin: "llm"})
}

func (f *grFix) triples(q memory.TripleQuery) []memory.Triple {
	f.t.Helper()
	if q.Viewer == (memory.Viewer{}) {
		q.Viewer = memory.OwnerViewer
	}
	ts, err := f.s.Triples(f.ctx, q)
	if err != nil {
		f.t.Fatalf("Triples(%+v): %v", q, err)
	}
	return ts
}

func (f *grFix) entities(q memory.EntityQuery) []memory.Entity {
	f.t.Helper()
	if q.Viewer == (memory.Viewer{}) {
		q.Viewer = memory.OwnerViewer
	}
	es, err := f.s.Entities(f.ctx, q)
	if err != nil {
		f.t.Fatalf("Entities(%+v): %v", q, err)
	}
	return es
}

// entity returns the only entity named name.
func (f *grFix) entity(name string) memory.Entity {
	f.t.Helper()
	es := f.entities(memory.EntityQuery{Name: name})
	if len(es) != 1 {
		f.t.Fatalf("entities named %q: %+v, want one", name, es)
	}
	return es[0]
}

// triple returns the only triple (history included) whose text is "subject predicate object".
func (f *grFix) triple(text string) memory.Triple {
	f.t.Helper()
	var found []memory.Triple
	for _, t := range f.triples(memory.TripleQuery{History: true, Limit: 20_000}) {
		if grText(t) == text {
			found = append(found, t)
		}
	}
	if len(found) != 1 {
		f.t.Fatalf("triples %q: %+v, want one", text, found)
	}
	return found[0]
}

func (f *grFix) search(v memory.Viewer, terms ...string) []memory.TripleHit {
	f.t.Helper()
	hits, err := f.s.SearchTriples(f.ctx, terms, v, 0)
	if err != nil {
		f.t.Fatalf("SearchTriples(%q): %v", terms, err)
	}
	return hits
}

// grIntegrity runs PRAGMA integrity_check (FTS5 tables included) on a new connection to the
// file. A connection that read an FTS5 table before another connection changed it reports a
// false "checksum mismatch" (SQLite 3.54: the check uses the connection's stale cached index
// structure), so the store's own pooled readers are not used here.
func grIntegrity(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "&mode=ro")
	defer db.Close()
	var msgs []string
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			t.Fatalf("integrity_check: %v", err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		t.Errorf("integrity_check: %q", msgs)
	}
}

func grText(t memory.Triple) string { return t.SubjectName + " " + t.Predicate + " " + t.ObjectName }

// grTexts renders triples (or hits) as "subject predicate object" strings, in order.
func grTexts(ts []memory.Triple) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = grText(t)
	}
	return out
}

func grHitTexts(hs []memory.TripleHit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = grText(h.Triple)
	}
	return out
}

// grFact is a fact with kinds left to the default.
func grFact(s, p, o string, sources ...int64) memory.Fact {
	return memory.Fact{Subject: s, Predicate: p, Object: o, Sources: sources}
}

func TestGraphEntityResolution(t *testing.T) {
	type fact struct{ s, sk, p, o, ok string }
	tests := []struct {
		name  string
		facts []fact // each from its own event, one distillation each
		want  []string
		// triples wanted, current, in id order
		triples []string
	}{
		{
			name: "thing upgraded to the specific kind",
			facts: []fact{
				{"Alice", "", "likes", "tea", ""},
				{"Alice", "person", "knows", "Bob", "Person"},
			},
			want:    []string{"Alice/person", "tea/thing", "Bob/person"},
			triples: []string{"Alice likes tea", "Alice knows Bob"},
		},
		{
			name: "a thing finds the specific entity",
			facts: []fact{
				{"Paris", "place", "is in", "France", "place"},
				{"I", "person", "visited", "paris", "thing"},
			},
			want:    []string{"Paris/place", "France/place", "I/person"},
			triples: []string{"Paris is in France", "I visited Paris"},
		},
		{
			name: "two specific kinds: a thing is a new entity",
			facts: []fact{
				{"Jordan", "person", "lives in", "Amman", "place"},
				{"Jordan", "place", "borders", "Israel", "place"},
				{"jordan", "", "is", "ambiguous", ""},
			},
			want:    []string{"Jordan/person", "Amman/place", "Jordan/place", "Israel/place", "jordan/thing", "ambiguous/thing"},
			triples: []string{"Jordan lives in Amman", "Jordan borders Israel", "jordan is ambiguous"},
		},
		{
			name: "different specific kinds stay apart",
			facts: []fact{
				{"Mercury", "planet", "orbits", "Sun", "star"},
				{"Mercury", "element", "is", "liquid", ""},
			},
			want:    []string{"Mercury/planet", "Sun/star", "Mercury/element", "liquid/thing"},
			triples: []string{"Mercury orbits Sun", "Mercury is liquid"},
		},
		{
			name: "names, kinds and predicates are normalised",
			facts: []fact{
				{"  Alice   Smith ", "Person", "Lives_In", "new  york", "PLACE"},
				{"alice smith", "person", "  lives   in ", "New York", "place"},
			},
			want:    []string{"Alice Smith/person", "new york/place"},
			triples: []string{"Alice Smith lives in new york"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGrFix(t)
			for i, fc := range tt.facts {
				id := f.ev(fmt.Sprint("event ", i), grPub, grT0.Add(time.Duration(i)*time.Minute))
				f.distil([]int64{id}, memory.Fact{Subject: fc.s, SubjectKind: fc.sk, Predicate: fc.p, Object: fc.o, ObjectKind: fc.ok})
			}
			var got []string
			for _, e := range f.entities(memory.EntityQuery{}) {
				got = append(got, e.Name+"/"+e.Kind)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("entities = %q, want %q", got, tt.want)
			}
			if got := grTexts(f.triples(memory.TripleQuery{})); !reflect.DeepEqual(got, tt.triples) {
				t.Errorf("triples = %q, want %q", got, tt.triples)
			}
		})
	}
}

func TestApplyDistillationRefusesInvalidFacts(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	tests := []struct {
		name string
		d    func(ev int64) memory.Distillation
		ok   bool
	}{
		{"empty subject", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact(" ", "likes", "tea", ev)}}
		}, false},
		{"empty object", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact("Alice", "likes", "", ev)}}
		}, false},
		{"empty predicate", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact("Alice", " _ ", "tea", ev)}}
		}, false},
		{"name of 201 characters", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact(long(201), "likes", "tea", ev)}}
		}, false},
		{"name of 200 characters", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact(long(200), "likes", "tea", ev)}}
		}, true},
		{"predicate of 101 characters", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact("Alice", long(101), "tea", ev)}}
		}, false},
		{"predicate of 100 characters", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact("Alice", long(100), "tea", ev)}}
		}, true},
		{"kind of 51 characters", func(ev int64) memory.Distillation {
			f := grFact("Alice", "likes", "tea", ev)
			f.SubjectKind = long(51)
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{f}}
		}, false},
		{"source outside the batch", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Facts: []memory.Fact{grFact("Alice", "likes", "tea", ev, ev+1)}}
		}, false},
		{"unknown origin", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Origin: "owner", Facts: []memory.Fact{grFact("Alice", "likes", "tea", ev)}}
		}, false},
		{"adoption by an empty name", func(ev int64) memory.Distillation {
			return memory.Distillation{Events: []int64{ev}, Adopt: []memory.Adoption{{Block: "x", Entity: "  "}}}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGrFix(t)
			ev := f.ev("Alice likes tea", grPub, grT0)
			_, err := f.s.ApplyDistillation(f.ctx, tt.d(ev))
			if tt.ok {
				if err != nil {
					t.Fatalf("ApplyDistillation: %v", err)
				}
				return
			}
			if !errors.Is(err, memory.ErrInvalid) {
				t.Fatalf("ApplyDistillation error = %v, want ErrInvalid", err)
			}
			hits, err := f.s.Events(f.ctx, []int64{ev})
			if err != nil || len(hits) != 1 || hits[0].Event.Distilled {
				t.Errorf("event after a refused distillation: %+v, %v (want it stored and not distilled)", hits, err)
			}
			if es := f.entities(memory.EntityQuery{}); len(es) != 0 {
				t.Errorf("entities after a refused distillation: %+v", es)
			}
		})
	}
}

func TestApplyDistillationConfirmsAndReruns(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("Alice likes tea", grPub, grT0)
	e2 := f.ev("Alice really likes tea", grPub, grT0.Add(time.Hour))
	e3 := f.ev("tea again", grPub, grT0.Add(2*time.Hour))
	d1 := memory.Distillation{
		Events: []int64{e1, e2},
		Facts: []memory.Fact{
			{Subject: "Alice", SubjectKind: "person", Predicate: "likes", Object: "tea", Sources: []int64{e1}},
			{Subject: "alice", Predicate: "likes", Object: "Tea", Sources: []int64{e2, e2}},
		},
		Origin: "llm",
	}
	steps := []struct {
		name    string
		d       memory.Distillation
		want    memory.DistillResult
		sources []int64
	}{
		{"first: one created, one confirmed", d1, memory.DistillResult{Entities: 2, Triples: 1, Confirmed: 1}, []int64{e1, e2}},
		{"rerun: every event skipped", d1, memory.DistillResult{Skipped: 2}, []int64{e1, e2}},
		{"new event confirms", memory.Distillation{Events: []int64{e2, e3}, Origin: "rules",
			Facts: []memory.Fact{grFact("ALICE", "likes", "tea", e2, e3)}}, memory.DistillResult{Confirmed: 1, Skipped: 1}, []int64{e1, e2, e3}},
		{"missing event skipped", memory.Distillation{Events: []int64{e3 + 100},
			Facts: []memory.Fact{grFact("Alice", "likes", "coffee", e3+100)}}, memory.DistillResult{Skipped: 1}, []int64{e1, e2, e3}},
	}
	for _, st := range steps {
		got := f.apply(st.d)
		if got != st.want {
			t.Errorf("%s: result %+v, want %+v", st.name, got, st.want)
		}
		ts := f.triples(memory.TripleQuery{History: true})
		if len(ts) != 1 {
			t.Fatalf("%s: triples %+v, want one", st.name, ts)
		}
		if !reflect.DeepEqual(ts[0].Sources, st.sources) {
			t.Errorf("%s: sources %v, want %v", st.name, ts[0].Sources, st.sources)
		}
	}
	tr := f.triple("Alice likes tea")
	if !tr.ValidFrom.Equal(grT0) || tr.Origin != "llm" || !tr.Current() || tr.Scope != grPub {
		t.Errorf("triple = %+v, want valid from the first fact's source (%v), origin llm, current, public", tr, grT0)
	}
	alice := f.entity("alice")
	if alice.Mentions != 3 || alice.Kind != "person" || alice.Origin != "llm" {
		t.Errorf("Alice = %+v, want 3 mentions, kind person, origin llm", alice)
	}
	hits, err := f.s.Events(f.ctx, []int64{e1, e2, e3})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	for _, h := range hits {
		if !h.Event.Distilled || h.Event.Layer != memory.LayerL2 {
			t.Errorf("event %d: distilled %v, layer %d; want distilled and still in L2", h.Event.ID, h.Event.Distilled, h.Event.Layer)
		}
	}
}

func TestApplyDistillationValidFrom(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("a", grPub, grT0)
	e2 := f.ev("b", grPub, grT0.Add(3*time.Hour))
	given := grT0.Add(-24 * time.Hour)
	f.distil([]int64{e1, e2},
		grFact("Alice", "visited", "Rome", e2, e1),
		memory.Fact{Subject: "Alice", Predicate: "visited", Object: "Oslo", ValidFrom: given, Sources: []int64{e1}})
	if got := f.triple("Alice visited Rome").ValidFrom; !got.Equal(grT0.Add(3 * time.Hour)) {
		t.Errorf("ValidFrom without a fact time = %v, want the newest source's time", got)
	}
	if got := f.triple("Alice visited Oslo").ValidFrom; !got.Equal(given) {
		t.Errorf("ValidFrom given = %v, want %v", got, given)
	}
	if got := f.triple("Alice visited Oslo").Created; !got.Equal(grT0) {
		t.Errorf("Created = %v, want the clock's %v", got, grT0)
	}
}

func TestSupersede(t *testing.T) {
	t1, t2, t3 := grT0, grT0.Add(time.Hour), grT0.Add(2*time.Hour)
	type step struct {
		s, p, o  string
		at       time.Time
		replaces bool
		pinPrev  bool // pin the triple of the previous step first
		want     memory.DistillResult
	}
	type ended struct {
		text   string
		until  time.Time
		byText string
	}
	tests := []struct {
		name    string
		steps   []step
		current []string
		ended   []ended
	}{
		{
			name: "in order",
			steps: []step{
				{s: "Alice", p: "lives in", o: "London", at: t1, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "lives in", o: "Paris", at: t2, want: memory.DistillResult{Entities: 1, Triples: 1, Superseded: 1}},
			},
			current: []string{"Alice lives in Paris"},
			ended:   []ended{{"Alice lives in London", t2, "Alice lives in Paris"}},
		},
		{
			name: "out of order: the older fact is stored ended",
			steps: []step{
				{s: "Alice", p: "lives in", o: "Paris", at: t2, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "lives in", o: "London", at: t1, want: memory.DistillResult{Entities: 1, Triples: 1}},
			},
			current: []string{"Alice lives in Paris"},
			ended:   []ended{{"Alice lives in London", t2, "Alice lives in Paris"}},
		},
		{
			name: "out of order between two",
			steps: []step{
				{s: "Alice", p: "works at", o: "Acme", at: t1, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "works at", o: "Initech", at: t3, want: memory.DistillResult{Entities: 1, Triples: 1, Superseded: 1}},
				{s: "Alice", p: "works at", o: "Globex", at: t2, want: memory.DistillResult{Entities: 1, Triples: 1}},
			},
			current: []string{"Alice works at Initech"},
			ended: []ended{
				{"Alice works at Acme", t3, "Alice works at Initech"},
				{"Alice works at Globex", t3, "Alice works at Initech"},
			},
		},
		{
			name: "many-valued predicates accumulate",
			steps: []step{
				{s: "Alice", p: "likes", o: "tea", at: t1, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "likes", o: "coffee", at: t2, want: memory.DistillResult{Entities: 1, Triples: 1}},
			},
			current: []string{"Alice likes tea", "Alice likes coffee"},
		},
		{
			name: "Replaces supersedes any predicate",
			steps: []step{
				{s: "Alice", p: "likes", o: "tea", at: t1, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "likes", o: "coffee", at: t2, replaces: true, want: memory.DistillResult{Entities: 1, Triples: 1, Superseded: 1}},
			},
			current: []string{"Alice likes coffee"},
			ended:   []ended{{"Alice likes tea", t2, "Alice likes coffee"}},
		},
		{
			name: "other subjects are untouched",
			steps: []step{
				{s: "Alice", p: "lives in", o: "London", at: t1, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Bob", p: "lives in", o: "Paris", at: t2, want: memory.DistillResult{Entities: 2, Triples: 1}},
			},
			current: []string{"Alice lives in London", "Bob lives in Paris"},
		},
		{
			name: "pinned triples are not superseded by distillation",
			steps: []step{
				{s: "Alice", p: "lives in", o: "London", at: t1, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "lives in", o: "Paris", at: t2, pinPrev: true, want: memory.DistillResult{Entities: 1, Triples: 1}},
			},
			current: []string{"Alice lives in London", "Alice lives in Paris"},
		},
		{
			name: "a newer pinned triple still ends an older fact",
			steps: []step{
				{s: "Alice", p: "lives in", o: "Paris", at: t2, want: memory.DistillResult{Entities: 2, Triples: 1}},
				{s: "Alice", p: "lives in", o: "London", at: t1, pinPrev: true, want: memory.DistillResult{Entities: 1, Triples: 1}},
			},
			current: []string{"Alice lives in Paris"},
			ended:   []ended{{"Alice lives in London", t2, "Alice lives in Paris"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGrFix(t)
			var prev int64
			for i, st := range tt.steps {
				if st.pinPrev {
					if err := f.s.Pin(f.ctx, "triple", prev, true); err != nil {
						t.Fatalf("Pin: %v", err)
					}
				}
				id := f.ev(fmt.Sprint(st.s, " ", st.p, " ", st.o), grPub, st.at)
				got := f.distil([]int64{id}, memory.Fact{Subject: st.s, Predicate: st.p, Object: st.o, Replaces: st.replaces})
				if got != st.want {
					t.Errorf("step %d: result %+v, want %+v", i, got, st.want)
				}
				prev = f.triple(st.s + " " + st.p + " " + st.o).ID
			}
			if got := grTexts(f.triples(memory.TripleQuery{})); !reflect.DeepEqual(got, tt.current) {
				t.Errorf("current triples = %q, want %q", got, tt.current)
			}
			for _, e := range tt.ended {
				tr, by := f.triple(e.text), f.triple(e.byText)
				if tr.Current() || !tr.ValidTo.Equal(e.until) || tr.SupersededBy != by.ID {
					t.Errorf("%s: valid to %v, superseded by %d; want ended at %v by %d (%s)",
						e.text, tr.ValidTo, tr.SupersededBy, e.until, by.ID, e.byText)
				}
				if hits := f.search(memory.OwnerViewer, strings.Fields(tr.ObjectName)...); len(hits) != 0 &&
					slices.Contains(grHitTexts(hits), e.text) {
					t.Errorf("search finds the ended triple %q: %q", e.text, grHitTexts(hits))
				}
			}
			for _, c := range tt.current {
				tr := f.triple(c)
				if !slices.Contains(grHitTexts(f.search(memory.OwnerViewer, strings.ToLower(tr.ObjectName))), c) {
					t.Errorf("search does not find the current triple %q", c)
				}
			}
			all := f.triples(memory.TripleQuery{History: true})
			if len(all) != len(tt.current)+len(tt.ended) {
				t.Errorf("history holds %q, want %d triples", grTexts(all), len(tt.current)+len(tt.ended))
			}
		})
	}
}

func TestScopeNarrowing(t *testing.T) {
	tests := []struct {
		name    string
		sources []memory.Scope
		want    memory.Scope
	}{
		{"public", []memory.Scope{grPub}, grPub},
		{"public twice", []memory.Scope{grPub, grPub}, grPub},
		{"public and group", []memory.Scope{grPub, grA}, grA},
		{"group and public", []memory.Scope{grA, grPub}, grA},
		{"same group", []memory.Scope{grA, grA}, grA},
		{"group and private", []memory.Scope{grA, grPriv}, grPriv},
		{"private and public", []memory.Scope{grPriv, grPub}, grPriv},
		{"two groups", []memory.Scope{grA, grB}, grPriv},
	}
	for _, tt := range tests {
		for _, mode := range []string{"one fact", "confirmed later"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				f := newGrFix(t)
				var ids []int64
				for i, sc := range tt.sources {
					ids = append(ids, f.ev(fmt.Sprint("Alice likes tea ", i), sc, grT0.Add(time.Duration(i)*time.Minute)))
				}
				if mode == "one fact" {
					f.distil(ids, grFact("Alice", "likes", "tea"))
				} else {
					for _, id := range ids {
						f.distil([]int64{id}, grFact("Alice", "likes", "tea"))
					}
				}
				if got := f.triple("Alice likes tea").Scope; got != tt.want {
					t.Errorf("triple scope = %v, want %v", got, tt.want)
				}
				for _, name := range []string{"Alice", "tea"} {
					if got := f.entity(name).Scope; got != tt.want {
						t.Errorf("entity %s scope = %v, want %v", name, got, tt.want)
					}
				}
			})
		}
	}
}

func TestOwnerEntitiesKeepTheirScope(t *testing.T) {
	f := newGrFix(t)
	bob, err := f.s.PutEntity(f.ctx, memory.Entity{Name: "Bob", Kind: "person", Scope: grPub})
	if err != nil {
		t.Fatalf("PutEntity: %v", err)
	}
	id := f.ev("Bob likes tea", grPriv, grT0)
	f.distil([]int64{id}, memory.Fact{Subject: "bob", Predicate: "likes", Object: "tea"})
	if got := f.entity("bob"); got.ID != bob.ID || got.Scope != grPub || got.Origin != "owner" {
		t.Errorf("Bob after distillation from a private event = %+v, want the owner's public entity %d", got, bob.ID)
	}
	if got := f.entity("tea").Scope; got != grPriv {
		t.Errorf("tea scope = %v, want private", got)
	}
}

func TestSearchTriples(t *testing.T) {
	f := newGrFix(t)
	for i, c := range []struct {
		s, p, o string
		sc      memory.Scope
	}{
		{"Alice", "likes", "green tea", grPub},
		{"Bob", "likes", "coffee", grPub},
		{"Carol", "likes", "tea", grA},
		{"Dave", "drinks", "tea", grB},
		{"Erin", "hates", "tea", grPriv},
	} {
		id := f.ev(c.s+" "+c.p+" "+c.o, c.sc, grT0.Add(time.Duration(i)*time.Minute))
		f.distil([]int64{id}, grFact(c.s, c.p, c.o))
	}
	tests := []struct {
		name  string
		terms []string
		v     memory.Viewer
		want  []string // as a set, except want[0] when first is set
		first bool
	}{
		{"owner sees all, best first", []string{"green", "tea"}, memory.OwnerViewer,
			[]string{"Alice likes green tea", "Carol likes tea", "Dave drinks tea", "Erin hates tea"}, true},
		{"group a", []string{"tea"}, memory.Viewer{Group: "a"}, []string{"Alice likes green tea", "Carol likes tea"}, false},
		{"group b", []string{"tea"}, memory.Viewer{Group: "b"}, []string{"Alice likes green tea", "Dave drinks tea"}, false},
		{"public viewer", []string{"tea", "coffee"}, memory.Viewer{}, []string{"Alice likes green tea", "Bob likes coffee"}, false},
		{"group viewer never sees private", []string{"erin", "hates"}, memory.Viewer{Group: "a"}, nil, false},
		{"subject and predicate match", []string{"bob", "likes"}, memory.OwnerViewer,
			[]string{"Bob likes coffee", "Alice likes green tea", "Carol likes tea"}, true},
		{"case and spaces in terms", []string{"GREEN TEA"}, memory.OwnerViewer,
			[]string{"Alice likes green tea", "Carol likes tea", "Dave drinks tea", "Erin hates tea"}, true},
		{"FTS5 syntax is literal", []string{`"tea`, "AND", "tea*", "NEAR(", "-"}, memory.OwnerViewer, nil, false},
		{"no terms", nil, memory.OwnerViewer, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := f.s.SearchTriples(f.ctx, tt.terms, tt.v, 0)
			if err != nil {
				t.Fatalf("SearchTriples(%q): %v", tt.terms, err)
			}
			got := grHitTexts(hits)
			if tt.first && (len(got) == 0 || got[0] != tt.want[0]) {
				t.Errorf("first hit of %q = %q, want %q", tt.terms, got, tt.want[0])
			}
			if !sameSet(got, tt.want) {
				t.Errorf("hits of %q = %q, want %q", tt.terms, got, tt.want)
			}
			for i, h := range hits {
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hit %d scores %v above hit %d (%v): not best first", i, h.Score, i-1, hits[i-1].Score)
				}
				if h.Score <= 0 || len(h.Triple.Sources) != 1 || !tt.v.CanSee(h.Triple.Scope) {
					t.Errorf("hit %+v: want a positive score, one source, a scope the viewer sees", h)
				}
			}
		})
	}
	if hits, err := f.s.SearchTriples(f.ctx, []string{"tea"}, memory.OwnerViewer, 2); err != nil || len(hits) != 2 {
		t.Errorf("SearchTriples limit 2: %d hits, %v", len(hits), err)
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestGraphPagingAndFilters(t *testing.T) {
	f := newGrFix(t)
	const n = 25
	for i := range n {
		sc := grPub
		if i%5 == 0 {
			sc = grA
		}
		f.clock.set(grT0.Add(time.Duration(i) * time.Minute))
		if _, err := f.s.AddTriple(f.ctx, memory.Fact{Subject: fmt.Sprint("Person ", i), SubjectKind: "person",
			Predicate: "owns", Object: fmt.Sprint("Thing ", i)}, "import", sc); err != nil {
			t.Fatalf("AddTriple: %v", err)
		}
	}
	for _, limit := range []int{1, 7, 10, 50} {
		var ents []int64
		for after := int64(0); ; {
			page := f.entities(memory.EntityQuery{After: after, Limit: limit})
			if len(page) == 0 {
				break
			}
			if len(page) > limit {
				t.Fatalf("entity page of %d with limit %d", len(page), limit)
			}
			for _, e := range page {
				ents = append(ents, e.ID)
			}
			after = page[len(page)-1].ID
		}
		if len(ents) != 2*n || !slices.IsSorted(ents) || len(slices.Compact(slices.Clone(ents))) != 2*n {
			t.Errorf("limit %d: paged entities %v, want %d distinct in id order", limit, ents, 2*n)
		}
		var trs []int64
		for after := int64(0); ; {
			page := f.triples(memory.TripleQuery{After: after, Limit: limit})
			if len(page) == 0 {
				break
			}
			for _, tr := range page {
				trs = append(trs, tr.ID)
			}
			after = page[len(page)-1].ID
		}
		if len(trs) != n || !slices.IsSorted(trs) {
			t.Errorf("limit %d: paged triples %v, want %d in id order", limit, trs, n)
		}
	}
	count := func(name string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
	person3 := f.entity("person 3")
	count("default limit", len(f.entities(memory.EntityQuery{})), 2*n)
	count("limit above the maximum", len(f.entities(memory.EntityQuery{Limit: 1 << 30})), 2*n)
	count("kind", len(f.entities(memory.EntityQuery{Kind: "Person"})), n)
	count("scope", len(f.entities(memory.EntityQuery{Scope: &grA})), 10)
	count("group viewer", len(f.entities(memory.EntityQuery{Viewer: memory.Viewer{Group: "a"}})), 2*n)
	pub, err := f.s.Entities(f.ctx, memory.EntityQuery{Viewer: memory.Viewer{}})
	if err != nil {
		t.Fatal(err)
	}
	count("public viewer (store)", len(pub), 40)
	count("text in name", len(f.entities(memory.EntityQuery{Text: "ING 1"})), 11) // Thing 1, Thing 10…19
	count("triple scope", len(f.triples(memory.TripleQuery{Scope: &grA})), 5)
	count("triple entity", len(f.triples(memory.TripleQuery{Entity: person3.ID})), 1)
	count("triple since", len(f.triples(memory.TripleQuery{Since: grT0.Add(20 * time.Minute)})), 5)
	count("triple limit above the maximum", len(f.triples(memory.TripleQuery{Limit: 1 << 30})), n)
	gv, err := f.s.Triples(f.ctx, memory.TripleQuery{Viewer: memory.Viewer{Group: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	count("triples a group b viewer sees", len(gv), 20)
}

func TestEntityTextFilterFoldsUnicode(t *testing.T) {
	f := newGrFix(t)
	for _, e := range []memory.Entity{
		{Name: "school", Text: "L'ÉCOLE du quartier", Scope: grPub},
		{Name: "Élodie", Kind: "person", Scope: grPub},
		{Name: "secret", Text: "école secrète", Scope: grPub},
		{Name: "other", Text: "nothing", Scope: grPub},
	} {
		if _, err := f.s.PutEntity(f.ctx, e); err != nil {
			t.Fatalf("PutEntity: %v", err)
		}
	}
	// The secret's text block is made private: a public viewer must not match on it.
	db := rawDB(t, f.path, "&_foreign_keys=on")
	if _, err := db.Exec(`UPDATE blocks SET scope_kind = 0 WHERE holder_entity = ?`, f.entity("secret").ID); err != nil {
		t.Fatal(err)
	}
	names := func(v memory.Viewer, text string) []string {
		es, err := f.s.Entities(f.ctx, memory.EntityQuery{Viewer: v, Text: text})
		if err != nil {
			t.Fatalf("Entities: %v", err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	if got := names(memory.OwnerViewer, "école"); !reflect.DeepEqual(got, []string{"school", "secret"}) {
		t.Errorf("owner, text école: %q", got)
	}
	if got := names(memory.Viewer{}, "école"); !reflect.DeepEqual(got, []string{"school"}) {
		t.Errorf("public viewer, text école: %q (a private text must not match)", got)
	}
	if got := names(memory.OwnerViewer, "ÉLO"); !reflect.DeepEqual(got, []string{"Élodie"}) {
		t.Errorf("owner, text ÉLO: %q", got)
	}
	es, err := f.s.Entities(f.ctx, memory.EntityQuery{Viewer: memory.Viewer{}, Name: "secret"})
	if err != nil || len(es) != 1 || es[0].Text != "" {
		t.Errorf("public viewer reads the secret: %+v, %v; want its private text left out", es, err)
	}
}

func TestPutEntity(t *testing.T) {
	f := newGrFix(t)
	marie, err := f.s.PutEntity(f.ctx, memory.Entity{Name: " Marie   Curie ", Kind: "Person", Text: "Physicist", Scope: grPub})
	if err != nil {
		t.Fatalf("PutEntity: %v", err)
	}
	if marie.ID == 0 || marie.Name != "Marie Curie" || marie.Kind != "person" || marie.Origin != "owner" ||
		marie.Text != "Physicist" || marie.BlockID == "" || marie.Scope != grPub || !marie.Created.Equal(grT0) {
		t.Fatalf("created %+v", marie)
	}
	b, err := f.s.Block(f.ctx, marie.BlockID)
	if err != nil || b.Kind != memory.BlockText || b.Text != "Physicist" || b.Scope != grPub ||
		b.Holder != (memory.BlockHolder{Layer: memory.LayerL3, Entity: marie.ID}) {
		t.Fatalf("text block %+v, %v", b, err)
	}
	if _, err := f.s.AddTriple(f.ctx, grFact("Marie Curie", "discovered", "radium"), "owner", grPub); err != nil {
		t.Fatalf("AddTriple: %v", err)
	}
	pierre, err := f.s.PutEntity(f.ctx, memory.Entity{Name: "Pierre", Kind: "person"})
	if err != nil {
		t.Fatalf("PutEntity: %v", err)
	}

	tests := []struct {
		name string
		e    memory.Entity
		err  error
	}{
		{"duplicate name and kind", memory.Entity{Name: "marie curie", Kind: "PERSON"}, memory.ErrExists},
		{"rename onto another", memory.Entity{ID: pierre.ID, Name: "Marie Curie", Kind: "person"}, memory.ErrExists},
		{"unknown id", memory.Entity{ID: 999, Name: "x"}, memory.ErrNotFound},
		{"empty name", memory.Entity{Name: " "}, memory.ErrInvalid},
		{"bad scope", memory.Entity{Name: "x", Scope: memory.Scope{Kind: memory.ScopeGroup}}, memory.ErrInvalid},
		{"bad origin", memory.Entity{Name: "x", Origin: "martian"}, memory.ErrInvalid},
	}
	for _, tt := range tests {
		if _, err := f.s.PutEntity(f.ctx, tt.e); !errors.Is(err, tt.err) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.err)
		}
	}

	f.clock.set(grT0.Add(time.Hour))
	marie.Text, marie.Name, marie.Scope = "Chemist", "Maria Skłodowska", grA
	got, err := f.s.PutEntity(f.ctx, marie)
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	if got.BlockID != marie.BlockID || got.Text != "Chemist" || got.Name != "Maria Skłodowska" || got.Scope != grA ||
		!got.Updated.Equal(grT0.Add(time.Hour)) || !got.Created.Equal(grT0) || got.Origin != "owner" {
		t.Errorf("edited %+v", got)
	}
	if b, err := f.s.Block(f.ctx, marie.BlockID); err != nil || b.Text != "Chemist" || b.Scope != grA {
		t.Errorf("edited text block %+v, %v", b, err)
	}
	if got := grHitTexts(f.search(memory.OwnerViewer, "skłodowska")); !reflect.DeepEqual(got, []string{"Maria Skłodowska discovered radium"}) {
		t.Errorf("search by the new name: %q", got)
	}
	if got := f.search(memory.OwnerViewer, "marie"); len(got) != 0 {
		t.Errorf("search by the old name: %q", grHitTexts(got))
	}

	marie.Text = "  "
	if got, err = f.s.PutEntity(f.ctx, marie); err != nil || got.BlockID != "" || got.Text != "" {
		t.Fatalf("clearing the text: %+v, %v", got, err)
	}
	if _, err := f.s.Block(f.ctx, marie.BlockID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("text block after clearing: %v, want ErrNotFound", err)
	}
	marie.Text = "Nobel prize twice"
	if got, err = f.s.PutEntity(f.ctx, marie); err != nil || got.BlockID == "" || got.BlockID == marie.BlockID || got.Text != marie.Text {
		t.Errorf("new text: %+v, %v", got, err)
	}
	if ts := f.triples(memory.TripleQuery{Entity: marie.ID}); len(ts) != 1 {
		t.Errorf("triples after edits: %+v, want the one kept", ts)
	}
}

func TestAddEditPin(t *testing.T) {
	f := newGrFix(t)
	added, err := f.s.AddTriple(f.ctx, grFact("Alice", "lives in", "London"), "", grPub)
	if err != nil {
		t.Fatalf("AddTriple: %v", err)
	}
	if added.Origin != "owner" || added.Sources != nil || added.Scope != grPub || !added.ValidFrom.Equal(grT0) || !added.Current() {
		t.Errorf("added %+v", added)
	}
	if again, err := f.s.AddTriple(f.ctx, grFact("alice", "Lives_In", "london"), "import", grPub); err != nil || again.ID != added.ID {
		t.Errorf("adding it again: %+v, %v; want triple %d", again, err, added.ID)
	}
	for _, c := range []struct {
		name   string
		f      memory.Fact
		origin string
		sc     memory.Scope
	}{
		{"llm origin", grFact("a", "b", "c"), "llm", grPub},
		{"bad scope", grFact("a", "b", "c"), "owner", memory.Scope{Kind: 7}},
		{"empty predicate", grFact("a", "", "c"), "owner", grPub},
	} {
		if _, err := f.s.AddTriple(f.ctx, c.f, c.origin, c.sc); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("AddTriple %s: %v, want ErrInvalid", c.name, err)
		}
	}

	// A distilled triple with sources, pinned, then corrected by the owner.
	e1 := f.ev("Bob works at Acme", grA, grT0)
	e2 := f.ev("Bob at Acme", grA, grT0.Add(time.Minute))
	f.distil([]int64{e1, e2}, grFact("Bob", "works at", "Acme"))
	old := f.triple("Bob works at Acme")
	if err := f.s.Pin(f.ctx, "triple", old.ID, true); err != nil {
		t.Fatalf("Pin: %v", err)
	}
	f.clock.set(grT0.Add(time.Hour))
	edited, err := f.s.EditTriple(f.ctx, old.ID, grFact("Bob", "works at", "Acme Corp"))
	if err != nil {
		t.Fatalf("EditTriple: %v", err)
	}
	if grText(edited) != "Bob works at Acme Corp" || !reflect.DeepEqual(edited.Sources, []int64{e1, e2}) || edited.Scope != grA ||
		!edited.Pinned || edited.Origin != "owner" || !edited.ValidFrom.Equal(old.ValidFrom) || !edited.Current() {
		t.Errorf("edited %+v", edited)
	}
	old = f.triple("Bob works at Acme")
	if old.Current() || old.SupersededBy != edited.ID || !old.ValidTo.Equal(grT0.Add(time.Hour)) {
		t.Errorf("old after edit %+v, want superseded by %d at the clock's time", old, edited.ID)
	}
	if got := grHitTexts(f.search(memory.OwnerViewer, "acme")); !reflect.DeepEqual(got, []string{"Bob works at Acme Corp"}) {
		t.Errorf("search after edit: %q", got)
	}
	if _, err := f.s.EditTriple(f.ctx, old.ID, grFact("Bob", "works at", "X")); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("editing a superseded triple: %v, want ErrInvalid", err)
	}
	if _, err := f.s.EditTriple(f.ctx, 999, grFact("Bob", "works at", "X")); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("editing an unknown triple: %v, want ErrNotFound", err)
	}

	// Editing onto an existing current triple joins it.
	f.distil([]int64{f.ev("Carol likes tea", grPub, grT0)}, grFact("Carol", "likes", "tea"))
	e3 := f.ev("Carol likes tee", grPub, grT0)
	f.distil([]int64{e3}, grFact("Carol", "likes", "tee"))
	typo := f.triple("Carol likes tee")
	joined, err := f.s.EditTriple(f.ctx, typo.ID, grFact("Carol", "likes", "tea"))
	if err != nil {
		t.Fatalf("EditTriple onto an existing triple: %v", err)
	}
	if joined.ID != f.triple("Carol likes tea").ID || len(joined.Sources) != 2 || !slices.Contains(joined.Sources, e3) {
		t.Errorf("joined %+v, want the existing triple with both sources", joined)
	}
	if got := f.triple("Carol likes tee"); got.SupersededBy != joined.ID {
		t.Errorf("typo %+v, want superseded by %d", got, joined.ID)
	}

	// Pins.
	alice := f.entity("alice")
	if err := f.s.Pin(f.ctx, "entity", alice.ID, true); err != nil || !f.entity("alice").Pinned {
		t.Errorf("pin entity: %v", err)
	}
	if err := f.s.Pin(f.ctx, "entity", alice.ID, false); err != nil || f.entity("alice").Pinned {
		t.Errorf("unpin entity: %v", err)
	}
	for _, c := range []struct {
		kind string
		id   int64
		err  error
	}{
		{"triple", 999, memory.ErrNotFound},
		{"entity", 999, memory.ErrNotFound},
		{"block", alice.ID, memory.ErrInvalid},
	} {
		if err := f.s.Pin(f.ctx, c.kind, c.id, true); !errors.Is(err, c.err) {
			t.Errorf("Pin(%s, %d): %v, want %v", c.kind, c.id, err, c.err)
		}
	}
}

func TestMergeEntities(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("Bob likes tea", grPub, grT0)
	e2 := f.ev("Robert likes tea", grA, grT0.Add(time.Minute))
	e3 := f.ev("Robert lives in Paris", grPub, grT0.Add(2*time.Minute))
	f.distil([]int64{e1}, grFact("Bob", "likes", "tea"))
	f.distil([]int64{e2}, grFact("Robert", "likes", "tea"))
	f.distil([]int64{e3}, grFact("Robert", "lives in", "Paris"), grFact("Paris", "is home of", "Robert"))
	bob, robert := f.entity("bob"), f.entity("robert")
	robert.Text = "goes by Bob"
	robert, err := f.s.PutEntity(f.ctx, robert)
	if err != nil {
		t.Fatalf("PutEntity: %v", err)
	}
	if err := f.s.Pin(f.ctx, "entity", robert.ID, true); err != nil {
		t.Fatal(err)
	}

	merged, err := f.s.MergeEntities(f.ctx, bob.ID, robert.ID)
	if err != nil {
		t.Fatalf("MergeEntities: %v", err)
	}
	if merged.ID != bob.ID || merged.Name != "Bob" || merged.BlockID != robert.BlockID || merged.Text != "goes by Bob" ||
		merged.Scope != grA || !merged.Pinned || merged.Mentions != 3 {
		t.Errorf("merged %+v", merged)
	}
	if _, err := f.s.Entity(f.ctx, robert.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Entity(from) after merge: %v, want ErrNotFound", err)
	}
	got := grTexts(f.triples(memory.TripleQuery{History: true}))
	if !sameSet(got, []string{"Bob likes tea", "Bob lives in Paris", "Paris is home of Bob"}) {
		t.Errorf("triples after merge: %q", got)
	}
	tea := f.triple("Bob likes tea")
	if !reflect.DeepEqual(tea.Sources, []int64{e1, e2}) || tea.Scope != grA || !tea.ValidFrom.Equal(grT0) {
		t.Errorf("merged duplicate %+v, want sources of both, the narrowest scope, the earliest start", tea)
	}
	if b, err := f.s.Block(f.ctx, robert.BlockID); err != nil || b.Holder.Entity != bob.ID {
		t.Errorf("text block after merge: %+v, %v; want held by %d", b, err, bob.ID)
	}
	if hits := f.search(memory.OwnerViewer, "robert"); len(hits) != 0 {
		t.Errorf("search finds the old name: %q", grHitTexts(hits))
	}
	if got := grHitTexts(f.search(memory.OwnerViewer, "bob")); len(got) != 3 {
		t.Errorf("search bob: %q, want 3 hits", got)
	}
	if _, err := f.s.MergeEntities(f.ctx, bob.ID, bob.ID); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("merge into itself: %v, want ErrInvalid", err)
	}
	if _, err := f.s.MergeEntities(f.ctx, bob.ID, robert.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("merge of a deleted entity: %v, want ErrNotFound", err)
	}
	grIntegrity(t, f.path)
}

func TestDeleteEntity(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("Alice lives in Rome then Oslo", grPub, grT0)
	f.distil([]int64{e1}, grFact("Alice", "lives in", "Rome"))
	e2 := f.ev("Oslo", grPub, grT0.Add(time.Hour))
	f.distil([]int64{e2}, grFact("Alice", "lives in", "Oslo"), grFact("Bob", "likes", "Oslo"))
	alice := f.entity("alice")
	alice.Text = "a friend"
	alice, err := f.s.PutEntity(f.ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteEntity(f.ctx, alice.ID); err != nil {
		t.Fatalf("DeleteEntity: %v", err)
	}
	if got := grTexts(f.triples(memory.TripleQuery{History: true})); !reflect.DeepEqual(got, []string{"Bob likes Oslo"}) {
		t.Errorf("triples after delete: %q", got)
	}
	if got := grHitTexts(f.search(memory.OwnerViewer, "oslo", "rome", "alice")); !reflect.DeepEqual(got, []string{"Bob likes Oslo"}) {
		t.Errorf("search after delete: %q", got)
	}
	if _, err := f.s.Block(f.ctx, alice.BlockID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("text block after delete: %v, want ErrNotFound", err)
	}
	if err := f.s.DeleteEntity(f.ctx, alice.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	if hits, _ := f.s.Events(f.ctx, []int64{e1, e2}); len(hits) != 2 {
		t.Errorf("events after deleting an entity: %d, want both kept", len(hits))
	}
	grIntegrity(t, f.path)
}

func TestRecalled(t *testing.T) {
	f := newGrFix(t)
	a, err := f.s.PutEntity(f.ctx, memory.Entity{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.LastRecalled.IsZero() {
		t.Errorf("new entity recalled at %v", a.LastRecalled)
	}
	t2 := grT0.Add(2 * time.Hour)
	for _, at := range []time.Time{t2, grT0.Add(time.Hour)} { // an earlier time never goes back
		if err := f.s.Recalled(f.ctx, []int64{a.ID, 999}, at); err != nil {
			t.Fatalf("Recalled: %v", err)
		}
	}
	if got, err := f.s.Entity(f.ctx, a.ID); err != nil || !got.LastRecalled.Equal(t2) {
		t.Errorf("LastRecalled = %v, %v; want %v", got.LastRecalled, err, t2)
	}
}

func TestColdEvents(t *testing.T) {
	f := newGrFix(t)
	now := grT0.Add(100 * time.Hour)
	idle := now.Add(-72 * time.Hour) // grT0 + 28h
	mk := func(content string, layer memory.Layer, at time.Time, accesses int, last time.Time, blocks ...memory.Block) int64 {
		return f.event(memory.Event{Content: content, Layer: layer, Time: at, Accesses: accesses, LastAccess: last, Blocks: blocks}).ID
	}
	a := mk("a", memory.LayerL2, grT0.Add(time.Hour), 0, time.Time{}, memory.Block{Kind: memory.BlockText, Name: "note", Text: "hello"})
	b := mk("b: accessed too often", memory.LayerL2, grT0, 3, grT0.Add(time.Hour))
	c := mk("c: accessed lately", memory.LayerL2, grT0, 1, idle.Add(time.Minute))
	mk("d: in L1", memory.LayerL1, grT0, 0, time.Time{})
	e := mk("e: distilled", memory.LayerL2, grT0, 0, time.Time{})
	f.distil([]int64{e})
	g := mk("g: oldest", memory.LayerL2, grT0.Add(-time.Hour), 2, grT0.Add(-30*time.Minute))
	h := mk("h: new", memory.LayerL2, idle.Add(time.Second), 0, time.Time{})
	tests := []struct {
		name string
		q    memory.ColdQuery
		want []int64
	}{
		{"at most 2 accesses, 72 h idle", memory.ColdQuery{MaxAccesses: 2, IdleBefore: idle}, []int64{g, a}},
		{"limit", memory.ColdQuery{MaxAccesses: 2, IdleBefore: idle, Limit: 1}, []int64{g}},
		{"never accessed only", memory.ColdQuery{MaxAccesses: 0, IdleBefore: idle}, []int64{a}},
		{"any access count", memory.ColdQuery{MaxAccesses: 10, IdleBefore: idle}, []int64{g, b, a}},
		{"later idle bound", memory.ColdQuery{MaxAccesses: 10, IdleBefore: now}, []int64{g, b, c, a, h}},
		{"earlier idle bound", memory.ColdQuery{MaxAccesses: 10, IdleBefore: grT0.Add(30 * time.Minute)}, []int64{g}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := f.s.ColdEvents(f.ctx, tt.q)
			if err != nil {
				t.Fatalf("ColdEvents: %v", err)
			}
			var got []int64
			for _, e := range evs {
				got = append(got, e.ID)
				if e.Layer != memory.LayerL2 || e.Distilled {
					t.Errorf("cold event %+v", e)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("cold events = %v, want %v", got, tt.want)
			}
		})
	}
	evs, err := f.s.ColdEvents(f.ctx, memory.ColdQuery{IdleBefore: idle})
	if err != nil || len(evs) != 1 || len(evs[0].Blocks) != 1 || evs[0].Blocks[0].Text != "hello" {
		t.Errorf("cold event with a block: %+v, %v", evs, err)
	}
	if _, err := f.s.ColdEvents(f.ctx, memory.ColdQuery{MaxAccesses: 2}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("ColdEvents without IdleBefore: %v, want ErrInvalid", err)
	}
}

func TestAdoption(t *testing.T) {
	f := newGrFix(t)
	e1 := f.event(memory.Event{Content: "my grandma's cake", Scope: grA, Time: grT0, Blocks: []memory.Block{
		{Kind: memory.BlockText, Name: "Grandma's cake", Text: "flour, eggs, love"},
		{Kind: memory.BlockImage, Name: "cake.png", MIME: "image/png", Data: []byte("png")},
	}})
	e2 := f.event(memory.Event{Content: "another", Scope: grPub, Time: grT0, Blocks: []memory.Block{{Kind: memory.BlockText, Text: "other"}}})
	// Fill the tail cache: the adoption must not leave it stale.
	if _, err := f.s.History(f.ctx, "chat", 10); err != nil {
		t.Fatal(err)
	}
	text, img, other := e1.Blocks[0].ID, e1.Blocks[1].ID, e2.Blocks[0].ID
	res := f.apply(memory.Distillation{
		Events: []int64{e1.ID},
		Facts:  []memory.Fact{grFact("owner", "bakes", "Grandma's cake", e1.ID)},
		Adopt: []memory.Adoption{
			{Block: text, Entity: "grandma's CAKE"},
			{Block: img, Entity: "Grandma's cake"},
			{Block: other, Entity: "Grandma's cake"}, // held by an event outside the batch
			{Block: "nope", Entity: "Grandma's cake"},
		},
		Origin: "llm",
	})
	if res != (memory.DistillResult{Entities: 2, Triples: 1, Adopted: 2}) {
		t.Errorf("result %+v", res)
	}
	cake := f.entity("grandma's cake")
	if cake.BlockID != text || cake.Text != "flour, eggs, love" || cake.Scope != grA {
		t.Errorf("entity %+v, want the text block %s as its text, group a", cake, text)
	}
	held, err := f.s.Blocks(f.ctx, memory.BlockHolder{Layer: memory.LayerL3, Entity: cake.ID})
	if err != nil || len(held) != 2 {
		t.Errorf("blocks held by the entity: %+v, %v; want 2", held, err)
	}
	if b, err := f.s.Block(f.ctx, other); err != nil || b.Holder != (memory.BlockHolder{Layer: memory.LayerL2, Event: e2.ID}) {
		t.Errorf("block of another event: %+v, %v; want it left where it was", b, err)
	}
	hist, err := f.s.History(f.ctx, "chat", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist {
		if e.ID == e1.ID {
			if !e.Distilled || len(e.Blocks) != 2 || e.Blocks[0].Holder.Layer != memory.LayerL3 || e.Blocks[0].Holder.Entity != cake.ID {
				t.Errorf("history after adoption: %+v; want distilled, referencing both blocks, now in L3", e)
			}
		}
	}
	// A rerun adopts nothing more and creates nothing.
	if res := f.apply(memory.Distillation{Events: []int64{e1.ID}, Adopt: []memory.Adoption{{Block: text, Entity: "x"}}}); res != (memory.DistillResult{Skipped: 1}) {
		t.Errorf("rerun: %+v", res)
	}
}

func TestGraphConcurrentDistillationAndReads(t *testing.T) {
	f := newGrFix(t)
	const workers, per = 4, 10
	ids := make([][]int64, workers)
	for w := range workers {
		for i := range per {
			ids[w] = append(ids[w], f.ev(fmt.Sprint("w", w, " i", i), grPub, grT0))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for _, id := range ids[w] {
				// Every worker states the same facts: the graph must not duplicate them.
				d := memory.Distillation{Events: []int64{id}, Facts: []memory.Fact{
					grFact("Alice", "likes", "tea", id), grFact(fmt.Sprint("Person ", w), "knows", "Alice", id)}}
				if _, err := f.s.ApplyDistillation(f.ctx, d); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range per {
				if _, err := f.s.SearchTriples(f.ctx, []string{"alice", "tea"}, memory.Viewer{Group: "a"}, 10); err != nil {
					errs <- err
					return
				}
				if _, err := f.s.Entities(f.ctx, memory.EntityQuery{Viewer: memory.OwnerViewer}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ts := f.triples(memory.TripleQuery{History: true})
	if len(ts) != 1+workers {
		t.Fatalf("triples %q, want %d", grTexts(ts), 1+workers)
	}
	if tea := f.triple("Alice likes tea"); len(tea.Sources) != workers*per {
		t.Errorf("Alice likes tea has %d sources, want %d", len(tea.Sources), workers*per)
	}
}

// grBenchGraph fills a store with n L2 events and a graph distilled from them: per event one
// fact between two of 2,000 people and 1,000 things, in batches of 100 events.
func grBenchGraph(b *testing.B, n int) (*sqlite.Store, *corpus) {
	b.Helper()
	ctx := context.Background()
	s := openAt(b, filepath.Join(b.TempDir(), "memory.db"))
	c := newCorpus(1)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "chat"}); err != nil {
		b.Fatal(err)
	}
	preds := []string{"likes", "knows", "visited", "lives in", "works at", "owns"}
	for done := 0; done < n; done += 100 {
		evs := make([]memory.Event, min(100, n-done))
		for i := range evs {
			evs[i] = memory.Event{Session: "chat", Role: memory.RoleUser, Content: c.text(), Layer: memory.LayerL2,
				Scope: memory.Scope{Kind: memory.ScopeKind(c.rng.IntN(3)), Group: ""}}
			if evs[i].Scope.Kind == memory.ScopeGroup {
				evs[i].Scope.Group = "g1"
			}
		}
		stored, err := s.AppendEvents(ctx, evs)
		if err != nil {
			b.Fatal(err)
		}
		d := memory.Distillation{Origin: "rules"}
		for _, e := range stored {
			d.Events = append(d.Events, e.ID)
			d.Facts = append(d.Facts, memory.Fact{
				Subject: fmt.Sprint("person ", c.rng.IntN(2000)), SubjectKind: "person",
				Predicate: preds[c.rng.IntN(len(preds))],
				Object:    c.words[c.rng.IntN(1000)], Sources: []int64{e.ID}})
		}
		if _, err := s.ApplyDistillation(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	return s, c
}

// BenchmarkSearchTriples10k: two terms over the triples distilled from 10,000 events, as a
// group viewer.
func BenchmarkSearchTriples10k(b *testing.B) {
	s, c := grBenchGraph(b, 10_000)
	ctx := context.Background()
	v := memory.Viewer{Group: "g1"}
	for b.Loop() {
		terms := []string{fmt.Sprint(c.rng.IntN(2000)), c.words[c.rng.IntN(1000)]}
		if _, err := s.SearchTriples(ctx, terms, v, 10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyDistillation: one batch of 20 events and 40 facts (about half of them new)
// applied to a graph distilled from 10,000 events.
func BenchmarkApplyDistillation(b *testing.B) {
	s, c := grBenchGraph(b, 10_000)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		evs := make([]memory.Event, 20)
		for i := range evs {
			evs[i] = memory.Event{Session: "chat", Role: memory.RoleUser, Content: c.text(), Layer: memory.LayerL2}
		}
		stored, err := s.AppendEvents(ctx, evs)
		if err != nil {
			b.Fatal(err)
		}
		d := memory.Distillation{Origin: "llm"}
		for _, e := range stored {
			d.Events = append(d.Events, e.ID)
			for range 2 {
				d.Facts = append(d.Facts, memory.Fact{Subject: fmt.Sprint("person ", c.rng.IntN(2000)),
					Predicate: "likes", Object: c.words[c.rng.IntN(1000)], Sources: []int64{e.ID}})
			}
		}
		b.StartTimer()
		if _, err := s.ApplyDistillation(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
}
