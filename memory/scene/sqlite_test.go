package scene

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// sqliteEnv is the real store: a SQLite file in a temporary directory, with four events to tag.
func sqliteEnv(t *testing.T) env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{Clock: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.CreateSession(ctx, memory.Session{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	evs := make([]memory.Event, 4)
	for i := range evs {
		evs[i] = memory.Event{Session: "chat", Role: memory.RoleUser, Content: "hello", Time: t0}
	}
	evs, err = st.AppendEvents(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	sceneOf := func(t *testing.T, id int64) string {
		t.Helper()
		hits, err := st.Events(ctx, []int64{id})
		if err != nil || len(hits) != 1 {
			t.Fatalf("event %d: %v %v", id, hits, err)
		}
		return hits[0].Event.Scene
	}
	return env{store: st, events: ids, sceneOf: sceneOf}
}

func TestTrackerSQLite(t *testing.T) { testTracker(t, sqliteEnv) }

// BenchmarkSQLite measures Observe and Match with 1,000 stored scenes: both read every scene,
// and Observe writes one.
func BenchmarkSQLite(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "memory.db"), sqlite.Options{Clock: func() time.Time { return t0 }})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := range 1000 {
		f := Features(Obs{Channel: "qq", Partner: fmt.Sprintf("p%d", i), Tools: []string{"shell"}, Topics: []string{"a", "b"}}, time.UTC)
		if _, err := st.PutScene(ctx, memory.Scene{Key: fingerprintKey(f), Features: f, Strength: 2, Occurrences: 2, Seen: t0, Created: t0}); err != nil {
			b.Fatal(err)
		}
	}
	tr := NewTracker(st, Options{Clock: func() time.Time { return t0 }, Location: time.UTC})
	o := Obs{Channel: "qq", Partner: "p500", Tools: []string{"shell"}, Topics: []string{"a", "c"}, Time: t0}
	b.Run("Observe", func(b *testing.B) {
		for b.Loop() {
			if _, err := tr.Observe(ctx, o, "", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Match", func(b *testing.B) {
		for b.Loop() {
			if m, err := tr.Match(ctx, o, ""); err != nil || len(m) == 0 {
				b.Fatal(m, err)
			}
		}
	})
}
