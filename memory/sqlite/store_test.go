package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// tickClock returns a clock that starts in 2024 and advances 1 ms per call.
func tickClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

func openAt(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{Clock: tickClock()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openTemp(t testing.TB) *sqlite.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "memory.db"))
}

// rawDB opens a plain connection to the file, bypassing the Store.
func rawDB(t *testing.T, path, params string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000"+params)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	memtest.RunStoreTests(t, func(t *testing.T) memory.Store { return openTemp(t) })
}

func TestConformanceRealClock(t *testing.T) {
	memtest.RunStoreTests(t, func(t *testing.T) memory.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "hologram")
	path := filepath.Join(dir, "memory.db")
	s := openAt(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700 | os.ModeDir}, {path, 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
}

func TestOpenPathWithURICharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd ?name#1%.db")
	s := openAt(t, path)
	ctx := context.Background()
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatalf("SetSetting: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the literal path: %v", err)
	}
}

func TestWALAndSchema(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	db := rawDB(t, s.Path(), "")
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"user_version", fmt.Sprint(sqlite.MaxSchemaVersion())},
	}
	for _, tt := range tests {
		t.Run(tt.pragma, func(t *testing.T) {
			var got string
			if err := db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tt.pragma, err)
			}
			if got != tt.want {
				t.Fatalf("PRAGMA %s = %q, want %q", tt.pragma, got, tt.want)
			}
		})
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != sqlite.MaxSchemaVersion() || v < 1 {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, sqlite.MaxSchemaVersion())
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatalf("IntegrityCheck: %v", err)
	}
}

func TestSchemaTooNew(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db := rawDB(t, path, "")
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatalf("set user_version: %v", err)
	}
	db.Close()

	s, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer schema succeeded")
	}
	if !errors.Is(err, memory.ErrSchemaTooNew) {
		t.Fatalf("error %v does not wrap ErrSchemaTooNew", err)
	}
	want := fmt.Sprintf("database schema version 99 is newer than this binary supports (%d); upgrade hologram", sqlite.MaxSchemaVersion())
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

func TestDurableAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{Clock: tickClock()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	sess, err := s.CreateSession(ctx, memory.Session{ID: "a", Title: "chat", SystemPrompt: "sp", Model: "m"})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	evs, err := s.AppendEvents(ctx, []memory.Event{
		{Session: "a", TurnID: "t", Role: memory.RoleUser, Content: "hello", Scope: memory.Scope{Kind: memory.ScopeGroup, Group: "g"}},
		{Session: "a", TurnID: "t", Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}},
		{Session: "a", TurnID: "t", Role: memory.RoleTool, ToolCallID: "c", ToolName: "n", ToolStatus: "ok", Content: "42"},
	})
	if err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatalf("SetSetting: %v", err)
	}
	sess, err = s.GetSession(ctx, "a") // Updated was bumped by the append
	if err != nil {
		t.Fatalf("GetSession: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s2 := openAt(t, path)
	hist, err := s2.History(ctx, "a", 0)
	if err != nil || !reflect.DeepEqual(hist, evs) {
		t.Fatalf("History after reopen = %+v, %v\nwant %+v", hist, err, evs)
	}
	if got, err := s2.GetSession(ctx, "a"); err != nil || !reflect.DeepEqual(got, sess) {
		t.Fatalf("GetSession after reopen = %+v, %v; want %+v", got, err, sess)
	}
	if v, err := s2.GetSetting(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("GetSetting after reopen = %q, %v", v, err)
	}
	// New ids continue after the old ones.
	more, err := s2.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser}})
	if err != nil || more[0].ID <= evs[2].ID {
		t.Fatalf("AppendEvents after reopen = %+v, %v; want an id above %d", more, err, evs[2].ID)
	}
}

