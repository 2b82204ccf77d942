package cold

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
)

// sceneFixture stores two events that differ only in their session and scene: the same words
// at the same time, so BM25 and every other step score them equally. The second one (the
// higher id, which loses ties) belongs to scene key.
func sceneFixture(t *testing.T, key string) (*Recaller, []memory.Event) {
	t.Helper()
	ctx := context.Background()
	m := memtest.NewMem(nil)
	at := time.Date(2024, 6, 1, 19, 0, 0, 0, time.UTC)
	var evs []memory.Event
	for i, s := range []string{"desk", "qq-group"} {
		if _, err := m.CreateSession(ctx, memory.Session{ID: s}); err != nil {
			t.Fatal(err)
		}
		ev := memory.Event{Session: s, Role: memory.RoleUser, Content: "we planned the hiking trip to the lake", Time: at}
		if i == 1 {
			ev.Scene = key
		}
		evs = append(evs, ev)
	}
	stored, err := m.AppendEvents(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	// The episode step adds a share of the best score to every episode's events, which would
	// couple the two scores: it is off here, where the scene boost's arithmetic is checked.
	p := DefaultParams()
	p.Episode = 0
	r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Params: &p})
	if err != nil {
		t.Fatal(err)
	}
	return r, stored
}

func TestSceneBoost(t *testing.T) {
	const key = "chan:qq/peer:group_1"
	ctx := context.Background()
	r, evs := sceneFixture(t, key)
	recall := func(scenes map[string]float64) []Hit {
		t.Helper()
		hits, err := r.Recall(ctx, Query{Text: "hiking trip", Viewer: memory.OwnerViewer, K: 5, Scenes: scenes})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	plain := recall(nil)
	if len(plain) != 2 || plain[0].Event.ID != evs[0].ID || plain[0].Score != plain[1].Score {
		t.Fatalf("fixture: the two events should tie, lower id first: %+v", plain)
	}

	t.Run("no scene, or none that matches, changes nothing", func(t *testing.T) {
		for _, scenes := range []map[string]float64{{}, {"scene:0123456789ab": 1}, {"": 1}, {key: 0}} {
			if got := recall(scenes); !reflect.DeepEqual(got, plain) {
				t.Fatalf("Scenes %v changed the result:\n%+v\nwant\n%+v", scenes, got, plain)
			}
		}
	})

	cases := []struct {
		name string
		sim  float64
	}{{"a weak match", 0.35}, {"a full match", 1}}
	for _, tc := range cases {
		t.Run(tc.name+" reorders equal events", func(t *testing.T) {
			hits := recall(map[string]float64{key: tc.sim, "scene:other": 1})
			if len(hits) != 2 || hits[0].Event.ID != evs[1].ID {
				t.Fatalf("the scene's event is not first: %+v", hits)
			}
			if want := plain[0].Score * (1 + DefaultParams().SceneBoost*tc.sim); math.Abs(hits[0].Score-want) > 1e-12*want || hits[1].Score != plain[0].Score {
				t.Fatalf("scores %v, %v; want %v, %v", hits[0].Score, hits[1].Score, want, plain[0].Score)
			}
			if !strings.Contains(hits[0].Reason, "scene "+key) || strings.Contains(hits[1].Reason, "scene") {
				t.Fatalf("reasons %q / %q", hits[0].Reason, hits[1].Reason)
			}
		})
	}
}
