package kerneltest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// unknownID is an id no fresh kernel has.
const unknownID = 1 << 40

// findTriple returns the triple with id among ts.
func findTriple(ts []client.Triple, id int64) (client.Triple, bool) {
	for _, t := range ts {
		if t.ID == id {
			return t, true
		}
	}
	return client.Triple{}, false
}

func mustEntity(t *testing.T, s client.Service, id int64) client.EntityDetail {
	t.Helper()
	d, err := s.Entity(ctxT(t), id)
	if err != nil {
		t.Fatalf("Entity(%d): %v", id, err)
	}
	return d
}

func mustTriple(t *testing.T, s client.Service, in client.TripleInput) client.Triple {
	t.Helper()
	tr, err := s.AddTriple(ctxT(t), in)
	if err != nil {
		t.Fatalf("AddTriple(%+v): %v", in, err)
	}
	return tr
}

// testGraphEdits: the owner's edits of the graph round-trip, and a corrected triple supersedes
// the old one, which is kept with its end of validity.
func testGraphEdits(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	alice, err := s.PutEntity(ctx, client.Entity{Name: "Alice", Kind: "person", Text: "an old friend"})
	if err != nil {
		t.Fatalf("PutEntity: %v", err)
	}
	if alice.ID <= 0 || alice.Name != "Alice" || alice.Kind != "person" || alice.Text != "an old friend" ||
		alice.Scope != client.ScopePrivate || alice.Origin != "owner" || alice.Pinned {
		t.Fatalf("created entity %+v (want a private owner-made person)", alice)
	}
	edited, err := s.PutEntity(ctx, client.Entity{ID: alice.ID, Name: "Alice", Kind: "person", Text: "a friend from school"})
	if err != nil || edited.ID != alice.ID || edited.Text != "a friend from school" {
		t.Fatalf("edited entity %+v, %v", edited, err)
	}

	t1 := mustTriple(t, s, client.TripleInput{Subject: "Alice", Predicate: "lives in", Object: "Paris", ObjectKind: "place"})
	if t1.ID <= 0 || t1.Subject != alice.ID || t1.SubjectName != "Alice" || t1.Predicate != "lives in" || t1.ObjectName != "Paris" ||
		t1.Object <= 0 || t1.Object == alice.ID || t1.SupersededBy != 0 || !t1.ValidTo.IsZero() || t1.ValidFrom.IsZero() ||
		t1.Scope != client.ScopePrivate || t1.Origin != "owner" {
		t.Fatalf("added triple %+v", t1)
	}
	d := mustEntity(t, s, alice.ID)
	if d.Entity.Text != "a friend from school" {
		t.Errorf("detail entity %+v", d.Entity)
	}
	if _, ok := findTriple(d.Triples, t1.ID); !ok {
		t.Fatalf("detail lacks triple %d: %+v", t1.ID, d.Triples)
	}
	if paris := mustEntity(t, s, t1.Object); paris.Entity.Name != "Paris" || paris.Entity.Kind != "place" {
		t.Errorf("the object entity made by AddTriple: %+v", paris.Entity)
	}

	t2, err := s.EditTriple(ctx, t1.ID, client.TripleInput{Subject: "Alice", Predicate: "lives in", Object: "Berlin"})
	if err != nil {
		t.Fatalf("EditTriple: %v", err)
	}
	if t2.ID == t1.ID || t2.Subject != alice.ID || t2.ObjectName != "Berlin" || t2.SupersededBy != 0 || !t2.ValidTo.IsZero() {
		t.Fatalf("correcting triple %+v", t2)
	}
	d = mustEntity(t, s, alice.ID)
	old, ok := findTriple(d.Triples, t1.ID)
	if !ok || old.SupersededBy != t2.ID || old.ValidTo.IsZero() || old.ObjectName != "Paris" {
		t.Errorf("the superseded triple is kept with superseded_by %d and valid_to: %+v (found %v)", t2.ID, old, ok)
	}
	if cur, ok := findTriple(d.Triples, t2.ID); !ok || cur.SupersededBy != 0 {
		t.Errorf("the correcting triple in the detail: %+v (found %v)", cur, ok)
	}

	for _, p := range []client.PinRequest{{Kind: "entity", ID: alice.ID, Pinned: true}, {Kind: "triple", ID: t2.ID, Pinned: true}} {
		if err := s.Pin(ctx, p); err != nil {
			t.Fatalf("Pin(%+v): %v", p, err)
		}
	}
	d = mustEntity(t, s, alice.ID)
	if tr, _ := findTriple(d.Triples, t2.ID); !d.Entity.Pinned || !tr.Pinned {
		t.Errorf("after pinning: entity %+v, triple %+v", d.Entity, tr)
	}
	if err := s.Pin(ctx, client.PinRequest{Kind: "entity", ID: alice.ID, Pinned: false}); err != nil {
		t.Fatal(err)
	}
	if d = mustEntity(t, s, alice.ID); d.Entity.Pinned {
		t.Errorf("after unpinning: %+v", d.Entity)
	}

	bad := []struct {
		name string
		call func() error
		want error
	}{
		{"unknown entity", func() error { _, err := s.Entity(ctx, unknownID); return err }, client.ErrNotFound},
		{"edit of an unknown entity", func() error {
			_, err := s.PutEntity(ctx, client.Entity{ID: unknownID, Name: "x"})
			return err
		}, client.ErrNotFound},
		{"entity without name", func() error { _, err := s.PutEntity(ctx, client.Entity{Kind: "person"}); return err }, client.ErrInvalid},
		{"entity with a bad scope", func() error {
			_, err := s.PutEntity(ctx, client.Entity{Name: "x", Scope: "friends"})
			return err
		}, client.ErrInvalid},
		{"triple without subject", func() error {
			_, err := s.AddTriple(ctx, client.TripleInput{Predicate: "likes", Object: "tea"})
			return err
		}, client.ErrInvalid},
		{"edit of an unknown triple", func() error {
			_, err := s.EditTriple(ctx, unknownID, client.TripleInput{Subject: "a", Predicate: "b", Object: "c"})
			return err
		}, client.ErrNotFound},
		{"pin of an unknown entity", func() error {
			return s.Pin(ctx, client.PinRequest{Kind: "entity", ID: unknownID, Pinned: true})
		}, client.ErrNotFound},
		{"pin of an unknown kind", func() error { return s.Pin(ctx, client.PinRequest{Kind: "scene", ID: 1, Pinned: true}) }, client.ErrInvalid},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// testGraphPaging: paging returns every entity exactly once, each edge once and no earlier than
// both its endpoints; scope and history filter.
func testGraphPaging(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	var chain []client.Triple
	for i := range 6 {
		chain = append(chain, mustTriple(t, s, client.TripleInput{Subject: fmt.Sprintf("node %d", i), Predicate: "precedes",
			Object: fmt.Sprintf("node %d", i+1)}))
	}
	club, err := s.PutEntity(ctx, client.Entity{Name: "chess club", Kind: "org", Scope: "group:g1"})
	if err != nil {
		t.Fatal(err)
	}
	const entities = 8 // node 0 … node 6 and the club

	seenEntity := map[int64]int{}
	seenTriple := map[int64]int{}
	q := client.GraphQuery{Limit: 3}
	for pages := 1; ; pages++ {
		if pages > entities {
			t.Fatalf("paging does not end: %d pages", pages)
		}
		page, err := s.Graph(ctx, q)
		if err != nil {
			t.Fatalf("Graph(%+v): %v", q, err)
		}
		if page.Total != entities || len(page.Entities) > 3 {
			t.Fatalf("page %d: total %d, %d entities", pages, page.Total, len(page.Entities))
		}
		for _, e := range page.Entities {
			seenEntity[e.ID]++
		}
		for _, tr := range page.Triples {
			seenTriple[tr.ID]++
			if seenEntity[tr.Subject] == 0 || seenEntity[tr.Object] == 0 {
				t.Errorf("page %d sends triple %d before its endpoints %d and %d", pages, tr.ID, tr.Subject, tr.Object)
			}
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	if len(seenEntity) != entities || seenEntity[club.ID] != 1 {
		t.Errorf("entities seen %v, want %d once each (the club %d included)", seenEntity, entities, club.ID)
	}
	for id, n := range seenEntity {
		if n != 1 {
			t.Errorf("entity %d sent %d times", id, n)
		}
	}
	for _, tr := range chain {
		if seenTriple[tr.ID] != 1 {
			t.Errorf("triple %d sent %d times", tr.ID, seenTriple[tr.ID])
		}
	}
	if len(seenTriple) != len(chain) {
		t.Errorf("triples seen %v, want the %d of the chain", seenTriple, len(chain))
	}

	page, err := s.Graph(ctx, client.GraphQuery{Scope: "group:g1"})
	if err != nil || page.Total != 1 || len(page.Entities) != 1 || page.Entities[0].ID != club.ID || len(page.Triples) != 0 {
		t.Errorf("Graph(scope group:g1) = %+v, %v", page, err)
	}
	if _, err := s.Graph(ctx, client.GraphQuery{Scope: "friends"}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("Graph with a bad scope = %v, want ErrInvalid", err)
	}

	fixed, err := s.EditTriple(ctx, chain[0].ID, client.TripleInput{Subject: "node 0", Predicate: "precedes", Object: "node 2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		history bool
		want    int
	}{{false, len(chain)}, {true, len(chain) + 1}} {
		page, err := s.Graph(ctx, client.GraphQuery{History: tc.history, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		_, hasOld := findTriple(page.Triples, chain[0].ID)
		_, hasNew := findTriple(page.Triples, fixed.ID)
		if len(page.Triples) != tc.want || hasOld != tc.history || !hasNew || page.Next != "" {
			t.Errorf("Graph(history %v): %d triples (old one: %v, new one: %v), want %d", tc.history, len(page.Triples), hasOld, hasNew, tc.want)
		}
	}
}

// testMergeAndDelete: merging moves the triples and deletes the merged entity; deleting takes
// the entity's triples with it.
func testMergeAndDelete(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	bob, err := s.PutEntity(ctx, client.Entity{Name: "Bob", Kind: "person"})
	if err != nil {
		t.Fatal(err)
	}
	rob, err := s.PutEntity(ctx, client.Entity{Name: "Robert", Kind: "person"})
	if err != nil {
		t.Fatal(err)
	}
	likes := mustTriple(t, s, client.TripleInput{Subject: "Robert", Predicate: "likes", Object: "green tea"})
	m, err := s.MergeEntities(ctx, bob.ID, rob.ID)
	if err != nil || m.ID != bob.ID || m.Name != "Bob" {
		t.Fatalf("MergeEntities = %+v, %v", m, err)
	}
	if _, err := s.Entity(ctx, rob.ID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("the merged entity still exists: %v", err)
	}
	d := mustEntity(t, s, bob.ID)
	var moved bool
	for _, tr := range d.Triples {
		moved = moved || tr.Subject == bob.ID && tr.Predicate == "likes" && tr.ObjectName == "green tea" && tr.SupersededBy == 0
	}
	if !moved {
		t.Errorf("Bob lacks Robert's triple %+v: %+v", likes, d.Triples)
	}
	if _, err := s.MergeEntities(ctx, bob.ID, rob.ID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("merging a deleted entity = %v, want ErrNotFound", err)
	}

	if err := s.DeleteEntity(ctx, bob.ID); err != nil {
		t.Fatalf("DeleteEntity: %v", err)
	}
	if _, err := s.Entity(ctx, bob.ID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a deleted entity is still there: %v", err)
	}
	page, err := s.Graph(ctx, client.GraphQuery{History: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range page.Triples {
		if tr.Subject == bob.ID || tr.Object == bob.ID {
			t.Errorf("a triple of the deleted entity remains: %+v", tr)
		}
	}
	if err := s.DeleteEntity(ctx, bob.ID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("deleting twice = %v, want ErrNotFound", err)
	}
}

// testForget: forgetting an unknown event is ErrNotFound; a forgotten event leaves the history.
func testForget(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	if _, err := s.Forget(ctx, []int64{unknownID}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Forget(unknown) = %v, want ErrNotFound", err)
	}
	addFake(t, s)
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "my locker code is 4711"}, nil); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, "main", 0)
	if err != nil || len(hist) != 2 {
		t.Fatalf("History = %+v, %v", hist, err)
	}
	res, err := s.Forget(ctx, []int64{hist[0].ID})
	if err != nil || res.Events != 1 {
		t.Fatalf("Forget = %+v, %v", res, err)
	}
	after, err := s.History(ctx, "main", 0)
	if err != nil || len(after) != 1 || after[0].ID == hist[0].ID {
		t.Fatalf("History after Forget = %+v, %v", after, err)
	}
	if _, err := s.Forget(ctx, []int64{hist[0].ID}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("forgetting twice = %v, want ErrNotFound", err)
	}
}

// testScenesAndGC: scenes list and a GC pass report without error on a fresh kernel.
func testScenesAndGC(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	if _, err := s.Scenes(ctx); err != nil {
		t.Fatalf("Scenes: %v", err)
	}
	rep, err := s.MemoryGC(ctx)
	if err != nil {
		t.Fatalf("MemoryGC: %v", err)
	}
	if rep.Took < 0 || rep.Cooled < 0 || rep.Distilled < 0 || rep.Entities < 0 || rep.Triples < 0 {
		t.Errorf("report %+v", rep)
	}
}

// testExport: the three export formats hold the graph (import needs an empty memory and is
// tested by the kernel's own tests).
func testExport(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	if _, err := s.PutEntity(ctx, client.Entity{Name: "Alice", Kind: "person", Text: "likes green tea"}); err != nil {
		t.Fatal(err)
	}
	mustTriple(t, s, client.TripleInput{Subject: "Alice", Predicate: "likes", Object: "green tea", ObjectKind: "thing"})
	export := func(req client.ExportRequest) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := s.ExportMemory(ctx, req, &buf); err != nil {
			t.Fatalf("ExportMemory(%+v): %v", req, err)
		}
		return buf.Bytes()
	}

	if b := export(client.ExportRequest{Format: client.FormatJSON}); !json.Valid(b) || !bytes.Contains(b, []byte(`"Alice"`)) {
		t.Errorf("json export is not JSON holding Alice: %.300s", b)
	}

	var entity, relation bool
	sc := bufio.NewScanner(bytes.NewReader(export(client.ExportRequest{Format: client.FormatJSONL})))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec struct {
			Type, Name, EntityType, From, To, RelationType string
			Observations                                   []string
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("jsonl line %q: %v", sc.Text(), err)
		}
		switch rec.Type {
		case "entity":
			entity = entity || rec.Name == "Alice" && rec.EntityType == "person"
		case "relation":
			relation = relation || rec.From == "Alice" && rec.To == "green tea" && rec.RelationType == "likes"
		default:
			t.Errorf("jsonl record of type %q: %s", rec.Type, sc.Text())
		}
	}
	if !entity || !relation {
		t.Errorf("jsonl export lacks Alice (%v) or her relation (%v)", entity, relation)
	}

	tr := tar.NewReader(bytes.NewReader(export(client.ExportRequest{Format: client.FormatMarkdown})))
	var names []string
	found := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("markdown export is not a tar: %v", err)
		}
		names = append(names, h.Name)
		if strings.EqualFold(h.Name, "entities/alice.md") { // slugs are lower case
			b, _ := io.ReadAll(tr)
			found = strings.Contains(string(b), "Alice")
		}
	}
	if !found {
		t.Errorf("markdown export lacks entities/alice.md naming Alice: %v", names)
	}

	if err := s.ExportMemory(ctx, client.ExportRequest{Format: "csv"}, io.Discard); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("export as csv = %v, want ErrInvalid", err)
	}
}
