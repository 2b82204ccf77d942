package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// buildV1 creates a database with only the 0001 schema (read from the same embedded file) and a
// few rows, as a binary of schema version 1 would have left it.
func buildV1(t *testing.T, path string) {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("migrations", "0001_init.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path, "&_journal_mode=WAL")
	stmts := []string{
		string(schema),
		`PRAGMA user_version = 1`,
		`INSERT INTO sessions (id, title, created, updated) VALUES ('old', 'Old chat', 1000, 2000)`,
		`INSERT INTO events (session, time, role, content, scope_kind, scope_group) VALUES ('old', 1100, 'user', 'Hello OLD world', 1, 'g')`,
		`INSERT INTO events (session, time, role, content, tool_calls) VALUES ('old', 1200, 'assistant', '',
			'[{"id":"c1","name":"weather","arguments":"{\"city\":\"Oslo\"}"}]')`,
		`INSERT INTO events (session, time, role, content, tool_call_id, tool_name, tool_status) VALUES ('old', 1300, 'tool', 'sunny', 'c1', 'forecast', 'ok')`,
		`INSERT INTO events_fts (rowid, content) SELECT id, content FROM events`,
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	buildV1(t, path)

	// A tokenizer that fails during the re-index fails Open and leaves version 1 in place.
	errDict := errors.New("jieba dictionary missing")
	_, err := sqlite.Open(ctx, path, sqlite.Options{Tokenize: func(string) ([]string, error) { return nil, errDict }})
	if !errors.Is(err, errDict) {
		t.Fatalf("Open with a failing tokenizer: %v, want %v", err, errDict)
	}
	db := rawDB(t, path, "")
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 1 {
		t.Fatalf("user_version after a failed migration = %d, %v; want 1", v, err)
	}
	db.Close()

	s := openAt(t, path)
	if v, err := s.SchemaVersion(ctx); err != nil || v != sqlite.MaxSchemaVersion() || v < 2 {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
	sess, err := s.GetSession(ctx, "old")
	if err != nil || sess.Title != "Old chat" || sess.Scope != (memory.Scope{}) || sess.Channel != "" {
		t.Fatalf("GetSession after migration = %+v, %v", sess, err)
	}
	hist, err := s.History(ctx, "old", 0)
	if err != nil || len(hist) != 3 {
		t.Fatalf("History after migration = %+v, %v", hist, err)
	}
	for _, e := range hist {
		if e.Layer != memory.LayerL1 || e.Accesses != 0 || !e.LastAccess.IsZero() || e.Meta != nil {
			t.Fatalf("migrated event %+v: want layer 1, no accesses, no meta", e)
		}
	}
	if hist[0].Content != "Hello OLD world" || hist[0].Scope != (memory.Scope{Kind: memory.ScopeGroup, Group: "g"}) || hist[1].ToolCalls[0].Name != "weather" {
		t.Fatalf("migrated events lost data: %+v", hist)
	}
	tests := []struct {
		term    string
		want    int64
		indexed string
	}{
		{"old", hist[0].ID, "hello old world"},
		{"oslo", hist[1].ID, "weather city oslo"},
		{"forecast", hist[2].ID, "sunny forecast"},
	}
	for _, tt := range tests {
		t.Run(tt.term, func(t *testing.T) {
			hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{tt.term}, Viewer: memory.OwnerViewer})
			if err != nil || len(hits) != 1 || hits[0].Event.ID != tt.want || hits[0].Indexed != tt.indexed {
				t.Fatalf("SearchTerms(%q) = %+v, %v; want event %d indexed as %q", tt.term, hits, err, tt.want, tt.indexed)
			}
		})
	}
	if hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{"old"}, Viewer: memory.Viewer{Group: "h"}}); err != nil || len(hits) != 0 {
		t.Fatalf("group h sees a migrated group g event: %+v, %v", hits, err)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	// New events keep coming after the old ones and are indexed the new way.
	evs, err := s.AppendEvents(ctx, []memory.Event{{Session: "old", Role: memory.RoleUser, Content: "newer words"}})
	if err != nil || evs[0].ID <= hist[2].ID {
		t.Fatalf("AppendEvents after migration = %+v, %v", evs, err)
	}
}

// spaceTokenizer stands in for jieba: it splits on spaces only and keeps everything else whole.
func spaceTokenizer(text string) ([]string, error) { return strings.Fields(strings.ToLower(text)), nil }

