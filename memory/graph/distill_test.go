package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

var _ memory.Graph = (*sqlite.Store)(nil)

// t0 is when the test conversations happen; distillation runs 100 h later unless a test says
// otherwise.
var t0 = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

var (
	private = memory.Scope{}
	public  = memory.Scope{Kind: memory.ScopePublic}
	groupA  = memory.Scope{Kind: memory.ScopeGroup, Group: "a"}
	groupB  = memory.Scope{Kind: memory.ScopeGroup, Group: "b"}
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// fixture is a real SQLite store in a temporary directory with a settable clock.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	s     *sqlite.Store
	clock *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), clock: &clock{t: t0}}
	s, err := sqlite.Open(f.ctx, filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{Clock: f.clock.now})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
	return f
}

// session creates a session with a scope.
func (f *fixture) session(id string, sc memory.Scope) {
	f.t.Helper()
	if _, err := f.s.CreateSession(f.ctx, memory.Session{ID: id, Scope: sc}); err != nil {
		f.t.Fatalf("create session %s: %v", id, err)
	}
}

// cold appends events in L2 (the scope is the session's) and returns them with their ids.
func (f *fixture) cold(evs ...memory.Event) []memory.Event {
	f.t.Helper()
	for i := range evs {
		sess, err := f.s.GetSession(f.ctx, evs[i].Session)
		if err != nil {
			f.t.Fatalf("session of event %d: %v", i, err)
		}
		evs[i].Scope = sess.Scope
		if evs[i].Role == "" {
			evs[i].Role = memory.RoleUser
		}
	}
	out, err := f.s.AppendEvents(f.ctx, evs)
	if err != nil {
		f.t.Fatalf("append events: %v", err)
	}
	if err := f.s.SetLayer(f.ctx, eventIDs(out), memory.LayerL2); err != nil {
		f.t.Fatalf("set layer: %v", err)
	}
	return out
}

func eventIDs(evs []memory.Event) []int64 {
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

// event reads one event back.
func (f *fixture) event(id int64) memory.Event {
	f.t.Helper()
	hits, err := f.s.Events(f.ctx, []int64{id})
	if err != nil || len(hits) != 1 {
		f.t.Fatalf("event %d: %v (%d found)", id, err, len(hits))
	}
	return hits[0].Event
}

// triples renders every triple (history included) as "subject -predicate-> object [sources]
// scope origin", sorted.
func (f *fixture) triples() []string {
	f.t.Helper()
	ts, err := f.s.Triples(f.ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, History: true, Limit: 10000})
	if err != nil {
		f.t.Fatalf("triples: %v", err)
	}
	out := make([]string, len(ts))
	for i, tr := range ts {
		out[i] = fmt.Sprintf("%s -%s-> %s %v %s %s current=%v", tr.SubjectName, tr.Predicate, tr.ObjectName,
			tr.Sources, tr.Scope, tr.Origin, tr.Current())
	}
	slices.Sort(out)
	return out
}

