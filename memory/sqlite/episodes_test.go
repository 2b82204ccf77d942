package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// episodeState reads the episodes as stored: "first-last indexed" per episode, in id order.
func episodeState(t *testing.T, path string) []string {
	t.Helper()
	rows, err := rawDB(t, path, "&mode=ro").Query(`SELECT first_id, last_id, indexed FROM episodes ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var first, last int64
		var indexed bool
		if err := rows.Scan(&first, &last, &indexed); err != nil {
			t.Fatal(err)
		}
		s := map[bool]string{true: "indexed", false: "pending"}[indexed]
		out = append(out, fmtRange(first, last)+" "+s)
	}
	return out
}

func fmtRange(a, b int64) string { return fmt.Sprintf("%d-%d", a, b) }

func searchEpisodes(t *testing.T, s *sqlite.Store, terms ...string) []memory.EpisodeHit {
	t.Helper()
	hits, err := s.SearchEpisodes(context.Background(), memory.EpisodeQuery{Terms: terms, Viewer: memory.OwnerViewer})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestEpisodesIndexedOnceClosed: an episode stays pending while it may grow, is indexed when a
// later one of its session begins or once it has been quiet for an episode gap (seen from any
// session's newer event), and is searchable either way.
func TestEpisodesIndexedOnceClosed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openAt(t, path)
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	app := func(session, text string, at time.Duration) int64 {
		evs, err := s.AppendEvents(ctx, []memory.Event{{Session: session, Role: memory.RoleUser, Content: text, Time: t0.Add(at)}})
		if err != nil {
			t.Fatal(err)
		}
		return evs[0].ID
	}
	a1 := app("a", "the kiln firing schedule", 0)
	a2 := app("a", "glaze the kiln pots", time.Minute)
	b1 := app("b", "ferry timetable", 2*time.Minute)
	if got, want := episodeState(t, path), []string{fmtRange(a1, a2) + " pending", fmtRange(b1, b1) + " pending"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("episodes = %v, want %v", got, want)
	}
	if hits := searchEpisodes(t, s, "kiln"); len(hits) != 1 || hits[0].FirstID != a1 || hits[0].LastID != a2 {
		t.Fatalf("a pending episode is searchable: %+v", hits)
	}
	a3 := app("a", "violin practice", 3*time.Hour) // closes a's first episode and, quiet, b's
	want := []string{fmtRange(a1, a2) + " indexed", fmtRange(b1, b1) + " indexed", fmtRange(a3, a3) + " pending"}
	if got := episodeState(t, path); !reflect.DeepEqual(got, want) {
		t.Fatalf("episodes = %v, want %v", got, want)
	}
	if hits := searchEpisodes(t, s, "kiln", "ferry", "violin"); len(hits) != 3 {
		t.Fatalf("indexed and pending episodes together: %+v", hits)
	}

	// Forgetting an event takes its words out of its episode at once; the episode is written
	// anew from what remains, and goes when nothing does.
	if _, err := s.Forget(ctx, []int64{a2}); err != nil {
		t.Fatal(err)
	}
	if hits := searchEpisodes(t, s, "glaze"); len(hits) != 0 {
		t.Fatalf("a forgotten word still finds its episode: %+v", hits)
	}
	var n int
	if err := rawDB(t, path, "&mode=ro").QueryRow(`SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH 'glaze'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("episodes_fts rows holding the forgotten word = %d, %v", n, err)
	}
	if hits := searchEpisodes(t, s, "kiln"); len(hits) != 1 {
		t.Fatalf("the rest of the episode: %+v", hits)
	}
	app("b", "later", 7*time.Hour) // quiet episodes are indexed again
	if _, err := s.Forget(ctx, []int64{b1}); err != nil {
		t.Fatal(err)
	}
	app("b", "much later", 12*time.Hour)
	for _, e := range episodeState(t, path) {
		if e == fmtRange(b1, b1)+" indexed" || e == fmtRange(b1, b1)+" pending" {
			t.Errorf("an episode with no events left stays: %v", episodeState(t, path))
		}
	}
	if hits := searchEpisodes(t, s, "kiln"); len(hits) != 1 || hits[0].FirstID != a1 {
		t.Fatalf("after re-indexing: %+v", hits)
	}

	// The cached document counts stay exact as episodes are indexed: the scores equal those
	// of a store opened afresh on the same file.
	queries := [][]string{{"kiln", "later", "violin"}, {"ferry", "pots", "much"}, {"kiln", "kiln", "practice"}}
	for _, q := range queries {
		searchEpisodes(t, s, q...) // warm the caches
	}
	for i := range 40 {
		app("a", "kiln talk again", 20*time.Hour+time.Duration(i)*time.Minute) // closes one at the bound
	}
	app("b", "violin at the ferry", 30*time.Hour)
	fresh := openAt(t, path)
	for _, q := range queries {
		if got, want := searchEpisodes(t, s, q...), searchEpisodes(t, fresh, q...); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: cached %+v, fresh %+v", q, got, want)
		}
	}
}

// TestEpisodesMigration opens a schema-7 file (no episodes): every stored event is assigned and
// indexed; a restore builds them as well.
func TestEpisodesMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openAt(t, path)
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	ids := chat(t, s, "a", "the kiln firing schedule", "glaze the kiln pots")
	s.Close()
	db := rawDB(t, path, "")
	for _, q := range []string{`DROP TRIGGER episodes_event_delete`, `DROP TABLE episodes_fts_vocab`, `DROP TABLE episodes_fts`,
		`DROP TABLE episodes`, `PRAGMA user_version = 7`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s = openAt(t, path)
	if got, want := episodeState(t, path), []string{fmtRange(ids[0], ids[1]) + " indexed"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("migrated episodes = %v, want %v", got, want)
	}
	var doc bytes.Buffer
	if err := backup.ExportJSON(ctx, s, &doc, backup.Options{}); err != nil {
		t.Fatal(err)
	}
	dstPath := filepath.Join(t.TempDir(), "memory.db")
	dst := openAt(t, dstPath)
	if _, err := backup.RestoreJSON(ctx, dst, bytes.NewReader(doc.Bytes()), backup.Options{}); err != nil {
		t.Fatal(err)
	}
	if hits := searchEpisodes(t, dst, "glaze"); len(hits) != 1 || hits[0].FirstID != ids[0] || hits[0].LastID != ids[1] {
		t.Fatalf("restored episodes: %+v", hits)
	}
}
