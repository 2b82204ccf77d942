package window

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// denseOf builds Query.Dense from a map of candidate index → cosine (others have no vector).
func denseOf(n int, cos map[int]float64) []DenseScore {
	out := make([]DenseScore, n)
	for i, c := range cos {
		out[i] = DenseScore{Cos: c, OK: true}
	}
	return out
}

func TestDenseFusion(t *testing.T) {
	// Six old candidates, one recent (pinned, Recent 1); the input is "dog".
	cands := []Candidate{
		ev(1, memory.RoleUser, "my dog is called rex", 10),           // shares "dog"
		ev(2, memory.RoleUser, "we adopted a puppy last spring", 10), // a paraphrase: no shared word
		ev(3, memory.RoleUser, "the weather is grey", 10),
		ev(4, memory.RoleUser, "paris trip next week", 10),
		ev(5, memory.RoleUser, "taxes are due", 10),
		ev(6, memory.RoleUser, "dog food is expensive", 10), // shares "dog", no vector yet
		ev(7, memory.RoleUser, "ok", 10),
	}
	for _, tc := range []struct {
		name   string
		cos    map[int]float64
		budget int
		kept   string
		check  func(t *testing.T, res Result)
	}{
		{
			name: "a paraphrase that BM25 misses is kept; unrelated ones sink",
			cos:  map[int]float64{0: 0.80, 1: 0.86, 2: 0.31, 3: 0.30, 4: 0.28, 6: 0.33},
			// 7 pinned; 1 (both sides), 2 (dense only), 6 (BM25 only: no vector) kept.
			budget: 1000, kept: "[1 2 6 7]",
			check: func(t *testing.T, res Result) {
				byID := map[int64]Item{}
				for _, it := range res.Items {
					byID[cands[it.Index].Event.ID] = it
				}
				if r := byID[2].Reason; !strings.Contains(r, "relevant to the input (dense 0.86, rank 1)") || strings.Contains(r, "bm25") {
					t.Errorf("paraphrase reason %q", r)
				}
				if r := byID[1].Reason; !strings.Contains(r, "dense 0.80, rank 2") || !strings.Contains(r, "bm25") {
					t.Errorf("reason of a candidate found by both sides: %q", r)
				}
				if r := byID[6].Reason; strings.Contains(r, "dense") || !strings.Contains(r, "bm25") {
					t.Errorf("a candidate without a vector is ranked by BM25 alone: %q", r)
				}
				// Found by both sides beats one side alone.
				if !(byID[1].Score > byID[2].Score && byID[1].Score > byID[6].Score) {
					t.Errorf("fused scores: both %v, dense only %v, bm25 only %v", byID[1].Score, byID[2].Score, byID[6].Score)
				}
			},
		},
		{
			name: "a tight budget keeps the candidate both sides agree on first",
			cos:  map[int]float64{0: 0.80, 1: 0.86, 2: 0.31, 3: 0.30, 4: 0.28, 6: 0.33},
			// pinned 7 (10 tokens) + one more.
			budget: 20, kept: "[1 7]",
		},
		{
			name:   "no cosine stands out: the dense side adds nothing",
			cos:    map[int]float64{0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5, 6: 0.5},
			budget: 1000, kept: "[1 6 7]",
		},
		{
			name:   "negative cosines never count",
			cos:    map[int]float64{0: -0.9, 1: -0.1, 2: -0.9, 3: -0.9, 4: -0.9, 6: -0.9},
			budget: 1000, kept: "[1 6 7]",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := Query{Terms: testVocab.Lookup([]string{"dog"}), VocabSize: testVocab.Size(), Dense: denseOf(len(cands), tc.cos)}
			res := ComputeQuery(cands, q, Config{Budget: tc.budget, Recent: 1}, nil)
			if got := fmt.Sprint(chosen(cands, res.Items)); got != tc.kept {
				t.Fatalf("kept %s, want %s (items %+v)", got, tc.kept, res.Items)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

// TestDenseWithoutVectorsIsSparse: candidates of which none has a vector in the active space
// keep exactly the window BM25 alone gives (ranks preserve the BM25 order).
func TestDenseWithoutVectorsIsSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
	for round := range 50 {
		var cands []Candidate
		for i := range 40 {
			var text []string
			for range 1 + rng.IntN(6) {
				text = append(text, words[rng.IntN(len(words))])
			}
			cands = append(cands, ev(int64(i+1), memory.RoleUser, strings.Join(text, " "), 5+rng.IntN(30)))
		}
		query := []string{words[rng.IntN(len(words))], words[rng.IntN(len(words))]}
		cfg := Config{Budget: 100 + rng.IntN(400), Recent: 1 + rng.IntN(5)}
		sparse := compute(cands, query, cfg, nil)
		dense := ComputeQuery(cands, Query{Terms: testVocab.Lookup(query), VocabSize: testVocab.Size(), Dense: make([]DenseScore, len(cands))}, cfg, nil)
		if !reflect.DeepEqual(ids(cands, sparse.Items), ids(cands, dense.Items)) || !reflect.DeepEqual(sparse.Sunk, dense.Sunk) {
			t.Fatalf("round %d: sparse kept %v, with no vectors %v", round, ids(cands, sparse.Items), ids(cands, dense.Items))
		}
	}
}

// BenchmarkScore10kDense is BenchmarkScore10k with a dense score for every candidate (the
// cosines are computed by the caller; this is the fusion's cost).
func BenchmarkScore10kDense(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := NewVocab()
	words := make([]string, 50000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	vocab := v.Intern(words)
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	cands := make([]Candidate, 10000)
	dense := make([]DenseScore, len(cands))
	for i := range cands {
		n := 8 + rng.IntN(32)
		terms := make([]uint32, n)
		for j := range terms {
			terms[j] = vocab[zipf.Uint64()]
		}
		cands[i] = Candidate{Event: memory.Event{ID: int64(i + 1), Tokens: n}, Terms: terms}
		dense[i] = DenseScore{Cos: rng.NormFloat64()*0.1 + 0.4, OK: true}
	}
	q := Query{Terms: []uint32{vocab[5], vocab[50], vocab[500], vocab[5000], vocab[20000], vocab[3]}, VocabSize: v.Size(), Dense: dense}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ComputeQuery(cands, q, Config{Budget: 8000, Recent: 12}, nil)
	}
}
