package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestHistoryTailCacheMatchesTheDatabase interleaves appends and History calls of every size
// (below, at and above the cached tail, and "all") on two sessions, and compares each answer with
// a model of what was appended and with a fresh Store reading the same file without a cache.
func TestHistoryTailCacheMatchesTheDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{Clock: tickClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	model := map[string][]memory.Event{}
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, memory.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	limits := []int{0, -1, 1, 2, 7, 200, 511, 512, 513, 1500}
	for step := 0; step < 1400; step++ {
		sess := []string{"a", "b"}[rng.IntN(2)]
		if rng.IntN(3) > 0 {
			n := 1 + rng.IntN(3)
			var batch []memory.Event
			for i := 0; i < n; i++ {
				batch = append(batch, memory.Event{Session: sess, Role: memory.RoleUser, Content: fmt.Sprintf("%s-%d-%d", sess, step, i),
					ToolCalls: []memory.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}[:rng.IntN(2)]})
			}
			out, err := s.AppendEvents(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			model[sess] = append(model[sess], out...)
			continue
		}
		limit := limits[rng.IntN(len(limits))]
		got, err := s.History(ctx, sess, limit)
		if err != nil {
			t.Fatal(err)
		}
		want := model[sess]
		if limit > 0 && len(want) > limit {
			want = want[len(want)-limit:]
		}
		if len(want) == 0 {
			want = nil
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: History(%s, %d) has %d events, want %d (first diff at %d)", step, sess, limit, len(got), len(want), firstDiff(got, want))
		}
		if len(got) > 0 && len(got[0].ToolCalls) > 0 {
			got[0].ToolCalls[0].Name = "mutated by the caller"
		}
	}
	fresh, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, sess := range []string{"a", "b"} {
		a, _ := s.History(ctx, sess, 300)
		b, _ := fresh.History(ctx, sess, 300)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("session %s: cached history differs from a fresh read", sess)
		}
	}
}

func firstDiff(a, b []memory.Event) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}
