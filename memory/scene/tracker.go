package scene

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Thresholds and rates (ARCHITECTURE.md §4).
const (
	// joinAt is the similarity at which a fingerprint joins an existing scene or candidate.
	joinAt = 0.5
	// recallAt is the similarity at which a scene counts for recall ([Tracker.Match]).
	recallAt = 0.35
	// minEvidence is the number of occurrences at which a candidate becomes a scene.
	minEvidence = 2
	// fadedBelow is the decayed strength under which an emergent scene is removed by Decay:
	// a scene seen twice fades below it after about 5.3 half-lives (160 days) without recurring.
	fadedBelow = 0.05
	// DefaultMaxPending bounds the pending candidates kept (see Options.MaxPending).
	DefaultMaxPending = 1000
	// DefaultHalfLife is the time over which a scene's strength halves.
	DefaultHalfLife = 30 * 24 * time.Hour
	// slack absorbs rounding in the thresholds' comparisons: weights such as 0.8 and 0.4 have no
	// exact binary form, and a print exactly at a threshold must count as reaching it.
	slack = 1e-9
)

// Options configures a Tracker. The zero value is usable.
type Options struct {
	// Clock supplies "now" (nil: time.Now).
	Clock func() time.Time
	// Location is where the time of day is read (nil: time.Local).
	Location *time.Location
	// HalfLife is the strength's half-life (0: DefaultHalfLife).
	HalfLife time.Duration
	// MaxPending bounds the pending candidates (0: DefaultMaxPending): past it, the one seen
	// longest ago is forgotten, so a stream of one-off situations cannot grow without bound.
	MaxPending int
}

// Tracker learns scenes from observations and matches observations to them. It keeps its state
// in a [memory.SceneStore]; it is deterministic for a given store, clock and sequence of calls,
// and safe for concurrent use (writes are serialised).
//
// A pending candidate is an emergent scene seen once (Occurrences 1): it is kept so that a second
// similar observation can confirm it, but it is never listed nor used for recall. Declared scenes
// are never pending and never removed.
type Tracker struct {
	store memory.SceneStore
	opts  Options

	mu    sync.Mutex     // serialises read-modify-write cycles on the store, guards cache
	cache []memory.Scene // every stored scene (pending ones too); nil: not loaded
}

// all returns every stored scene, from the cache (loaded on first use). Callers hold t.mu and
// must not modify the scenes.
func (t *Tracker) all(ctx context.Context) ([]memory.Scene, error) {
	if t.cache == nil {
		all, err := t.store.Scenes(ctx)
		if err != nil {
			return nil, err
		}
		t.cache = append(make([]memory.Scene, 0, len(all)), all...)
	}
	return t.cache, nil
}

// Invalidate forgets the cached scenes: call it after writing scenes to the store other than
// through the Tracker (a restore).
func (t *Tracker) Invalidate() {
	t.mu.Lock()
	t.cache = nil
	t.mu.Unlock()
}

// NewTracker returns a Tracker over store.
func NewTracker(store memory.SceneStore, o Options) *Tracker {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.HalfLife <= 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	return &Tracker{store: store, opts: o}
}

