package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// chat appends one message per text, alternating user and assistant, and returns their ids.
func chat(t *testing.T, s *sqlite.Store, session string, texts ...string) []int64 {
	t.Helper()
	var ids []int64
	for i, text := range texts {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		evs, err := s.AppendEvents(context.Background(), []memory.Event{{Session: session, Role: role, Content: text}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, evs[0].ID)
	}
	return ids
}

func historyIDs(t *testing.T, s *sqlite.Store, session string) []int64 {
	t.Helper()
	h, err := s.History(context.Background(), session, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range h {
		ids = append(ids, e.ID)
	}
	return ids
}

func TestBranches(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/memory.db"
	s := openAt(t, path)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	ids := chat(t, s, "s", "hello", "hi there", "tell me about walruses", "walruses are pinnipeds")
	u1, a1, u2, a2 := ids[0], ids[1], ids[2], ids[3]
	_ = historyIDs(t, s, "s") // fill the tail cache SetHead must drop

	// Regenerate the last reply: the head goes back to the question, the new reply is its sibling.
	if err := s.SetHead(ctx, "s", u2); err != nil {
		t.Fatal(err)
	}
	evs, err := s.AppendEvents(ctx, []memory.Event{{Session: "s", Role: memory.RoleAssistant, Content: "walruses sleep on ice floes"}})
	if err != nil {
		t.Fatal(err)
	}
	a3 := evs[0].ID
	if evs[0].Parent != u2 {
		t.Errorf("regenerated reply's parent = %d, want %d", evs[0].Parent, u2)
	}
	if got, want := historyIDs(t, s, "s"), []int64{u1, a1, u2, a3}; !reflect.DeepEqual(got, want) {
		t.Errorf("History after regenerate = %v, want %v", got, want)
	}
	if nb, err := s.Neighbours(ctx, []int64{u2}, 2, memory.OwnerViewer); err != nil || len(nb) != 3 || nb[2].ID != a3 {
		t.Errorf("Neighbours(u2) = %v, %v; want u1, a1 and the new reply, not the old one", nb, err)
	}
	kids, err := s.Children(ctx, "s", []int64{u2, a1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kids, map[int64][]int64{u2: {a2, a3}, a1: {u2}}) {
		t.Errorf("Children = %v; want u2 with both replies and a1 with u2", kids)
	}

	// Edit the first question: a new root, everything else off the branch.
	if err := s.SetHead(ctx, "s", 0); err != nil {
		t.Fatal(err)
	}
	edited := chat(t, s, "s", "hello again")
	if got := historyIDs(t, s, "s"); !reflect.DeepEqual(got, edited) {
		t.Errorf("History after editing the first message = %v, want %v", got, edited)
	}
	roots, _ := s.Children(ctx, "s", []int64{0})
	if !reflect.DeepEqual(roots[0], []int64{u1, edited[0]}) {
		t.Errorf("roots = %v, want [%d %d]", roots[0], u1, edited[0])
	}
	// Off-branch events are not recalled and not in the L1 window's candidates.
	hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"walruses"}, Viewer: memory.OwnerViewer})
	if err != nil || len(hits) != 0 {
		t.Errorf("SearchTerms(walruses) off the branch = %d hits, %v; want none", len(hits), err)
	}
	l1, err := s.LayerEvents(ctx, "s", memory.LayerL1)
	if err != nil || len(l1) != 1 || l1[0].ID != edited[0] {
		t.Errorf("LayerEvents(L1) = %v, %v; want only the edited message", l1, err)
	}

	// Back to the first branch ‹1/2›: its newest leaf is the regenerated reply.
	leaf, err := s.BranchLeaf(ctx, "s", u1)
	if err != nil || leaf != a3 {
		t.Fatalf("BranchLeaf(u1) = %d, %v; want %d", leaf, err, a3)
	}
	if err := s.SetHead(ctx, "s", leaf); err != nil {
		t.Fatal(err)
	}
	if got, want := historyIDs(t, s, "s"), []int64{u1, a1, u2, a3}; !reflect.DeepEqual(got, want) {
		t.Errorf("History after switching back = %v, want %v", got, want)
	}
	hits, _ = s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"walruses"}, Viewer: memory.OwnerViewer})
	if len(hits) != 2 {
		t.Errorf("SearchTerms(walruses) on the branch = %d hits, want 2 (u2, a3)", len(hits))
	}

	// Pages walk the current branch backwards.
	page, more, err := s.HistoryPage(ctx, "s", 0, 2)
	if err != nil || !more || len(page) != 2 || page[0].ID != u2 || page[1].ID != a3 {
		t.Errorf("HistoryPage(newest, 2) = %v, %v, %v", page, more, err)
	}
	page, more, err = s.HistoryPage(ctx, "s", u2, 5)
	if err != nil || more || len(page) != 2 || page[0].ID != u1 {
		t.Errorf("HistoryPage(before u2) = %v, %v, %v", page, more, err)
	}

	// Forgetting a message in the middle keeps the branch whole.
	if _, err := s.Forget(ctx, []int64{a1}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Children(ctx, "s", []int64{u1})
	if !reflect.DeepEqual(got[u1], []int64{u2}) {
		t.Errorf("after forgetting a1, u1's children = %v, want [%d]", got[u1], u2)
	}

	// Errors are clear; the tree survives a reopen.
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"unknown session", s.SetHead(ctx, "ghost", 0)},
		{"event of another session", func() error {
			_, _ = s.CreateSession(ctx, memory.Session{ID: "other"})
			return s.SetHead(ctx, "other", u2)
		}()},
	} {
		if !errors.Is(tt.err, memory.ErrNotFound) {
			t.Errorf("%s: err = %v, want ErrNotFound", tt.name, tt.err)
		}
	}
	if _, err := s.BranchLeaf(ctx, "other", u2); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("BranchLeaf of another session's event: %v", err)
	}
	s.Close()
	s = openAt(t, path)
	if got, want := historyIDs(t, s, "s"), []int64{u1, u2, a3}; !reflect.DeepEqual(got, want) {
		t.Errorf("History after reopen = %v, want %v", got, want)
	}
	hits, _ = s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"hello"}, Viewer: memory.OwnerViewer})
	if len(hits) != 1 || hits[0].Event.ID != u1 {
		t.Errorf("SearchTerms(hello) after reopen = %v; want only the current branch's", hits)
	}
	all, err := s.SessionEventIDs(ctx, "s")
	if err != nil || len(all) != 5 {
		t.Errorf("SessionEventIDs = %v, %v; want 5 events on every branch (one forgotten)", all, err)
	}
}

