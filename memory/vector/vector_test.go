package vector

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

func TestTopKMatchesASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, k int }{{0, 5}, {3, 5}, {5, 5}, {100, 1}, {1000, 10}, {1000, 0}} {
		var all []Scored
		tk := TopK{K: tc.k}
		for i := range tc.n {
			s := Scored{Event: int64(i), Cos: math.Round(rng.Float64()*50) / 50} // ties on purpose
			all = append(all, s)
			tk.Offer(s.Event, s.Cos)
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].Cos != all[j].Cos {
				return all[i].Cos > all[j].Cos
			}
			return all[i].Event < all[j].Event
		})
		got := tk.Sorted()
		if len(got) != min(tc.n, max(tc.k, 0)) {
			t.Fatalf("n=%d k=%d: %d kept", tc.n, tc.k, len(got))
		}
		for i := range got { // the same scores (which of two tied events is kept may differ)
			if got[i].Cos != all[i].Cos {
				t.Fatalf("n=%d k=%d: rank %d has %v, want %v", tc.n, tc.k, i, got[i].Cos, all[i].Cos)
			}
		}
	}
}

func TestIndexSearchAndCosines(t *testing.T) {
	x := New()
	x.Put(memory.VectorEntry{Event: 1, Session: "a", Vec: []float32{3, 0}}) // normalised on put
	x.Put(memory.VectorEntry{Event: 2, Session: "b", Vec: []float32{1, 1}})
	x.Put(memory.VectorEntry{Event: 3, Session: "a", Vec: []float32{0, 2}})
	x.Put(memory.VectorEntry{Event: 1, Session: "a", Vec: []float32{0, -1}}) // replaces
	if x.Len() != 3 {
		t.Fatalf("Len = %d", x.Len())
	}
	q := Normalized([]float32{0, 1})
	got, st := x.Search(q, 2, func(e memory.VectorEntry) bool { return e.Session == "a" })
	if len(got) != 2 || got[0].Event != 3 || got[1].Event != 1 || math.Abs(got[0].Cos-1) > 1e-6 || math.Abs(got[1].Cos+1) > 1e-6 {
		t.Fatalf("Search = %v", got)
	}
	if st.N != 2 || math.Abs(st.Mean) > 1e-6 || math.Abs(st.SD-1) > 1e-6 {
		t.Fatalf("stats = %+v", st)
	}
	cos, ok := x.Cosines(q, []int64{2, 9})
	if !ok[0] || ok[1] || math.Abs(cos[0]-math.Sqrt2/2) > 1e-6 {
		t.Fatalf("Cosines = %v %v", cos, ok)
	}
	if v := Normalized([]float32{0, 0}); !slices.Equal(v, []float32{0, 0}) {
		t.Fatalf("zero vector → %v", v)
	}
	if Dot([]float32{1}, []float32{1, 2}) != 0 {
		t.Fatal("vectors of different lengths have a dot product")
	}
}

// BenchmarkSearch scans 100,000 vectors of 384 dimensions for the top 30 (recall's dense side
// at the size of a large personal memory), beside the scan alone (cosines, no selection): the
// selection's cost is the difference.
func BenchmarkSearch(b *testing.B) {
	const n, dim = 100_000, 384
	rng := rand.New(rand.NewPCG(1, 2))
	x := New()
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for i := range n {
		x.Put(memory.VectorEntry{Event: int64(i), Vec: vec()})
	}
	q := Normalized(vec())
	b.Run("top30", func(b *testing.B) {
		for b.Loop() {
			x.Search(q, 30, nil)
		}
	})
	b.Run("scan-only", func(b *testing.B) {
		for b.Loop() {
			var s float64
			x.mu.RLock()
			for _, e := range x.entries {
				s += Dot(q, e.Vec)
			}
			x.mu.RUnlock()
			_ = s
		}
	})
}