func TestReadWhileWriteTransactionOpen(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "committed"}}); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	if err := s.SetSetting(ctx, "k", "old"); err != nil {
		t.Fatalf("SetSetting: %v", err)
	}

	// Another writer holds an open write transaction (busy_timeout 0: it never waits).
	other := rawDB(t, s.Path(), "&_txlock=immediate&_busy_timeout=0")
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE settings SET value = 'uncommitted' WHERE key = 'k'`); err != nil {
		t.Fatalf("update in open transaction: %v", err)
	}

	// Every read method works and sees only committed data.
	if v, err := s.GetSetting(ctx, "k"); err != nil || v != "old" {
		t.Fatalf("GetSetting during a write transaction = %q, %v; want old", v, err)
	}
	if h, err := s.History(ctx, "a", 10); err != nil || len(h) != 1 || h[0].Content != "committed" {
		t.Fatalf("History during a write transaction = %+v, %v", h, err)
	}
	if _, err := s.ListSessions(ctx); err != nil {
		t.Fatalf("ListSessions during a write transaction: %v", err)
	}
	if got, err := s.SearchText(ctx, "committed", 5); err != nil || len(got) != 1 {
		t.Fatalf("SearchText during a write transaction = %+v, %v", got, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if v, err := s.GetSetting(ctx, "k"); err != nil || v != "uncommitted" {
		t.Fatalf("GetSetting after commit = %q, %v", v, err)
	}
}

func TestSearchText(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatalf("CreateSession: %v", err)
		}
	}
	evs, err := s.AppendEvents(ctx, []memory.Event{
		{Session: "a", Role: memory.RoleUser, Content: "the cat sat on the mat while the weather was grey and nothing else happened at all"}, // 0
		{Session: "b", Role: memory.RoleAssistant, Content: "cat cat cat"},                                                                   // 1
		{Session: "a", Role: memory.RoleUser, Content: "a dog barks"},                                                                        // 2
		{Session: "b", Role: memory.RoleUser, Content: "Cat and dog"},                                                                        // 3
		{Session: "a", Role: memory.RoleTool, Content: `he said "quote" (a:b) NOT* x`},                                                       // 4
	})
	if err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	ids := func(list []memory.Event) []int64 {
		var out []int64
		for _, e := range list {
			out = append(out, e.ID)
		}
		return out
	}
	tests := []struct {
		name  string
		query string
		limit int
		want  []int64 // in order
	}{
		{"bm25 best first", "cat", 0, []int64{evs[1].ID, evs[3].ID, evs[0].ID}},
		{"limit", "cat", 1, []int64{evs[1].ID}},
		{"all words", "dog cat", 0, []int64{evs[3].ID}},
		{"case folded, ties by id", "DOG", 0, []int64{evs[2].ID, evs[3].ID}},
		{"no match", "giraffe", 0, nil},
		{"empty", "   ", 0, nil},
		{"quote", `"quote"`, 0, []int64{evs[4].ID}},
		{"unbalanced quote", `cat"`, 0, []int64{evs[1].ID, evs[3].ID, evs[0].ID}},
		{"fts operators are words", "NOT", 0, []int64{evs[4].ID}},
		{"column filter syntax", "a:b", 0, []int64{evs[4].ID}},
		{"star and parens", "* ( ) AND OR - ^ +", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SearchText(ctx, tt.query, tt.limit)
			if err != nil {
				t.Fatalf("SearchText(%q): %v", tt.query, err)
			}
			if !reflect.DeepEqual(ids(got), tt.want) {
				t.Fatalf("SearchText(%q) ids = %v, want %v", tt.query, ids(got), tt.want)
			}
		})
	}
	got, err := s.SearchText(ctx, "barks", 0)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], evs[2]) {
		t.Fatalf("SearchText returns the whole event: %+v, %v; want %+v", got, err, evs[2])
	}
}

func TestCheckpointAndCloseTwice(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if err := s.Checkpoint(ctx); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	fi, err := os.Stat(s.Path() + "-wal")
	if err != nil {
		t.Fatalf("stat wal: %v", err)
	}
	if fi.Size() != 0 {
		t.Fatalf("wal has %d bytes after a TRUNCATE checkpoint", fi.Size())
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.GetSession(ctx, "a"); err == nil {
		t.Fatal("GetSession after Close succeeded")
	}
}

func TestIntegrityCheckFindsCorruption(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openAt(t, path)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	// Break an index behind SQLite's back: the sessions table and its index disagree.
	db := rawDB(t, path, "")
	for _, q := range []string{
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = replace(sql, 'updated DESC, id', 'id') WHERE name = 'sessions_updated'",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s.Close()
	s2 := openAt(t, path)
	if err := s2.IntegrityCheck(ctx); err == nil {
		t.Fatal("IntegrityCheck passed on a corrupted index")
	}
}

func BenchmarkAppendEvents(b *testing.B) {
	ctx := context.Background()
	s := openTemp(b)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		b.Fatal(err)
	}
	turn := []memory.Event{
		{Session: "a", Role: memory.RoleUser, Content: "what is the weather in Shanghai tomorrow?", Tokens: 10},
		{Session: "a", Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Shanghai"}`}}, Tokens: 20},
		{Session: "a", Role: memory.RoleTool, ToolCallID: "c1", ToolName: "weather", ToolStatus: "ok", Content: `{"temp":21,"sky":"clear"}`, Tokens: 15},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AppendEvents(ctx, turn); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHistory(b *testing.B) {
	ctx := context.Background()
	s := openTemp(b)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		b.Fatal(err)
	}
	for i := range 400 {
		if _, err := s.AppendEvents(ctx, []memory.Event{
			{Session: "a", Role: memory.RoleUser, Content: fmt.Sprintf("question %d about something", i), Tokens: 8},
			{Session: "a", Role: memory.RoleAssistant, Content: fmt.Sprintf("answer %d with some more words in it", i), Tokens: 12},
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := s.History(ctx, "a", 200)
		if err != nil || len(h) != 200 {
			b.Fatalf("History = %d events, %v", len(h), err)
		}
	}
}

func TestIndexConformance(t *testing.T) {
	memtest.RunIndexTests(t, func(t *testing.T) memtest.IndexedStore { return openTemp(t) })
}
