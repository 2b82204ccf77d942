package cold

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/memtest"
)

// conceptDense is a hand-written dense side over a toy space: each axis is a concept, and a
// text's vector counts the concept words it holds (so "puppy" and "dog" share an axis though
// they share no word). It searches every event of the store it was given, like the kernel's,
// and returns the distribution of all cosines.
type conceptDense struct {
	m   *memtest.Mem
	err error
	// ignoreFilters returns events whatever the query's viewer, layers and session, so tests
	// see that Recall filters again.
	ignoreFilters bool
	vecs          map[int64][]float32 // nil: computed from the events' text
}

var concepts = [][]string{
	{"dog", "puppy", "canine", "hound"},
	{"bread", "baked", "bakery", "loaf"},
	{"mountains", "hiking", "hike", "summit"},
	{"weather", "sunny", "rain"},
}

func conceptVec(text string) []float32 {
	v := make([]float32, len(concepts)+1)
	v[len(concepts)] = 0.2 // every text shares a little (the background similarity)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		for i, c := range concepts {
			if slices.Contains(c, strings.Trim(w, ",.?!")) {
				v[i]++
			}
		}
	}
	return v
}

func (d *conceptDense) Search(ctx context.Context, q DenseQuery) (DenseResult, error) {
	if d.err != nil {
		return DenseResult{}, d.err
	}
	ids := make([]int64, 0, 64)
	for id := int64(1); id <= 64; id++ {
		ids = append(ids, id)
	}
	hits, err := d.m.Events(ctx, ids)
	if err != nil {
		return DenseResult{}, err
	}
	qv := conceptVec(q.Text)
	var res DenseResult
	var sum, sq float64
	for _, h := range hits {
		e := h.Event
		if !d.ignoreFilters && (!q.Viewer.CanSee(e.Scope) || !layerOK(e.Layer, q.Layers) || (q.Session != "" && e.Session != q.Session)) {
			continue
		}
		v := conceptVec(e.Content)
		if d.vecs != nil {
			if v = d.vecs[e.ID]; v == nil {
				continue // no vector in the active space
			}
		}
		cos := float64(embed.Cosine(qv, v))
		res.N++
		sum += cos
		sq += cos * cos
		res.Hits = append(res.Hits, DenseHit{Event: e, Indexed: h.Indexed, Cos: cos})
	}
	if res.N > 0 {
		res.Mean = sum / float64(res.N)
		res.SD = math.Sqrt(math.Max(0, sq/float64(res.N)-res.Mean*res.Mean))
	}
	slices.SortStableFunc(res.Hits, func(a, b DenseHit) int {
		switch {
		case a.Cos > b.Cos:
			return -1
		case a.Cos < b.Cos:
			return 1
		}
		return 0
	})
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
	}
	return res, nil
}

func denseRecaller(t *testing.T, m *memtest.Mem, d Dense) *Recaller {
	t.Helper()
	r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Dense: d})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var denseTurns = [][2]string{
	{"Ann", "I went hiking in the mountains"},          // 0
	{"Bob", "we adopted a puppy last spring"},          // 1: the paraphrase of "my dog"
	{"Ann", "we baked bread all afternoon"},            // 2
	{"Bob", "nice weather today"},                      // 3
	{"Ann", "the tax office sent a letter"},            // 4
	{"Bob", "my dog loves the park"},                   // 5: shares "dog"
	{"Ann", "the train was late again"},                // 6
	{"Bob", "she reads a lot of novels"},               // 7
	{"Ann", "our neighbour plays the piano every day"}, // 8
	{"Bob", "the concert starts at eight"},             // 9
	{"Ann", "I need new shoes"},                        // 10
	{"Bob", "the printer is out of ink"},               // 11
	{"Ann", "we should paint the kitchen"},             // 12
	{"Bob", "my brother calls on sundays"},             // 13
	{"Ann", "the garden needs water"},                  // 14
	{"Bob", "that film was too long"},                  // 15
}

