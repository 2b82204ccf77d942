package sqlite_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

func TestPutScene(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	seen := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)

	declared, err := s.PutScene(ctx, memory.Scene{Key: "chan:qq/peer:group_1", Declared: true,
		Features: map[string]float64{"channel:qq": 1, "partner:group_1": 1}, Occurrences: 2, Strength: 1.5, Seen: seen})
	if err != nil {
		t.Fatalf("PutScene(create): %v", err)
	}
	if declared.ID <= 0 || !declared.Seen.Equal(seen) || declared.Created.IsZero() || declared.Created.Equal(seen) {
		t.Errorf("created scene %+v: want an id, Seen as given, Created now", declared)
	}
	pending, err := s.PutScene(ctx, memory.Scene{Key: "emergent-1", Features: map[string]float64{"tool:shell": 0.8}, Occurrences: 1})
	if err != nil {
		t.Fatalf("PutScene(create): %v", err)
	}
	if !pending.Seen.Equal(pending.Created) || pending.Seen.IsZero() || pending.ID == declared.ID {
		t.Errorf("scene without times %+v: want Seen = Created = now", pending)
	}

	// Replace by id: everything but a zero Created.
	edit := pending
	edit.Key, edit.Features, edit.Occurrences, edit.Strength = "emergent-renamed", map[string]float64{"topic:hiking": 0.4}, 3, 2.25
	edit.Seen, edit.Created = seen.Add(time.Hour), time.Time{}
	replaced, err := s.PutScene(ctx, edit)
	if err != nil {
		t.Fatalf("PutScene(replace): %v", err)
	}
	want := edit
	want.Created = pending.Created
	if !reflect.DeepEqual(replaced, want) {
		t.Errorf("replaced = %+v\nwant       %+v", replaced, want)
	}

	tests := []struct {
		name string
		sc   memory.Scene
		want error
	}{
		{"duplicate key", memory.Scene{Key: "chan:qq/peer:group_1"}, memory.ErrExists},
		{"replace with another scene's key", memory.Scene{ID: replaced.ID, Key: "chan:qq/peer:group_1"}, memory.ErrExists},
		{"unknown id", memory.Scene{ID: 999, Key: "x"}, memory.ErrNotFound},
		{"negative id", memory.Scene{ID: -1, Key: "x"}, memory.ErrInvalid},
		{"no key", memory.Scene{}, memory.ErrInvalid},
		{"NaN strength", memory.Scene{Key: "x", Strength: math.NaN()}, memory.ErrInvalid},
		{"negative strength", memory.Scene{Key: "x", Strength: -1}, memory.ErrInvalid},
		{"negative occurrences", memory.Scene{Key: "x", Occurrences: -1}, memory.ErrInvalid},
		{"infinite weight", memory.Scene{Key: "x", Features: map[string]float64{"a": math.Inf(1)}}, memory.ErrInvalid},
		{"negative weight", memory.Scene{Key: "x", Features: map[string]float64{"a": -0.1}}, memory.ErrInvalid},
		{"empty feature", memory.Scene{Key: "x", Features: map[string]float64{"": 1}}, memory.ErrInvalid},
	}
	for _, tc := range tests {
		if _, err := s.PutScene(ctx, tc.sc); !errors.Is(err, tc.want) {
			t.Errorf("%s: PutScene = %v, want %v", tc.name, err, tc.want)
		}
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	all, err := s.Scenes(ctx)
	if err != nil || !reflect.DeepEqual(all, []memory.Scene{declared, replaced}) {
		t.Fatalf("Scenes after reopen = %+v, %v\nwant %+v", all, err, []memory.Scene{declared, replaced})
	}

	if err := s.DeleteScene(ctx, declared.ID); err != nil {
		t.Fatalf("DeleteScene: %v", err)
	}
	if err := s.DeleteScene(ctx, declared.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("DeleteScene twice = %v, want ErrNotFound", err)
	}
	if all, err := s.Scenes(ctx); err != nil || len(all) != 1 || all[0].ID != replaced.ID {
		t.Errorf("Scenes after delete = %+v, %v", all, err)
	}
	// The deleted scene's key is free again.
	if _, err := s.PutScene(ctx, memory.Scene{Key: "chan:qq/peer:group_1"}); err != nil {
		t.Errorf("PutScene with a freed key: %v", err)
	}
}

func TestSetScene(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	blkSession(t, s, "a", memory.Scope{})
	blkSession(t, s, "b", memory.Scope{})
	evs, err := s.AppendEvents(ctx, []memory.Event{
		{Session: "a", Role: memory.RoleUser, Content: "one", Scene: "old"},
		{Session: "a", Role: memory.RoleUser, Content: "two"},
		{Session: "b", Role: memory.RoleUser, Content: "three"},
	})
	if err != nil {
		t.Fatal(err)
	}
	scenesOf := func(session string) []string {
		t.Helper()
		hist, err := s.History(ctx, session, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range hist {
			out = append(out, e.Scene)
		}
		return out
	}
	// Cache both tails first: SetScene must not leave them stale.
	if got := scenesOf("a"); !reflect.DeepEqual(got, []string{"old", ""}) {
		t.Fatalf("scenes of a = %q", got)
	}
	scenesOf("b")

	tests := []struct {
		name  string
		ids   []int64
		key   string
		err   error
		wantA []string
		wantB []string
	}{
		{"two sessions", []int64{evs[0].ID, evs[2].ID, evs[2].ID}, "hiking", nil, []string{"hiking", ""}, []string{"hiking"}},
		{"unknown id changes nothing", []int64{evs[1].ID, 999}, "x", memory.ErrNotFound, []string{"hiking", ""}, []string{"hiking"}},
		{"no ids", nil, "y", nil, []string{"hiking", ""}, []string{"hiking"}},
		{"clear", []int64{evs[0].ID}, "", nil, []string{"", ""}, []string{"hiking"}},
		{"one event", []int64{evs[1].ID}, "work", nil, []string{"", "work"}, []string{"hiking"}},
	}
	for _, tc := range tests {
		if err := s.SetScene(ctx, tc.ids, tc.key); !errors.Is(err, tc.err) {
			t.Fatalf("%s: SetScene = %v, want %v", tc.name, err, tc.err)
		}
		if got := scenesOf("a"); !reflect.DeepEqual(got, tc.wantA) {
			t.Errorf("%s: scenes of a = %q, want %q", tc.name, got, tc.wantA)
		}
		if got := scenesOf("b"); !reflect.DeepEqual(got, tc.wantB) {
			t.Errorf("%s: scenes of b = %q, want %q", tc.name, got, tc.wantB)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	if got := scenesOf("a"); !reflect.DeepEqual(got, []string{"", "work"}) {
		t.Errorf("scenes of a after reopen = %q", got)
	}
}
