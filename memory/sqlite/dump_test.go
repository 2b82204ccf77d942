package sqlite_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

var dumpT0 = time.Date(2024, 4, 1, 8, 0, 0, 0, time.UTC)

func countEvents(t *testing.T, sn backup.Snapshot) []int64 {
	t.Helper()
	var ids []int64
	if err := sn.Events(context.Background(), false, func(e memory.Event) error {
		ids = append(ids, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestSnapshotIsConsistent(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	add := func(content string) {
		t.Helper()
		if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "s", Role: memory.RoleUser, Content: content}}); err != nil {
			t.Fatal(err)
		}
	}
	add("one")
	add("two")
	sn, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sn.Schema() != sqlite.MaxSchemaVersion() {
		t.Errorf("Schema() = %d, want %d", sn.Schema(), sqlite.MaxSchemaVersion())
	}
	add("three")
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if ids := countEvents(t, sn); len(ids) != 2 {
		t.Errorf("snapshot sees events %v, want the 2 committed before it opened", ids)
	}
	n := 0
	if err := sn.Settings(ctx, func(string, string) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("snapshot sees %d settings (%v), want 0", n, err)
	}
	// An error from fn stops the walk and comes back.
	stop := errors.New("stop")
	if err := sn.Events(ctx, true, func(memory.Event) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Events returned %v, want fn's error", err)
	}
	if err := sn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sn.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	sn2, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sn2.Close()
	if ids := countEvents(t, sn2); len(ids) != 3 {
		t.Errorf("a new snapshot sees events %v, want 3", ids)
	}
}

// restoreSmall restores a small memory with chosen ids: session s (replacing an empty one),
// events 100 and 200 (the latter with text block "blk1"), entities 7 and 9, triple 40
// superseded by triple 50 (a reference forward), triple 50 sourced from event 100.
func restoreSmall(t *testing.T, s *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	rs, err := s.BeginRestore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Rollback()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rs.Session(memory.Session{ID: "s", Title: "restored", Created: dumpT0, Updated: dumpT0}))
	must(rs.Event(memory.Event{ID: 100, Session: "s", Time: dumpT0, Role: memory.RoleUser, Content: "alpha beta", Layer: memory.LayerL2}))
	must(rs.Event(memory.Event{ID: 200, Session: "s", Time: dumpT0.Add(time.Minute), Role: memory.RoleUser, Content: "alpha",
		Layer: memory.LayerL1, Blocks: []memory.Block{{ID: "blk1"}}}))
	must(rs.Triple(memory.Triple{ID: 40, Subject: 7, Predicate: "likes", Object: 9, ValidFrom: dumpT0,
		ValidTo: dumpT0.Add(time.Hour), SupersededBy: 50, Origin: "llm", Created: dumpT0, Sources: []int64{100}}))
	must(rs.Triple(memory.Triple{ID: 50, Subject: 7, Predicate: "loves", Object: 9, ValidFrom: dumpT0.Add(time.Hour),
		Origin: "llm", Created: dumpT0, Sources: []int64{100}}))
	must(rs.Block(memory.Block{ID: "blk1", Kind: memory.BlockText, Text: "gamma delta", Size: 11,
		Holder: memory.BlockHolder{Layer: memory.LayerL1, Event: 200}, Created: dumpT0}))
	must(rs.Entity(memory.Entity{ID: 7, Name: "Alpha", Kind: "person", Origin: "llm", Created: dumpT0, Updated: dumpT0}))
	must(rs.Entity(memory.Entity{ID: 9, Name: "Omega", Kind: "thing", Origin: "llm", Created: dumpT0, Updated: dumpT0}))
	must(rs.Commit())
	if err := rs.Rollback(); err != nil {
		t.Errorf("Rollback after Commit: %v", err)
	}
}