func TestDenseRecall(t *testing.T) {
	group := memory.Viewer{Group: "g"}
	ctx := context.Background()
	puppy, dog, secret := denseTurns[1][1], denseTurns[5][1], "the hound is my secret"
	for _, tc := range []struct {
		name  string
		query string
		dense *conceptDense
		first []string // the first results, in order
		not   string   // never among the results
		why   map[string]string
	}{
		{
			// Neither shares a word with the query; the two tie on the dense side, so the
			// older one comes first.
			name: "a paraphrase sparse misses is recalled", query: "canine",
			first: []string{puppy, dog}, not: secret,
			why: map[string]string{puppy: "dense 1.00, rank 1"},
		},
		{
			name: "both sides agree: that event first", query: "dog",
			first: []string{dog, puppy},
			why:   map[string]string{dog: "bm25", puppy: "dense"},
		},
		{
			name: "events without a vector in the space are ranked by the sparse side alone", query: "dog",
			dense: &conceptDense{vecs: map[int64][]float32{}},
			first: []string{dog}, not: puppy,
		},
		{
			name: "a dense hit the viewer may not see is dropped even if the dense side returns it", query: "secret canine",
			dense: &conceptDense{ignoreFilters: true},
			first: []string{puppy, dog}, not: secret,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := fixture(t, denseTurns)
			// A private note the group must never see, near the queries in the space.
			if _, err := m.AppendEvents(ctx, []memory.Event{{Session: "private", Role: memory.RoleUser, Content: secret}}); err != nil {
				t.Fatal(err)
			}
			d := tc.dense
			if d == nil {
				d = &conceptDense{}
			}
			d.m = m
			hits, err := denseRecaller(t, m, d).Recall(ctx, Query{Text: tc.query, Viewer: group, K: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := contents(hits)
			if len(got) < len(tc.first) || !slices.Equal(got[:len(tc.first)], tc.first) || (tc.not != "" && slices.Contains(got, tc.not)) {
				t.Fatalf("Recall(%q) = %q, want it to start with %q and not hold %q", tc.query, got, tc.first, tc.not)
			}
			for _, h := range hits {
				if w, ok := tc.why[h.Event.Content]; ok && !strings.Contains(h.Reason, w) {
					t.Errorf("reason of %q = %q, want it to say %q", h.Event.Content, h.Reason, w)
				}
			}
		})
	}
	// The sparse side alone misses the paraphrase.
	m, _ := fixture(t, denseTurns)
	hits, err := recaller(t, m).Recall(ctx, Query{Text: "canine", Viewer: group, K: 5})
	if err != nil || len(hits) != 0 {
		t.Fatalf("sparse recall of a paraphrase = %q, %v; want nothing", contents(hits), err)
	}
}

// TestDenseRecallKeepsSparseWhenNothingStandsOut: when no event stands out in the dense space,
// the results are exactly the sparse ones.
func TestDenseRecallKeepsSparseWhenNothingStandsOut(t *testing.T) {
	ctx := context.Background()
	m, _ := fixture(t, denseTurns)
	flat := map[int64][]float32{}
	for id := int64(1); id <= 40; id++ {
		flat[id] = []float32{1, 1}
	}
	for _, q := range []string{"hiking mountains", "what did you do", "bread"} {
		sparse, err := recaller(t, m).Recall(ctx, Query{Text: q, Viewer: memory.OwnerViewer, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		dense, err := denseRecaller(t, m, &conceptDense{m: m, vecs: flat}).Recall(ctx, Query{Text: q, Viewer: memory.OwnerViewer, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(contents(sparse), contents(dense)) {
			t.Errorf("%q: sparse %q, with a flat dense side %q", q, contents(sparse), contents(dense))
		}
	}
}

func TestDenseRecallError(t *testing.T) {
	m, _ := fixture(t, denseTurns)
	boom := errors.New("vector cache unreadable")
	_, err := denseRecaller(t, m, &conceptDense{m: m, err: boom}).Recall(context.Background(), Query{Text: "dog", Viewer: memory.OwnerViewer})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "recall: dense") {
		t.Fatalf("Recall with a failing dense side = %v", err)
	}
}