// TestBranchesMigration opens a schema-5 file (events without parents): each session's events
// are chained in order, as they were.
func TestBranchesMigration(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/memory.db"
	s := openAt(t, path)
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	a := chat(t, s, "a", "one", "two")
	b := chat(t, s, "b", "uno")
	a = append(a, chat(t, s, "a", "three")...)
	s.Close()
	db := rawDB(t, path, "")
	// Back to schema 5: undo 0008, 0007 and 0006.
	for _, q := range []string{`DROP TRIGGER episodes_event_delete`, `DROP TABLE episodes_fts_vocab`, `DROP TABLE episodes_fts`,
		`DROP TABLE episodes`, `DROP TABLE block_vectors`, `DROP INDEX events_parent`, `ALTER TABLE events DROP COLUMN parent`,
		`ALTER TABLE events DROP COLUMN off_branch`, `PRAGMA user_version = 5`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s = openAt(t, path)
	h, err := s.History(ctx, "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	var parents []int64
	for _, e := range h {
		parents = append(parents, e.Parent)
	}
	if want := []int64{0, a[0], a[1]}; !reflect.DeepEqual(parents, want) {
		t.Errorf("migrated parents = %v, want %v", parents, want)
	}
	if hb, _ := s.History(ctx, "b", 0); len(hb) != 1 || hb[0].ID != b[0] || hb[0].Parent != 0 {
		t.Errorf("session b = %+v", hb)
	}
}

// TestBranchesBackup: a full JSON backup keeps the tree and the current branch; restored into
// a new store, History, the branch points and recall are the same.
func TestBranchesBackup(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	if _, err := src.CreateSession(ctx, memory.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	ids := chat(t, src, "s", "what is a walrus", "a pinniped")
	if err := src.SetHead(ctx, "s", ids[0]); err != nil {
		t.Fatal(err)
	}
	evs, err := src.AppendEvents(ctx, []memory.Event{{Session: "s", Role: memory.RoleAssistant, Content: "a tusked seal"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := backup.ExportJSON(ctx, src, &doc, backup.Options{}); err != nil {
		t.Fatal(err)
	}
	dst := openTemp(t)
	if _, err := backup.RestoreJSON(ctx, dst, bytes.NewReader(doc.Bytes()), backup.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := historyIDs(t, dst, "s"), []int64{ids[0], evs[0].ID}; !reflect.DeepEqual(got, want) {
		t.Errorf("restored History = %v, want %v", got, want)
	}
	kids, _ := dst.Children(ctx, "s", []int64{ids[0]})
	if !reflect.DeepEqual(kids[ids[0]], []int64{ids[1], evs[0].ID}) {
		t.Errorf("restored children = %v", kids)
	}
	if hits, _ := dst.SearchTerms(ctx, memory.TextQuery{Terms: []string{"pinniped"}, Viewer: memory.OwnerViewer}); len(hits) != 0 {
		t.Errorf("the off-branch reply is recalled after restore: %v", hits)
	}
	// A backup written before branches (no parents) restores as one chain per session.
	old := regexp.MustCompile(`,"(parent":\d+|off_branch":true)`).ReplaceAll(doc.Bytes(), nil)
	legacy := openTemp(t)
	if _, err := backup.RestoreJSON(ctx, legacy, bytes.NewReader(old), backup.Options{}); err != nil {
		t.Fatalf("restore of a backup without parents: %v\n%s", err, old)
	}
	if got, want := historyIDs(t, legacy, "s"), []int64{ids[0], ids[1], evs[0].ID}; !reflect.DeepEqual(got, want) {
		t.Errorf("legacy restore History = %v, want %v (one chain)", got, want)
	}
	// A parent from another session is refused.
	bad := bytes.Replace(doc.Bytes(), []byte(fmt.Sprintf(`"parent":%d`, ids[0])), []byte(`"parent":999`), 1)
	if _, err := backup.RestoreJSON(ctx, openTemp(t), bytes.NewReader(bad), backup.Options{}); err == nil || !strings.Contains(err.Error(), "parent 999") {
		t.Errorf("restore with a dangling parent: %v", err)
	}
}

// TestHeadAfterChanges: the store keeps each session's head in memory for the next append's
// parent; every write that moves the head (a branch move, forgetting the head, a restore into
// a new store) must leave the next event a child of the true head.
func TestHeadAfterChanges(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir()+"/memory.db")
	if _, err := s.CreateSession(ctx, memory.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	ids := chat(t, s, "s", "q1", "a1", "q2", "a2")
	appendOne := func(text string) memory.Event {
		t.Helper()
		evs, err := s.AppendEvents(ctx, []memory.Event{{Session: "s", Role: memory.RoleUser, Content: text}})
		if err != nil {
			t.Fatal(err)
		}
		return evs[0]
	}
	if e := appendOne("q3"); e.Parent != ids[3] {
		t.Fatalf("after plain appends: parent %d, want %d", e.Parent, ids[3])
	}
	if err := s.SetHead(ctx, "s", ids[1]); err != nil {
		t.Fatal(err)
	}
	moved := appendOne("q2 edited")
	if moved.Parent != ids[1] {
		t.Fatalf("after a branch move: parent %d, want %d", moved.Parent, ids[1])
	}
	if _, err := s.Forget(ctx, []int64{moved.ID}); err != nil {
		t.Fatal(err)
	}
	if e := appendOne("after forgetting the head"); e.Parent != ids[1] {
		t.Fatalf("after forgetting the head: parent %d, want %d", e.Parent, ids[1])
	}
}
