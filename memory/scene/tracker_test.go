package scene

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

const day = 24 * time.Hour

// t0 is the tests' first "now": a Tuesday afternoon (UTC).
var t0 = time.Date(2025, 3, 4, 14, 0, 0, 0, time.UTC)

// clock is an injected clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a scene store under test, with a few events that exist in it to tag.
type env struct {
	store   memory.SceneStore
	events  []int64
	sceneOf func(t *testing.T, id int64) string
}

func memEnv(t *testing.T) env {
	m := newMemStore()
	return env{store: m, events: []int64{1, 2, 3, 4}, sceneOf: func(_ *testing.T, id int64) string { return m.sceneOf(id) }}
}

func TestTrackerMem(t *testing.T) { testTracker(t, memEnv) }

// testTracker runs the tracker's tests against the store newEnv makes (one per subtest).
func testTracker(t *testing.T, newEnv func(t *testing.T) env) {
	ctx := context.Background()
	setup := func(t *testing.T) (env, *Tracker, *clock) {
		t.Helper()
		e := newEnv(t)
		c := &clock{now: t0}
		return e, NewTracker(e.store, Options{Clock: c.Now, Location: time.UTC}), c
	}
	stored := func(t *testing.T, e env, key string) (memory.Scene, bool) {
		t.Helper()
		all, err := e.store.Scenes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if s.Key == key {
				return s, true
			}
		}
		return memory.Scene{}, false
	}
	observe := func(t *testing.T, tr *Tracker, o Obs, declared string, evs ...int64) string {
		t.Helper()
		key, err := tr.Observe(ctx, o, declared, evs)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	listed := func(t *testing.T, tr *Tracker) []memory.Scene {
		t.Helper()
		ss, err := tr.Scenes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	match := func(t *testing.T, tr *Tracker, o Obs, declared string) map[string]float64 {
		t.Helper()
		m, err := tr.Match(ctx, o, declared)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	evening := time.Date(2025, 3, 4, 20, 0, 0, 0, time.UTC)
	hiking := Obs{Channel: "qq", Partner: "bob", Tools: []string{"shell"}, Topics: []string{"hiking"}, Time: evening}

	t.Run("a scene emerges at the second occurrence, not the first", func(t *testing.T) {
		e, tr, _ := setup(t)
		k1 := observe(t, tr, hiking, "", e.events[0])
		if !strings.HasPrefix(k1, "scene:") || len(k1) != len("scene:")+12 {
			t.Fatalf("key %q", k1)
		}
		s, ok := stored(t, e, k1)
		if !ok || s.Occurrences != 1 || s.Strength != 1 || s.Declared {
			t.Fatalf("pending candidate %+v (found %v)", s, ok)
		}
		if ss := listed(t, tr); len(ss) != 0 {
			t.Fatalf("a pending candidate is listed: %+v", ss)
		}
		if m := match(t, tr, hiking, ""); len(m) != 0 {
			t.Fatalf("a pending candidate matches: %v", m)
		}
		// Same channel, partner and tool; another topic and time of day: 2.8 / 4.0 = 0.7.
		bread := Obs{Channel: "qq", Partner: "bob", Tools: []string{"shell"}, Topics: []string{"bread"}, Time: t0}
		if k2 := observe(t, tr, bread, "", e.events[1]); k2 != k1 {
			t.Fatalf("second occurrence keyed %q, want %q", k2, k1)
		}
		ss := listed(t, tr)
		core := map[string]float64{"channel:qq": 1, "partner:bob": 1, "tool:shell": 0.8}
		if len(ss) != 1 || ss[0].Key != k1 || ss[0].Occurrences != 2 || !near(ss[0].Strength, 2) || !reflect.DeepEqual(ss[0].Features, core) {
			t.Fatalf("scenes after the second occurrence: %+v", ss)
		}
		if m := match(t, tr, hiking, ""); len(m) != 1 || !near(m[k1], 2.8/3.4) {
			t.Fatalf("match %v", m)
		}
		for _, ev := range e.events[:2] {
			if got := e.sceneOf(t, ev); got != k1 {
				t.Fatalf("event %d tagged %q, want %q", ev, got, k1)
			}
		}
		// From now on the features are fixed.
		observe(t, tr, hiking, "")
		if s, _ := stored(t, e, k1); s.Occurrences != 3 || !reflect.DeepEqual(s.Features, core) {
			t.Fatalf("third occurrence changed the scene: %+v", s)
		}
	})

	// A seeded scene with features {channel:a 1, tod:afternoon 0.2, pad:x w} against the print
	// {channel:a 1, tod:afternoon 0.2}: similarity 1.2 / (1.2 + w).
	padFor := func(sim float64) float64 { return 1.2/sim - 1.2 }
	seed := func(t *testing.T, e env, key string, occ int, sim float64) {
		t.Helper()
		f := map[string]float64{"channel:a": 1, "tod:afternoon": 0.2, "pad:x": padFor(sim)}
		if _, err := e.store.PutScene(ctx, memory.Scene{Key: key, Features: f, Strength: float64(occ), Occurrences: occ, Seen: t0, Created: t0}); err != nil {
			t.Fatal(err)
		}
	}
	plain := Obs{Channel: "a", Time: t0}
	for _, tc := range []struct {
		sim  float64
		join bool
	}{{0.49, false}, {0.5, true}, {0.51, true}, {0.9, true}} {
		t.Run(fmt.Sprintf("join threshold %g", tc.sim), func(t *testing.T) {
			if got := Similarity(Features(plain, time.UTC), Fingerprint{"channel:a": 1, "tod:afternoon": 0.2, "pad:x": padFor(tc.sim)}); !near(got, tc.sim) {
				t.Fatalf("fixture similarity %v, want %v", got, tc.sim)
			}
			e, tr, _ := setup(t)
			seed(t, e, "scene:seeded", 1, tc.sim)
			key := observe(t, tr, plain, "")
			if (key == "scene:seeded") != tc.join {
				t.Fatalf("similarity %v: observed into %q; join %v", tc.sim, key, tc.join)
			}
			s, _ := stored(t, e, "scene:seeded")
			if tc.join && (s.Occurrences != 2 || !reflect.DeepEqual(s.Features, map[string]float64{"channel:a": 1, "tod:afternoon": 0.2})) {
				t.Fatalf("joined candidate %+v", s)
			}
			if !tc.join {
				if s.Occurrences != 1 {
					t.Fatalf("candidate changed: %+v", s)
				}
				if n, ok := stored(t, e, key); !ok || n.Occurrences != 1 || n.Strength != 1 {
					t.Fatalf("new candidate %+v (found %v)", n, ok)
				}
			}
		})
	}

	for _, tc := range []struct {
		sim    float64
		occ    int
		recall bool
	}{{0.34, 2, false}, {0.35, 2, true}, {0.6, 2, true}, {1, 1, false}} {
		t.Run(fmt.Sprintf("recall threshold %g occurrences %d", tc.sim, tc.occ), func(t *testing.T) {
			e, tr, _ := setup(t)
			seed(t, e, "scene:seeded", tc.occ, tc.sim)
			m := match(t, tr, plain, "")
			sim, ok := m["scene:seeded"]
			if ok != tc.recall || (ok && !near(sim, tc.sim)) || len(m) > 1 {
				t.Fatalf("match %v; want recall %v at %v", m, tc.recall, tc.sim)
			}
		})
	}

	t.Run("strength halves every 30 days and grows by one per recurrence", func(t *testing.T) {
		e, tr, c := setup(t)
		key := observe(t, tr, hiking, "")
		c.Add(30 * day)
		observe(t, tr, hiking, "") // 1 → 0.5, + 1
		steps := []struct {
			after time.Duration
			want  float64
		}{{0, 1.5}, {30 * day, 0.75}, {15 * day, 0.75 / math.Sqrt2}}
		for _, st := range steps {
			c.Add(st.after)
			ss := listed(t, tr)
			if len(ss) != 1 || ss[0].Key != key || !near(ss[0].Strength, st.want) {
				t.Fatalf("after %v more: %+v, want strength %v", st.after, ss, st.want)
			}
		}
		observe(t, tr, hiking, "")
		if s, _ := stored(t, e, key); !near(s.Strength, 0.75/math.Sqrt2+1) || s.Occurrences != 3 || !s.Seen.Equal(c.Now()) {
			t.Fatalf("after a recurrence: %+v", s)
		}
	})

	t.Run("decay removes faded scenes and stale candidates, never declared ones", func(t *testing.T) {
		e, tr, c := setup(t)
		// Seen at t0, decayed at t0+age: kept or removed.
		cases := []struct {
			key      string
			declared bool
			occ      int
			strength float64
			seen     time.Duration // before the decay, which runs at t0 + 200 days
			keep     bool
		}{
			{"scene:pending-stale", false, 1, 1, 30 * day, false},
			{"scene:pending-fresh", false, 1, 1, 29 * day, true},
			{"scene:strong", false, 2, 2, 150 * day, true},    // 2 / 2^5 = 0.0625
			{"scene:faded", false, 2, 2, 180 * day, false},    // 2 / 2^6 = 0.03125
			{"chan:qq/peer:old", true, 1, 1, 200 * day, true}, // declared: 1 / 2^6.7 but kept
		}
		now := t0.Add(200 * day)
		for _, tc := range cases {
			if _, err := e.store.PutScene(ctx, memory.Scene{Key: tc.key, Declared: tc.declared, Features: map[string]float64{"channel:" + tc.key: 1},
				Strength: tc.strength, Occurrences: tc.occ, Seen: now.Add(-tc.seen), Created: t0}); err != nil {
				t.Fatal(err)
			}
		}
		c.Add(200 * day)
		removed, err := tr.Decay(ctx)
		if err != nil || removed != 2 {
			t.Fatalf("Decay = %d, %v; want 2", removed, err)
		}
		for _, tc := range cases {
			if _, ok := stored(t, e, tc.key); ok != tc.keep {
				t.Errorf("%s: kept %v, want %v", tc.key, ok, tc.keep)
			}
		}
		if removed, err := tr.Decay(ctx); err != nil || removed != 0 {
			t.Fatalf("second Decay = %d, %v", removed, err)
		}
	})

	t.Run("declared scenes take their features from the key", func(t *testing.T) {
		e, tr, c := setup(t)
		const key = "chan:qq/peer:group_1"
		o := Obs{Channel: "qq", Partner: "group_1", Tools: []string{"shell"}, Topics: []string{"hiking"}, Time: evening}
		if got := observe(t, tr, o, key, e.events[0]); got != key {
			t.Fatalf("Observe = %q", got)
		}
		want := map[string]float64{"channel:qq": 1, "partner:group_1": 1}
		s, ok := stored(t, e, key)
		if !ok || !s.Declared || s.Occurrences != 1 || s.Strength != 1 || !reflect.DeepEqual(s.Features, want) {
			t.Fatalf("declared scene %+v (found %v)", s, ok)
		}
		if ss := listed(t, tr); len(ss) != 1 || ss[0].Key != key {
			t.Fatalf("a declared scene is listed from its first occurrence: %+v", ss)
		}
		if got := e.sceneOf(t, e.events[0]); got != key {
			t.Fatalf("event tagged %q", got)
		}
		c.Add(30 * day)
		observe(t, tr, Obs{}, key)
		if s, _ := stored(t, e, key); s.Occurrences != 2 || !near(s.Strength, 1.5) || !reflect.DeepEqual(s.Features, want) {
			t.Fatalf("recurrence: %+v", s)
		}
		// An undeclared observation never joins a declared scene…
		if got := observe(t, tr, Obs{Channel: "qq", Partner: "group_1"}, ""); got == key || !strings.HasPrefix(got, "scene:") {
			t.Fatalf("emergent observation keyed %q", got)
		}
		// …but matches it for recall: 2 / (2 + 0.8 + 0.4 + 0.2).
		if m := match(t, tr, o, ""); len(m) != 1 || !near(m[key], 2/3.4) {
			t.Fatalf("match %v", m)
		}
		if m := match(t, tr, Obs{Channel: "api"}, key); len(m) != 1 || m[key] != 1 {
			t.Fatalf("match by declared key %v", m)
		}
		if m := match(t, tr, Obs{Channel: "qq"}, "chan:qq"); len(m) != 1 || !near(m[key], 0.5) {
			t.Fatalf("match by a wider declared key %v", m)
		}
	})

	t.Run("bad declared keys fail and store nothing", func(t *testing.T) {
		e, tr, _ := setup(t)
		for _, key := range []string{"qq", "peer:bob/chan:qq", "chan:"} {
			if _, err := tr.Observe(ctx, hiking, key, e.events[:1]); err == nil || !strings.Contains(err.Error(), key) {
				t.Fatalf("Observe(%q): %v", key, err)
			}
			if _, err := tr.Match(ctx, hiking, key); err == nil {
				t.Fatalf("Match(%q) accepted", key)
			}
		}
		if all, _ := e.store.Scenes(ctx); len(all) != 0 || e.sceneOf(t, e.events[0]) != "" {
			t.Fatalf("stored %+v", all)
		}
	})

	t.Run("keys are deterministic", func(t *testing.T) {
		_, tr1, _ := setup(t)
		_, tr2, _ := setup(t)
		a := Obs{Channel: "QQ", Partner: "bob", Tools: []string{"a", "b"}, Time: evening}
		b := Obs{Channel: "qq", Partner: "Bob", Tools: []string{"b", "a"}, Time: evening}
		k1, k2 := observe(t, tr1, a, ""), observe(t, tr2, b, "")
		sum := sha256.Sum256([]byte("channel:qq\npartner:bob\ntod:evening\ntool:a\ntool:b"))
		if want := "scene:" + hex.EncodeToString(sum[:])[:12]; k1 != want || k2 != want {
			t.Fatalf("keys %q %q, want %q", k1, k2, want)
		}
	})

	t.Run("an observation without features belongs to no scene", func(t *testing.T) {
		e, tr, _ := setup(t)
		if key := observe(t, tr, Obs{Tools: []string{""}}, "", e.events[0]); key != "" {
			t.Fatalf("key %q", key)
		}
		if all, _ := e.store.Scenes(ctx); len(all) != 0 {
			t.Fatalf("stored %+v", all)
		}
		if m := match(t, tr, Obs{}, ""); len(m) != 0 {
			t.Fatalf("match %v", m)
		}
	})

	t.Run("concurrent observations all count", func(t *testing.T) {
		e, tr, _ := setup(t)
		const workers, each = 4, 5
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for range workers {
			wg.Go(func() {
				for range each {
					if _, err := tr.Observe(ctx, hiking, "", nil); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		all, err := e.store.Scenes(ctx)
		if err != nil || len(all) != 1 || all[0].Occurrences != workers*each || !near(all[0].Strength, workers*each) {
			t.Fatalf("%+v %v", all, err)
		}
	})
}

func TestTrackerStoreErrors(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	boom := errors.New("disk on fire")
	m.fail = boom
	tr := NewTracker(m, Options{Clock: func() time.Time { return t0 }})
	if _, err := tr.Observe(ctx, Obs{Channel: "qq"}, "", nil); !errors.Is(err, boom) || !strings.Contains(err.Error(), "scene observe") {
		t.Fatalf("Observe: %v", err)
	}
	if _, err := tr.Match(ctx, Obs{Channel: "qq"}, ""); !errors.Is(err, boom) {
		t.Fatalf("Match: %v", err)
	}
	if _, err := tr.Scenes(ctx); !errors.Is(err, boom) {
		t.Fatalf("Scenes: %v", err)
	}
	if _, err := tr.Decay(ctx); !errors.Is(err, boom) {
		t.Fatalf("Decay: %v", err)
	}
}

// TestPendingCandidatesAreBounded: one-off situations beyond MaxPending forget the oldest.
func TestPendingCandidatesAreBounded(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := newMemStore()
	tr := NewTracker(store, Options{Clock: func() time.Time { now = now.Add(time.Minute); return now }, Location: time.UTC, MaxPending: 3})
	var keys []string
	for i := range 5 {
		k, err := tr.Observe(ctx, Obs{Channel: fmt.Sprintf("c%d", i), Partner: fmt.Sprintf("p%d", i)}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	all, err := store.Scenes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range all {
		got = append(got, s.Key)
	}
	slices.Sort(got)
	want := slices.Clone(keys[2:])
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stored candidates %q; want the 3 seen last %q", got, want)
	}
	// A recurring one is a scene, not pending: it survives any number of new candidates.
	if _, err := tr.Observe(ctx, Obs{Channel: "c4", Partner: "p4"}, "", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := tr.Observe(ctx, Obs{Channel: fmt.Sprintf("n%d", i), Partner: "x"}, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	ss, err := tr.Scenes(ctx)
	if err != nil || len(ss) != 1 || ss[0].Key != keys[4] {
		t.Fatalf("scenes = %+v, %v; want the recurring one", ss, err)
	}
}