// Observe records one observation and tags events with the scene it belongs to, and returns
// that scene's key.
//
// With a declaredKey, the declared scene of that key is created when missing (features from the
// key alone); its strength is decayed to now and grows by one. Otherwise the observation's
// fingerprint (see [Features]; a zero o.Time gives no time of day) joins the most similar
// emergent scene or pending candidate when their similarity is at least 0.5; else it starts a
// new pending candidate keyed "scene:" and 12 hex digits of the SHA-256 of its sorted feature
// names. A candidate becomes a scene at its
// second occurrence; its features become the weighted intersection of the two fingerprints
// (the features both share, each with the smaller weight), the situation's stable core, and stay
// fixed from then on. Keys never change, so events keep pointing at their scene.
//
// An observation without any feature belongs to no scene: Observe returns "" and tags nothing.
func (t *Tracker) Observe(ctx context.Context, o Obs, declaredKey string, events []int64) (string, error) {
	now := t.opts.Clock()
	var fp Fingerprint
	if declaredKey != "" {
		var err error
		if fp, err = Declared(declaredKey); err != nil {
			return "", fmt.Errorf("scene observe: %w", err)
		}
	} else if fp = Features(o, t.opts.Location); len(fp) == 0 {
		return "", nil
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all(ctx)
	if err != nil {
		return "", fmt.Errorf("scene observe: %w", err)
	}
	var s memory.Scene
	if declaredKey != "" {
		s = memory.Scene{Key: declaredKey, Declared: true, Features: fp, Seen: now, Created: now}
		for _, x := range all {
			if x.Key == declaredKey {
				s = x
				break
			}
		}
		t.recur(&s, now)
	} else {
		// A new candidate's key cannot be taken: an equal print is similar (1) to the candidate
		// that has that key, and a promoted scene's trimmed features stay at least as similar
		// to its first print as the second print was (≥ 0.5).
		best, sim := nearest(all, fp)
		if sim < joinAt-slack {
			best = nil
		}
		if best == nil {
			s = memory.Scene{Key: fingerprintKey(fp), Features: fp, Strength: 1, Occurrences: 1, Seen: now, Created: now}
		} else {
			s = *best
			if s.Occurrences < minEvidence {
				s.Features = intersect(s.Features, fp)
			}
			t.recur(&s, now)
		}
	}
	stored, err := t.store.PutScene(ctx, s)
	if err != nil {
		t.cache = nil // the store may or may not hold it
		return "", fmt.Errorf("scene observe %s: %w", s.Key, err)
	}
	if i := slices.IndexFunc(t.cache, func(x memory.Scene) bool { return x.Key == stored.Key }); i >= 0 {
		t.cache[i] = stored
	} else {
		t.cache = append(t.cache, stored)
		if pending(stored) {
			if err := t.trimPending(ctx); err != nil {
				return "", fmt.Errorf("scene observe: %w", err)
			}
		}
	}
	if len(events) > 0 {
		if err := t.store.SetScene(ctx, events, s.Key); err != nil {
			return "", fmt.Errorf("scene observe %s: tag events: %w", s.Key, err)
		}
	}
	return s.Key, nil
}

// trimPending forgets the pending candidate seen longest ago while there are more than
// MaxPending. Callers hold t.mu and the cache is loaded.
func (t *Tracker) trimPending(ctx context.Context) error {
	n, oldest := 0, -1
	for i, s := range t.cache {
		if !pending(s) {
			continue
		}
		n++
		if oldest < 0 || s.Seen.Before(t.cache[oldest].Seen) || (s.Seen.Equal(t.cache[oldest].Seen) && s.ID < t.cache[oldest].ID) {
			oldest = i
		}
	}
	if n <= t.opts.MaxPending {
		return nil
	}
	if err := t.store.DeleteScene(ctx, t.cache[oldest].ID); err != nil && !errors.Is(err, memory.ErrNotFound) {
		key := t.cache[oldest].Key
		t.cache = nil
		return fmt.Errorf("forget pending %s: %w", key, err)
	}
	t.cache = slices.Delete(t.cache, oldest, oldest+1)
	return nil
}

// recur counts one more occurrence of s at now.
func (t *Tracker) recur(s *memory.Scene, now time.Time) {
	s.Strength = t.decayed(*s, now) + 1
	s.Occurrences++
	s.Seen = now
}

// Match returns the scenes that the observation (or, with a declaredKey, the declared scene's
// fingerprint) resembles enough for recall: every declared scene and every emergent scene seen
// at least twice whose similarity is at least 0.35, as key → similarity. This is what
// memory/cold's Query.Scenes expects.
func (t *Tracker) Match(ctx context.Context, o Obs, declaredKey string) (map[string]float64, error) {
	var fp Fingerprint
	if declaredKey != "" {
		var err error
		if fp, err = Declared(declaredKey); err != nil {
			return nil, fmt.Errorf("scene match: %w", err)
		}
	} else {
		fp = Features(o, t.opts.Location)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all(ctx)
	if err != nil {
		return nil, fmt.Errorf("scene match: %w", err)
	}
	out := map[string]float64{}
	for _, s := range all {
		if pending(s) {
			continue
		}
		if sim := Similarity(fp, s.Features); sim >= recallAt-slack {
			out[s.Key] = sim
		}
	}
	return out, nil
}

// Scenes returns the declared and emergent scenes (pending candidates left out) with their
// strength decayed to now, strongest first (ties by key).
func (t *Tracker) Scenes(ctx context.Context) ([]memory.Scene, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all(ctx)
	if err != nil {
		return nil, fmt.Errorf("scenes: %w", err)
	}
	now := t.opts.Clock()
	out := make([]memory.Scene, 0, len(all))
	for _, s := range all {
		if pending(s) {
			continue
		}
		s.Strength = t.decayed(s, now)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Strength != out[j].Strength {
			return out[i].Strength > out[j].Strength
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// Decay removes what stopped recurring: pending candidates not seen for one half-life, and
// emergent scenes whose decayed strength fell below 0.05. Declared scenes are never removed.
// Events keep their scene key; a removed key simply matches nothing any more.
func (t *Tracker) Decay(ctx context.Context) (removed int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.all(ctx)
	if err != nil {
		return 0, fmt.Errorf("scene decay: %w", err)
	}
	defer func() { t.cache = nil }() // reloaded on next use
	now := t.opts.Clock()
	var errs []error
	for _, s := range all {
		drop := false
		switch {
		case s.Declared:
		case pending(s):
			drop = now.Sub(s.Seen) >= t.opts.HalfLife
		default:
			drop = t.decayed(s, now) < fadedBelow
		}
		if !drop {
			continue
		}
		if err := t.store.DeleteScene(ctx, s.ID); err != nil && !errors.Is(err, memory.ErrNotFound) {
			errs = append(errs, fmt.Errorf("scene decay: delete %s: %w", s.Key, err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// decayed is s's strength at now: it halves every half-life since s.Seen (a clock running
// backwards decays nothing).
func (t *Tracker) decayed(s memory.Scene, now time.Time) float64 {
	age := now.Sub(s.Seen)
	if age <= 0 || s.Seen.IsZero() {
		return s.Strength
	}
	return s.Strength * math.Exp2(-float64(age)/float64(t.opts.HalfLife))
}

// pending reports whether s is an emergent candidate not yet confirmed by a second occurrence.
func pending(s memory.Scene) bool { return !s.Declared && s.Occurrences < minEvidence }

// nearest returns the emergent scene or candidate most similar to fp and the similarity; ties go
// to the scene seen more often, then to the smaller key. Declared scenes are not joined by
// emergent observations.
func nearest(all []memory.Scene, fp Fingerprint) (*memory.Scene, float64) {
	var best *memory.Scene
	bestSim := -1.0
	for i := range all {
		s := &all[i]
		if s.Declared {
			continue
		}
		sim := Similarity(fp, s.Features)
		switch {
		case best == nil, sim > bestSim,
			sim == bestSim && s.Occurrences > best.Occurrences,
			sim == bestSim && s.Occurrences == best.Occurrences && s.Key < best.Key:
			best, bestSim = s, sim
		}
	}
	return best, bestSim
}

// intersect returns the weighted intersection of two fingerprints: their shared features, each
// with the smaller weight.
func intersect(a, b Fingerprint) Fingerprint {
	out := Fingerprint{}
	for f, wa := range a {
		if wb, ok := b[f]; ok {
			out[f] = math.Min(wa, wb)
		}
	}
	return out
}

// fingerprintKey is "scene:" and the first 12 hex digits of the SHA-256 of fp's feature names,
// sorted and newline-separated (the weights follow from the names).
func fingerprintKey(fp Fingerprint) string {
	names := make([]string, 0, len(fp))
	for f := range fp {
		names = append(names, f)
	}
	sort.Strings(names)
	sum := sha256.Sum256([]byte(strings.Join(names, "\n")))
	return "scene:" + hex.EncodeToString(sum[:])[:12]
}
