// Package vector holds the memory's dense vectors of one embedding space in memory, for the L1
// window's scores and recall's brute-force scan: normalised on insert, so that a dot product is a
// cosine, with a top-k selection on container/heap.
//
// A brute-force scan is exact and, at the sizes one owner's memory reaches (≈ 10⁵ events of
// 384–512 dimensions), fast enough for recall's latency budget (BenchmarkSearch); an approximate
// index would trade recall for speed that is not needed yet.
package vector

import (
	"container/heap"
	"math"
	"sort"
	"sync"

	"github.com/hologramagent/hologram/memory"
)

// Index holds the vectors of one space by event. It is safe for concurrent use.
type Index struct {
	mu      sync.RWMutex
	entries []memory.VectorEntry
	at      map[int64]int // event id → index in entries
}

// New returns an empty index.
func New() *Index { return &Index{at: map[int64]int{}} }

// Put adds or replaces an event's vector (normalised).
func (x *Index) Put(e memory.VectorEntry) {
	e.Vec = Normalized(e.Vec)
	x.mu.Lock()
	defer x.mu.Unlock()
	if i, ok := x.at[e.Event]; ok {
		x.entries[i] = e
		return
	}
	x.at[e.Event] = len(x.entries)
	x.entries = append(x.entries, e)
}

// Len is the number of vectors held.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.entries)
}

// Cosines returns the cosine of q (normalised) to each event's vector; ok is false for an event
// without one.
func (x *Index) Cosines(q []float32, ids []int64) (cos []float64, ok []bool) {
	cos, ok = make([]float64, len(ids)), make([]bool, len(ids))
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i, id := range ids {
		if at, found := x.at[id]; found {
			cos[i], ok[i] = Dot(q, x.entries[at].Vec), true
		}
	}
	return cos, ok
}

// Stats are the cosines of a scan: how many vectors matched the filter, their mean and
// standard deviation (recall normalises dense scores with them).
type Stats struct {
	N        int
	Mean, SD float64
}

// Scored is an event and its cosine to a query.
type Scored struct {
	Event int64
	Cos   float64
}

// Search returns the k vectors most similar to q (normalised) among those keep accepts, best
// first (ties by event id), and the statistics of every accepted cosine.
func (x *Index) Search(q []float32, k int, keep func(memory.VectorEntry) bool) ([]Scored, Stats) {
	var (
		st      Stats
		sum, sq float64
	)
	best := TopK{K: k}
	x.mu.RLock()
	for _, e := range x.entries {
		if keep != nil && !keep(e) {
			continue
		}
		c := Dot(q, e.Vec)
		st.N++
		sum += c
		sq += c * c
		best.Offer(e.Event, c)
	}
	x.mu.RUnlock()
	if st.N > 0 {
		st.Mean = sum / float64(st.N)
		st.SD = math.Sqrt(math.Max(0, sq/float64(st.N)-st.Mean*st.Mean))
	}
	return best.Sorted(), st
}

// Normalized returns v scaled to unit length (v itself when it already is; a copy otherwise; a
// zero vector stays zero), so that a dot product is a cosine.
func Normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) < 1e-6 {
		return v // already unit length (normalising models)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Dot is the dot product of two vectors of one space (0 when their lengths differ). Four
// running sums let the CPU overlap the multiplications (≈ 2× a single sum).
func Dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}

// TopK keeps the K best of the scores offered, on a min-heap of the kept ones, so that most
// offers cost one comparison with the worst kept. The zero value keeps nothing.
type TopK struct {
	K int
	h minHeap
}

// Offer considers one score.
func (t *TopK) Offer(event int64, cos float64) {
	switch {
	case t.K <= 0:
	case len(t.h) < t.K:
		heap.Push(&t.h, Scored{event, cos})
	case cos > t.h[0].Cos:
		t.h[0] = Scored{event, cos}
		heap.Fix(&t.h, 0)
	}
}

// Sorted returns the kept scores, best first (ties by event id).
func (t *TopK) Sorted() []Scored {
	out := append([]Scored(nil), t.h...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cos != out[j].Cos {
			return out[i].Cos > out[j].Cos
		}
		return out[i].Event < out[j].Event
	})
	return out
}

// minHeap orders scores worst first (heap.Interface).
type minHeap []Scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].Cos < h[j].Cos }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(Scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
