package sqlite_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// grScores returns the BM25 score of each event SearchTerms finds for terms (owner view).
func grScores(t *testing.T, f *grFix, terms ...string) map[int64]float64 {
	t.Helper()
	hits, err := f.s.SearchTerms(f.ctx, memory.TextQuery{Terms: terms, Viewer: memory.OwnerViewer})
	if err != nil {
		t.Fatalf("SearchTerms(%q): %v", terms, err)
	}
	out := make(map[int64]float64, len(hits))
	for _, h := range hits {
		out[h.Event.ID] = h.Score
	}
	return out
}

func TestForget(t *testing.T) {
	f := newGrFix(t)
	e1 := f.ev("alice likes tea", grPub, grT0)
	e2 := f.ev("alice likes tea in group a", grA, grT0.Add(time.Minute))
	e3 := f.event(memory.Event{Content: "bob lives in rome, dave knows bob", Scope: grPriv, Time: grT0.Add(2 * time.Minute),
		Blocks: []memory.Block{{Kind: memory.BlockText, Name: "rome.txt", Text: "colosseum"}}}).ID
	e4 := f.ev("carol owns a cat", grPub, grT0.Add(3*time.Minute))
	f.distil([]int64{e1, e2, e3, e4},
		grFact("Alice", "likes", "tea", e1, e2),
		grFact("Bob", "lives in", "Rome", e3),
		grFact("Dave", "knows", "Bob", e3),
		grFact("Carol", "owns", "cat", e4))
	// Kept although left without triples: a pinned entity, one holding a block, one the owner made.
	if err := f.s.Pin(f.ctx, "entity", f.entity("dave").ID, true); err != nil {
		t.Fatal(err)
	}
	rome := f.entity("rome")
	rome.Text = "capital of Italy"
	if _, err := f.s.PutEntity(f.ctx, rome); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.AddTriple(f.ctx, grFact("Erin", "knows", "Bob"), "owner", grPriv); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Pin(f.ctx, "triple", f.triple("Carol owns cat").ID, true); err != nil {
		t.Fatal(err)
	}
	if tea := f.triple("Alice likes tea"); tea.Scope != grA {
		t.Fatalf("tea scope before forgetting: %v, want group a", tea.Scope)
	}
	// Fill the tail cache: Forget must not leave deleted events in it.
	if h, err := f.s.History(f.ctx, "chat", 10); err != nil || len(h) != 4 {
		t.Fatalf("History: %d events, %v", len(h), err)
	}

	// Unknown ids: nothing deleted.
	if _, err := f.s.Forget(f.ctx, []int64{e1, 999}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Forget with an unknown id: %v, want ErrNotFound", err)
	}
	if hits, _ := f.s.Events(f.ctx, []int64{e1}); len(hits) != 1 {
		t.Fatal("a failed Forget deleted an event")
	}

	steps := []struct {
		name string
		ids  []int64
		want memory.ForgetResult
	}{
		// Bob lives in Rome and Dave knows Bob go with e3, their only source, and so does e3's
		// block; Alice likes tea keeps e1. No entity goes: Bob is in the owner's triple, Rome
		// holds a block, Dave is pinned.
		{"e2 and e3", []int64{e2, e3, e3}, memory.ForgetResult{Events: 2, Blocks: 1, Triples: 2, Trimmed: 1}},
		// The pinned triple outlives its only source.
		{"e4", []int64{e4}, memory.ForgetResult{Events: 1, Trimmed: 1}},
		// The last source of Alice likes tea: Alice and tea were distilled and go with it.
		{"e1", []int64{e1}, memory.ForgetResult{Events: 1, Triples: 1, Entities: 2}},
	}
	for _, st := range steps {
		before := grScores(t, f, "alice", "tea", "cat")
		got, err := f.s.Forget(f.ctx, st.ids)
		if err != nil {
			t.Fatalf("Forget %s: %v", st.name, err)
		}
		if got != st.want {
			t.Errorf("Forget %s = %+v, want %+v", st.name, got, st.want)
		}
		after := grScores(t, f, "alice", "tea", "cat")
		for _, id := range st.ids {
			if _, ok := after[id]; ok {
				t.Errorf("Forget %s: SearchTerms still finds event %d", st.name, id)
			}
		}
		if len(after) > len(before) {
			t.Errorf("Forget %s: more hits after (%v) than before (%v)", st.name, after, before)
		}
		grIntegrity(t, f.path)
		if st.name == "e2 and e3" {
			tea := f.triple("Alice likes tea")
			if !reflect.DeepEqual(tea.Sources, []int64{e1}) || tea.Scope != grPub {
				t.Errorf("trimmed triple %+v, want source e1 and its scope (public)", tea)
			}
			if hits := f.search(memory.OwnerViewer, "rome", "dave"); len(hits) != 0 {
				t.Errorf("SearchTriples finds forgotten triples: %q", grHitTexts(hits))
			}
			if got := grTexts(f.triples(memory.TripleQuery{History: true, Entity: f.entity("bob").ID})); !reflect.DeepEqual(got, []string{"Erin knows Bob"}) {
				t.Errorf("Bob's triples: %q", got)
			}
			if hits, _ := f.s.SearchTerms(f.ctx, memory.TextQuery{Terms: []string{"colosseum"}, Viewer: memory.OwnerViewer}); len(hits) != 0 {
				t.Errorf("the forgotten event's block text is still indexed: %+v", hits)
			}
			h, err := f.s.History(f.ctx, "chat", 10)
			if err != nil || len(h) != 2 || h[0].ID != e1 || h[1].ID != e4 {
				t.Errorf("History after Forget: %+v, %v; want e1 and e4", h, err)
			}
		}
	}
	if got := grTexts(f.triples(memory.TripleQuery{History: true})); !reflect.DeepEqual(got, []string{"Carol owns cat", "Erin knows Bob"}) {
		t.Errorf("triples left: %q", got)
	}
	var names []string
	for _, e := range f.entities(memory.EntityQuery{}) {
		names = append(names, e.Name)
	}
	if want := []string{"Bob", "Rome", "Dave", "Carol", "cat", "Erin"}; !reflect.DeepEqual(names, want) {
		t.Errorf("entities left: %q, want %q", names, want)
	}
	if hits := f.search(memory.OwnerViewer, "alice", "tea"); len(hits) != 0 {
		t.Errorf("SearchTriples after forgetting every source: %q", grHitTexts(hits))
	}

	// The index statistics behind BM25 and the document-frequency cache followed the
	// deletions: new events score as in a store that never held the forgotten ones, before and
	// after a reopen (which recomputes the statistics from the file).
	f2 := newGrFix(t)
	var ids, ids2 []int64
	for _, c := range []string{"carol owns a cat", "dave has a cat and a dog"} {
		ids = append(ids, f.ev(c, grPub, grT0))
		ids2 = append(ids2, f2.ev(c, grPub, grT0))
	}
	got, want := grScores(t, f, "cat", "carol"), grScores(t, f2, "cat", "carol")
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("hits for cat: %v and %v, want 2 each", got, want)
	}
	for i := range ids {
		if math.Abs(got[ids[i]]-want[ids2[i]]) > 1e-9 {
			t.Errorf("score of %d after Forget = %v, want %v (a store that never held the forgotten events)",
				ids[i], got[ids[i]], want[ids2[i]])
		}
	}
	f.reopen()
	// The store's own check, on readers that have not read the index since it changed.
	if err := f.s.IntegrityCheck(f.ctx); err != nil {
		t.Error(err)
	}
	again := grScores(t, f, "cat", "carol")
	if !reflect.DeepEqual(again, got) {
		t.Errorf("scores after reopen %v, before %v", again, got)
	}
	if got := grTexts(f.triples(memory.TripleQuery{History: true})); !reflect.DeepEqual(got, []string{"Carol owns cat", "Erin knows Bob"}) {
		t.Errorf("triples after reopen: %q", got)
	}
	if hits := f.search(memory.OwnerViewer, "cat"); len(hits) != 1 || len(hits[0].Triple.Sources) != 0 || !hits[0].Triple.Pinned {
		t.Errorf("pinned triple after reopen: %+v", hits)
	}
	if res, err := f.s.Forget(f.ctx, nil); err != nil || res != (memory.ForgetResult{}) {
		t.Errorf("Forget(nil) = %+v, %v", res, err)
	}
}

// TestDocFreqTotalFollowsWrites: DocFreq's total comes from the running totals, not a count of
// the events table; appends, forgetting and reopening keep it equal to that count.
func TestDocFreqTotalFollowsWrites(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/memory.db"
	s := openAt(t, path)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	ids := chat(t, s, "s", "red apple", "blue sky", "red car", "green tea", "red wine")
	total := func(s interface {
		DocFreq(context.Context, []string) ([]int, int, error)
	}) int {
		t.Helper()
		_, n, err := s.DocFreq(ctx, []string{"red"})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := total(s); n != 5 {
		t.Fatalf("total after 5 appends = %d", n)
	}
	if _, err := s.Forget(ctx, ids[:2]); err != nil {
		t.Fatal(err)
	}
	if n := total(s); n != 3 {
		t.Fatalf("total after forgetting 2 of 5 = %d", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := total(openAt(t, path)); n != 3 {
		t.Fatalf("total after reopening = %d", n)
	}
}