func TestRestoreKeepsIDsAndRefreshesCaches(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "s", Title: "empty"}); err != nil {
		t.Fatal(err)
	}
	// Fill the caches the restore must refresh: the session's (empty) tail and a term's count.
	if h, err := s.History(ctx, "s", 10); err != nil || len(h) != 0 {
		t.Fatalf("History = %v, %v", h, err)
	}
	if df, total, err := s.DocFreq(ctx, []string{"alpha"}); err != nil || df[0] != 0 || total != 0 {
		t.Fatalf("DocFreq = %v %d %v", df, total, err)
	}

	restoreSmall(t, s)

	sess, err := s.GetSession(ctx, "s")
	if err != nil || sess.Title != "restored" {
		t.Errorf("session = %+v, %v; want the backup's replacing the empty one", sess, err)
	}
	h, err := s.History(ctx, "s", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].ID != 100 || h[1].ID != 200 || h[0].Layer != memory.LayerL2 ||
		len(h[1].Blocks) != 1 || h[1].Blocks[0].ID != "blk1" {
		t.Errorf("History after restore = %+v", h)
	}
	df, total, err := s.DocFreq(ctx, []string{"alpha", "gamma", "beta"})
	if err != nil || !reflect.DeepEqual(df, []int{2, 1, 1}) || total != 2 {
		t.Errorf("DocFreq after restore = %v %d %v, want [2 1 1] 2", df, total, err)
	}
	// A block's text is indexed with the event that brought it, as AppendEvents does.
	hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"gamma"}, Viewer: memory.OwnerViewer})
	if err != nil || len(hits) != 1 || hits[0].Event.ID != 200 || hits[0].Indexed != "alpha gamma delta" {
		t.Errorf("SearchTerms(gamma) = %+v, %v", hits, err)
	}
	// Only the current triple is in the triple index.
	th, err := s.SearchTriples(ctx, []string{"alpha"}, memory.OwnerViewer, 10)
	if err != nil || len(th) != 1 || th[0].Triple.ID != 50 || th[0].Triple.SubjectName != "Alpha" {
		t.Errorf("SearchTriples(alpha) = %+v, %v", th, err)
	}
	old, err := s.Triples(ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, Entity: 7, History: true})
	if err != nil || len(old) != 2 || old[0].SupersededBy != 50 || !reflect.DeepEqual(old[1].Sources, []int64{100}) {
		t.Errorf("Triples = %+v, %v", old, err)
	}

	// New rows continue after the restored ids.
	evs, err := s.AppendEvents(ctx, []memory.Event{{Session: "s", Role: memory.RoleUser, Content: "next"}})
	if err != nil || evs[0].ID != 201 {
		t.Errorf("next event id = %v (%v), want 201", evs, err)
	}
	tr, err := s.AddTriple(ctx, memory.Fact{Subject: "Alpha", SubjectKind: "person", Predicate: "knows", Object: "Zed"}, "owner", memory.Scope{})
	if err != nil || tr.ID != 51 || tr.Subject != 7 || tr.Object != 10 {
		t.Errorf("AddTriple = %+v, %v; want triple 51 from entity 7 to a new entity 10", tr, err)
	}
}

func TestRestoreFailuresRestoreNothing(t *testing.T) {
	ctx := context.Background()
	ev := func(id int64, session string) memory.Event {
		return memory.Event{ID: id, Session: session, Time: dumpT0, Role: memory.RoleUser, Content: "alpha", Layer: memory.LayerL1}
	}
	cases := []struct {
		name  string
		write func(rs backup.Restorer) error
		want  string
	}{
		{"missing session", func(rs backup.Restorer) error {
			return rs.Event(ev(5, "nope"))
		}, `events id 5: session "nope" is not in the backup`},
		{"missing block", func(rs backup.Restorer) error {
			if err := rs.Session(memory.Session{ID: "s", Created: dumpT0, Updated: dumpT0}); err != nil {
				return err
			}
			e := ev(5, "s")
			e.Blocks = []memory.Block{{ID: "gone"}}
			return rs.Event(e)
		}, `events id 5: block "gone" is not in the backup`},
		{"missing triple entity", func(rs backup.Restorer) error {
			return rs.Triple(memory.Triple{ID: 3, Subject: 1, Object: 1, Predicate: "is", Created: dumpT0})
		}, `triples id 3: subject entity 1 is not in the backup`},
		{"text block not held", func(rs backup.Restorer) error {
			if err := rs.Entity(memory.Entity{ID: 1, Name: "A", Kind: "thing", BlockID: "b", Created: dumpT0, Updated: dumpT0}); err != nil {
				return err
			}
			return rs.Entity(memory.Entity{ID: 2, Name: "B", Kind: "thing", Created: dumpT0, Updated: dumpT0})
		}, `entities id 1: text block "b" is not in the backup`},
		{"duplicate id", func(rs backup.Restorer) error {
			if err := rs.Session(memory.Session{ID: "s", Created: dumpT0, Updated: dumpT0}); err != nil {
				return err
			}
			if err := rs.Event(ev(5, "s")); err != nil {
				return err
			}
			return rs.Event(ev(5, "s"))
		}, "UNIQUE constraint failed: events.id"},
		{"bad holder", func(rs backup.Restorer) error {
			return rs.Block(memory.Block{ID: "b", Kind: memory.BlockText, Holder: memory.BlockHolder{Layer: memory.LayerL3, Event: 4}})
		}, "want layer 1 or 2 with an event, or layer 3 with an entity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openTemp(t)
			rs, err := s.BeginRestore(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.write(rs)
			if err == nil {
				err = rs.Commit()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore = %v, want an error containing %q", err, tc.want)
			}
			if err := rs.Rollback(); err != nil {
				t.Fatal(err)
			}
			// Nothing was stored, and the store takes writes and a new restore.
			if ss, err := s.ListSessions(ctx); err != nil || len(ss) != 0 {
				t.Errorf("sessions after a failed restore: %v %v", ss, err)
			}
			restoreSmall(t, s)
			if h, err := s.History(ctx, "s", 0); err != nil || len(h) != 2 {
				t.Errorf("History after the second restore: %v %v", h, err)
			}
		})
	}
}

func TestRestoreRefusesNonEmpty(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.PutEntity(ctx, memory.Entity{Name: "Alice", Kind: "person"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.BeginRestore(ctx)
	if !errors.Is(err, backup.ErrNotEmpty) || !strings.Contains(err.Error(), "restore needs an empty memory") ||
		!strings.Contains(err.Error(), "1 entities") {
		t.Fatalf("BeginRestore on a store with an entity: %v", err)
	}
	// The refusal released the writer.
	if _, err := s.PutEntity(ctx, memory.Entity{Name: "Bob", Kind: "person"}); err != nil {
		t.Fatal(err)
	}
}