func (f *fixture) distiller(o Options) *Distiller {
	f.t.Helper()
	o.Graph = f.s
	if o.Clock == nil {
		o.Clock = f.clock.now
	}
	d, err := NewDistiller(o)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func TestNewDistillerNeedsGraph(t *testing.T) {
	if _, err := NewDistiller(Options{}); err == nil {
		t.Fatal("NewDistiller without a graph succeeded")
	}
}

func TestDistillSelectsColdEvents(t *testing.T) {
	f := newFixture(t)
	f.session("chat", private)
	now := t0.Add(100 * time.Hour) // idle since t0+28h is enough
	tests := []struct {
		name     string
		at       time.Time   // event time
		l1       bool        // left in L1
		touches  []time.Time // accesses
		distills bool
	}{
		{name: "cold", at: t0, distills: true},
		{name: "in L1", at: t0, l1: true},
		{name: "two accesses", at: t0, touches: []time.Time{t0.Add(time.Hour), t0.Add(2 * time.Hour)}, distills: true},
		{name: "three accesses", at: t0, touches: []time.Time{t0.Add(time.Hour), t0.Add(2 * time.Hour), t0.Add(3 * time.Hour)}},
		{name: "created 71 h ago", at: now.Add(-71 * time.Hour)},
		{name: "created 73 h ago", at: now.Add(-73 * time.Hour), distills: true},
		{name: "accessed 10 h ago", at: t0, touches: []time.Time{now.Add(-10 * time.Hour)}},
	}
	ids := make([]int64, len(tests))
	for i, tt := range tests {
		ev := f.cold(memory.Event{Session: "chat", Partner: "Ann", Time: tt.at,
			Content: fmt.Sprintf("I like topic%d.", i)})[0]
		ids[i] = ev.ID
		if tt.l1 {
			if err := f.s.SetLayer(f.ctx, []int64{ev.ID}, memory.LayerL1); err != nil {
				t.Fatal(err)
			}
		}
		for _, at := range tt.touches {
			if err := f.s.Touch(f.ctx, []int64{ev.ID}, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.clock.set(now)
	d := f.distiller(Options{})
	rep, err := d.Run(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i, tt := range tests {
		ev := f.event(ids[i])
		if ev.Distilled != tt.distills {
			t.Errorf("%s: distilled %v, want %v", tt.name, ev.Distilled, tt.distills)
		}
		if wantL := map[bool]memory.Layer{true: memory.LayerL1, false: memory.LayerL2}[tt.l1]; ev.Layer != wantL {
			t.Errorf("%s: layer %d, want %d (distillation never moves an event)", tt.name, ev.Layer, wantL)
		}
		if tt.distills {
			want++
			if trs := f.triplesOf(ids[i]); len(trs) != 1 {
				t.Errorf("%s: %d triples from it, want 1", tt.name, len(trs))
			}
		} else if trs := f.triplesOf(ids[i]); len(trs) != 0 {
			t.Errorf("%s: triples %v from an event not distilled", tt.name, trs)
		}
	}
	if rep.Events != want || rep.Triples != want || rep.Batches != 1 || rep.Extractor != "rules" {
		t.Errorf("report %+v, want %d events and triples in 1 batch by rules", rep, want)
	}

	// A rerun finds nothing; so does a later one (the rest is still not cold enough or in L1).
	again, err := d.Run(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if again != (Report{Extractor: "rules"}) {
		t.Errorf("rerun report %+v, want nothing done", again)
	}
}

// triplesOf returns the triples citing event id.
func (f *fixture) triplesOf(id int64) []memory.Triple {
	f.t.Helper()
	ts, err := f.s.Triples(f.ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, History: true, Limit: 10000})
	if err != nil {
		f.t.Fatal(err)
	}
	return slices.DeleteFunc(ts, func(tr memory.Triple) bool { return !slices.Contains(tr.Sources, id) })
}

// echo is a Completer that plays a model: for each event line "[id] time who: text" it states
// "who says <last word>", and for the whole batch "who-of-the-first-line talks in <session>"
// (the same fact in every batch of a session, so later batches confirm it).
type echo struct {
	mu    sync.Mutex
	calls int
	hook  func(n int)
}

var eventLine = regexp.MustCompile(`(?m)^\[(\d+)\] \S+ ([^:]+): (.*)$`)

func (e *echo) Complete(ctx context.Context, system, user string, _ json.RawMessage) (string, error) {
	e.mu.Lock()
	e.calls++
	n := e.calls
	e.mu.Unlock()
	if e.hook != nil {
		e.hook(n)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var facts []string
	var all []string
	first := ""
	for _, m := range eventLine.FindAllStringSubmatch(user, -1) {
		words := strings.Fields(strings.Trim(m[3], ".!? "))
		if first == "" {
			first = m[2]
		}
		all = append(all, m[1])
		facts = append(facts, fmt.Sprintf(`{"subject": %q, "subject_kind": "person", "predicate": "says", "object": %q, "object_kind": "thing", "sources": [%s], "replaces": false, "valid_from": ""}`,
			m[2], words[len(words)-1], m[1]))
	}
	facts = append(facts, fmt.Sprintf(`{"subject": %q, "subject_kind": "person", "predicate": "talks", "object": "chat", "object_kind": "thing", "sources": [%s], "replaces": false, "valid_from": ""}`,
		first, strings.Join(all, ",")))
	return "```json\n{\"facts\": [" + strings.Join(facts, ",") + "]}\n```", nil
}

// seedConversation stores the same conversation in a fixture: two sessions, interleaved.
func seedConversation(f *fixture) {
	f.session("a", private)
	f.session("b", groupA)
	var evs []memory.Event
	for i := range 10 {
		s, who := "a", "Ann"
		if i%3 == 2 {
			s, who = "b", "Bob"
		}
		evs = append(evs, memory.Event{Session: s, Partner: who, Time: t0.Add(time.Duration(i) * time.Minute),
			Content: fmt.Sprintf("I like word%d.", i%4)})
	}
	f.cold(evs...)
	f.clock.set(t0.Add(100 * time.Hour))
}

func TestDistillInterruptedThenRerun(t *testing.T) {
	// The clean run.
	clean := newFixture(t)
	seedConversation(clean)
	rep, err := clean.distiller(Options{Extractor: NewLLM(&echo{}, LLMOptions{}), Batch: 2}).Run(clean.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != 10 || rep.Batches != 6 || rep.Extractor != "llm" || rep.Confirmed == 0 {
		t.Fatalf("clean run %+v, want 10 events in 6 batches by llm with confirmations", rep)
	}
	want := clean.triples()

	// The same, cancelled while the model answers the second batch, then run again.
	f := newFixture(t)
	seedConversation(f)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	model := &echo{hook: func(n int) {
		if n == 2 {
			cancel()
		}
	}}
	d := f.distiller(Options{Extractor: NewLLM(model, LLMOptions{}), Batch: 2})
	rep, err = d.Run(ctx, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
	}
	if rep.Events != 2 || rep.Batches != 1 {
		t.Errorf("interrupted run %+v, want the first batch (2 events) done", rep)
	}
	rep, err = d.Run(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != 8 || rep.Batches != 5 {
		t.Errorf("rerun %+v, want the 8 remaining events in 5 batches", rep)
	}
	if got := f.triples(); !slices.Equal(got, want) {
		t.Errorf("triples after interrupt and rerun:\n%s\nwant (clean run):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Idempotent: nothing is left.
	if rep, err = d.Run(f.ctx, 0); err != nil || rep.Events != 0 || rep.Batches != 0 {
		t.Errorf("third run %+v, %v: want nothing done", rep, err)
	}
}

func TestDistillLimit(t *testing.T) {
	f := newFixture(t)
	seedConversation(f)
	d := f.distiller(Options{Batch: 4})
	tests := []struct {
		limit, events, batches int
	}{
		{limit: 3, events: 3, batches: 2}, // the oldest 3: a has 2, b 1
		{limit: 5, events: 5, batches: 2},
		{limit: 0, events: 2, batches: 2}, // b then a
		{limit: 0, events: 0, batches: 0},
	}
	for i, tt := range tests {
		rep, err := d.Run(f.ctx, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Events != tt.events || rep.Batches != tt.batches {
			t.Errorf("run %d (limit %d): %+v, want %d events in %d batches", i, tt.limit, rep, tt.events, tt.batches)
		}
	}
}

// recorder is an Extractor that records the batches it is given and extracts with rules.
type recorder struct {
	mu      sync.Mutex
	batches [][]memory.Event
	rules   *Rules
}

func (r *recorder) Name() string { return OriginRules }

func (r *recorder) Extract(ctx context.Context, evs []memory.Event) ([]memory.Fact, []memory.Adoption, error) {
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(evs))
	r.mu.Unlock()
	return r.rules.Extract(ctx, evs)
}

func TestDistillBatchesPerSession(t *testing.T) {
	f := newFixture(t)
	f.session("a", private)
	f.session("b", private)
	var evs []memory.Event
	for i := range 20 {
		s := []string{"a", "b"}[i%2]
		// Stored out of time order: the batches must still be chronological.
		evs = append(evs, memory.Event{Session: s, Time: t0.Add(time.Duration(20-i) * time.Minute), Content: fmt.Sprintf("I like tea%d", i)})
	}
	stored := f.cold(evs...)
	f.clock.set(t0.Add(100 * time.Hour))
	rec := &recorder{rules: NewRules(RulesOptions{})}
	rep, err := f.distiller(Options{Extractor: rec, Batch: 3}).Run(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, b := range rec.batches {
		if len(b) == 0 || len(b) > 3 {
			t.Errorf("batch of %d events", len(b))
		}
		for i, e := range b {
			seen[e.ID]++
			if e.Session != b[0].Session {
				t.Errorf("batch mixes sessions %s and %s", b[0].Session, e.Session)
			}
			if i > 0 && e.Time.Before(b[i-1].Time) {
				t.Errorf("batch not chronological: %v after %v", e.Time, b[i-1].Time)
			}
		}
	}
	for _, e := range stored {
		if seen[e.ID] != 1 {
			t.Errorf("event %d given %d times", e.ID, seen[e.ID])
		}
	}
	if rep.Events != 20 || rep.Batches != len(rec.batches) || rep.Batches != 8 {
		t.Errorf("report %+v, %d batches recorded; want 20 events in 8 batches", rep, len(rec.batches))
	}
}

// failing is a Completer that always fails one way.
type failing struct {
	reply string
	err   error
}

func (c failing) Complete(context.Context, string, string, json.RawMessage) (string, error) {
	return c.reply, c.err
}

func TestDistillFallsBackToRules(t *testing.T) {
	tests := []struct {
		name     string
		model    Completer
		fallback Extractor
		wantRep  string // Report.Extractor
		wantErr  string
	}{
		{name: "invalid replies", model: failing{reply: "I cannot do that."}, wantRep: "llm+rules"},
		{name: "provider down", model: failing{err: errors.New("503 from provider")}, wantRep: "llm+rules"},
		{name: "fallback fails too", model: failing{err: errors.New("503 from provider")},
			fallback: NewLLM(failing{err: errors.New("also down")}, LLMOptions{}), wantErr: "fallback llm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.session("chat", private)
			f.cold(memory.Event{Session: "chat", Partner: "Ann", Time: t0, Content: "I live in Oslo."})
			f.clock.set(t0.Add(100 * time.Hour))
			rep, err := f.distiller(Options{Extractor: NewLLM(tt.model, LLMOptions{}), Fallback: tt.fallback}).Run(f.ctx, 0)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got := f.triples(); len(got) != 0 {
					t.Errorf("triples %v after a failed batch", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Extractor != tt.wantRep || rep.Events != 1 {
				t.Errorf("report %+v, want extractor %q and 1 event", rep, tt.wantRep)
			}
			if got, want := f.triples(), []string{"Ann -lives in-> Oslo [1] private rules current=true"}; !slices.Equal(got, want) {
				t.Errorf("triples %q, want %q", got, want)
			}
		})
	}
}

func TestDistillScopes(t *testing.T) {
	f := newFixture(t)
	f.session("priv", private)
	f.session("pub", public)
	f.session("ga", groupA)
	f.session("gb", groupB)
	say := func(session, who, text string) memory.Event {
		return memory.Event{Session: session, Partner: who, Time: t0, Content: text}
	}
	f.cold(
		say("ga", "Bob", "I live in Oslo."),
		say("pub", "Carl", "I like jazz."),
		say("priv", "Dan", "I like tea."), say("ga", "Dan", "I like tea."),
		say("ga", "Eve", "I like chess."), say("gb", "Eve", "I like chess."),
		say("ga", "Fay", "I like golf."), say("pub", "Fay", "I like golf."),
	)
	f.clock.set(t0.Add(100 * time.Hour))
	if _, err := f.distiller(Options{Extractor: NewRules(RulesOptions{NoMentions: true})}).Run(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Bob -lives in-> Oslo [1] group:a rules current=true", // one group
		"Carl -likes-> jazz [2] public rules current=true",    // public
		"Dan -likes-> tea [3 4] private rules current=true",   // private + group: private
		"Eve -likes-> chess [5 6] private rules current=true", // two groups: private
		"Fay -likes-> golf [7 8] group:a rules current=true",  // group + public: the group
	}
	if got := f.triples(); !slices.Equal(got, want) {
		t.Errorf("triples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A group's viewer sees only what its group may see.
	ts, err := f.s.Triples(f.ctx, memory.TripleQuery{Viewer: memory.Viewer{Group: "a"}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, tr := range ts {
		seen = append(seen, tr.SubjectName)
	}
	slices.Sort(seen)
	if want := []string{"Bob", "Carl", "Fay"}; !slices.Equal(seen, want) {
		t.Errorf("group a sees triples of %v, want %v", seen, want)
	}
}

func TestDistillAdoptsBlocks(t *testing.T) {
	f := newFixture(t)
	f.session("chat", private)
	ev := f.cold(memory.Event{Session: "chat", Time: t0, Content: "I visited Kyoto. Notes attached.",
		Blocks: []memory.Block{{Kind: memory.BlockText, Name: "kyoto", Text: "Temples, tea, maples."}}})[0]
	f.clock.set(t0.Add(100 * time.Hour))
	rep, err := f.distiller(Options{}).Run(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Adopted != 1 {
		t.Errorf("report %+v, want 1 adoption", rep)
	}
	ents, err := f.s.Entities(f.ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Name: "Kyoto"})
	if err != nil || len(ents) != 1 {
		t.Fatalf("entities named Kyoto: %v, %v", ents, err)
	}
	if ents[0].Text != "Temples, tea, maples." || ents[0].Kind != KindPlace {
		t.Errorf("entity %+v, want the place Kyoto with the block's text", ents[0])
	}
	// The event keeps its reference to the block, which now lives in L3.
	got := f.event(ev.ID)
	if len(got.Blocks) != 1 || got.Blocks[0].Holder.Layer != memory.LayerL3 || got.Blocks[0].Holder.Entity != ents[0].ID {
		t.Errorf("event blocks %+v, want one held by entity %d in L3", got.Blocks, ents[0].ID)
	}
}

func TestBatches(t *testing.T) {
	ev := func(id int64, s string, min int) memory.Event {
		return memory.Event{ID: id, Session: s, Time: t0.Add(time.Duration(min) * time.Minute)}
	}
	tests := []struct {
		name string
		in   []memory.Event
		n    int
		want [][]int64
	}{
		{"empty", nil, 3, nil},
		{"one session cut", []memory.Event{ev(1, "a", 1), ev(2, "a", 2), ev(3, "a", 3), ev(4, "a", 4)}, 3, [][]int64{{1, 2, 3}, {4}}},
		{"sessions in order of first event", []memory.Event{ev(1, "b", 1), ev(2, "a", 2), ev(3, "b", 3)}, 5, [][]int64{{1, 3}, {2}}},
		{"chronological within a session", []memory.Event{ev(5, "a", 9), ev(6, "a", 1), ev(7, "a", 1)}, 5, [][]int64{{6, 7, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]int64
			for _, b := range batches(tt.in, tt.n) {
				got = append(got, eventIDs(b))
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("batches %v, want %v", got, tt.want)
			}
		})
	}
}