func TestWholeTokensWithAnInjectedTokenizer(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Tokenize: spaceTokenizer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	evs, err := s.AppendEvents(ctx, []memory.Event{
		{Session: "a", Role: memory.RoleUser, Content: "北京 大学 的 学生"},
		{Session: "a", Role: memory.RoleUser, Content: "北京大学 很 好"},
		{Session: "a", Role: memory.RoleUser, Content: "c++ 2024-05-06 a:b café"},
		{Session: "a", Role: memory.RoleUser, Content: "cafe c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		term string
		want []int64
		df   int
	}{
		{"北京", []int64{evs[0].ID}, 1},
		{"大学", []int64{evs[0].ID}, 1},
		{"北京大学", []int64{evs[1].ID}, 1},
		{"京", nil, 0},
		{"c++", []int64{evs[2].ID}, 1},
		{"2024-05-06", []int64{evs[2].ID}, 1},
		{"a:b", []int64{evs[2].ID}, 1},
		{"café", []int64{evs[2].ID}, 1},
		{"cafe", []int64{evs[3].ID}, 1},
		{"2024", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.term, func(t *testing.T) {
			hits, err := s.SearchTerms(ctx, memory.TextQuery{Terms: []string{tt.term}, Viewer: memory.OwnerViewer})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, h := range hits {
				got = append(got, h.Event.ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("SearchTerms(%q) = %v, want %v", tt.term, got, tt.want)
			}
			df, total, err := s.DocFreq(ctx, []string{tt.term})
			if err != nil || df[0] != tt.df || total != 4 {
				t.Fatalf("DocFreq(%q) = %v, %d, %v; want %d, 4", tt.term, df, total, err, tt.df)
			}
		})
	}
	hits, err := s.Events(ctx, []int64{evs[0].ID})
	if err != nil || len(hits) != 1 || hits[0].Indexed != "北京 大学 的 学生" {
		t.Fatalf("Events = %+v, %v; want the jieba tokens", hits, err)
	}
}

func TestTokenizerFailureStoresNothing(t *testing.T) {
	ctx := context.Background()
	errDict := errors.New("jieba dictionary missing")
	tok := func(text string) ([]string, error) {
		if strings.Contains(text, "FAIL") {
			return nil, errDict
		}
		return spaceTokenizer(text)
	}
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Tokenize: tok})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	batches := []struct {
		name  string
		batch []memory.Event
	}{
		{"content", []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "fine"}, {Session: "a", Role: memory.RoleUser, Content: "FAIL here"}}},
		{"tool name", []memory.Event{{Session: "a", Role: memory.RoleTool, ToolName: "FAIL", Content: "x"}}},
		{"tool call", []memory.Event{{Session: "a", Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{Name: "n", Arguments: `"FAIL"`}}}}},
	}
	for _, tt := range batches {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.AppendEvents(ctx, tt.batch)
			if !errors.Is(err, errDict) || got != nil {
				t.Fatalf("AppendEvents = %v, %v; want the tokenizer's error", got, err)
			}
			if n, err := s.CountEvents(ctx, "a"); err != nil || n != 0 {
				t.Fatalf("CountEvents = %d, %v; want 0", n, err)
			}
			if df, total, err := s.DocFreq(ctx, []string{"fine"}); err != nil || df[0] != 0 || total != 0 {
				t.Fatalf("DocFreq = %v, %d, %v; want nothing indexed", df, total, err)
			}
		})
	}
	if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "fine"}}); err != nil {
		t.Fatalf("AppendEvents after failures: %v", err)
	}
}

// TestLayerChangesRaceHistory runs SetLayer and Touch against History readers and then compares
// the cached History with a fresh Store reading the same file.
func TestLayerChangesRaceHistory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	var batch []memory.Event
	for i := range 300 {
		batch = append(batch, memory.Event{Session: "a", Role: memory.RoleUser, Content: fmt.Sprint("event ", i)})
	}
	evs, err := s.AppendEvents(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if _, err := s.History(ctx, "a", []int{0, 10, 600}[(i+r)%3]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, e := range evs {
			l := memory.Layer(1 + i%2)
			if err := s.SetLayer(ctx, []int64{e.ID}, l); err != nil {
				errs <- err
				return
			}
			if i%3 == 0 {
				if err := s.Touch(ctx, []int64{e.ID}, e.Time); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fresh := openAt(t, path)
	for _, limit := range []int{0, 10, 300} {
		a, err1 := s.History(ctx, "a", limit)
		b, err2 := fresh.History(ctx, "a", limit)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("History(%d): cached differs from a fresh read (first diff at %d): %v %v", limit, firstDiff(a, b), err1, err2)
		}
	}
}
