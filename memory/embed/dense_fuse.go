package embed

import (
	"fmt"
	"math"
	"sort"
)

// Scored is one candidate's score in one ranking: a cosine from the dense side, a BM25 score
// from the sparse side. Higher is better.
type Scored[K comparable] struct {
	ID    K
	Score float64
}

// Fused is one candidate of a fused ranking. Score is its reciprocal-rank score; the ranks
// (1-based, 0 when the ranking did not list it) and raw scores of each side are kept so that
// the memory core can explain why an item was chosen.
type Fused[K comparable] struct {
	ID                      K
	Score                   float64
	DenseRank, SparseRank   int
	DenseScore, SparseScore float64
}

// FuseOptions configures [Fuse]. The zero value is the recommended setting.
type FuseOptions struct {
	// K is the rank constant of reciprocal-rank fusion; 0 means 60, the value of Cormack,
	// Clarke and Büttcher (2009), which keeps one list's top item from swamping agreement.
	K float64
	// DenseWeight and SparseWeight scale each side's contribution; both 0 means 1 and 1.
	DenseWeight, SparseWeight float64
}

// Fuse merges a dense (cosine) and a sparse (BM25) ranking of the same kind of candidates by
// weighted reciprocal-rank fusion:
//
//	score(d) = wd / (K + rank_dense(d)) + ws / (K + rank_sparse(d))
//
// where a ranking that does not list d contributes nothing. Ranks come from sorting each list
// by score (equal scores share the better rank, so the input order of ties does not matter).
// The result is sorted by fused score, ties by first appearance (dense list first).
//
// Why rank fusion rather than a min-max normalised weighted sum: BM25 scores are unbounded and
// vary with the query's length and terms' rarity, and cosines have a model-specific range
// (e5's sit between 0.7 and 0.9, bge's lower); min-max normalisation maps the best and worst
// candidate of the moment to 1 and 0, so one outlier or a short candidate list reshapes every
// score, and a model change changes the balance. Ranks need no calibration per model or
// query, a candidate found by one side only still counts, and agreement between the sides
// (a candidate near the top of both) wins, which is what hybrid recall wants.
//
// A NaN or infinite score, a negative weight or K is an error; an ID listed twice in one
// ranking is an error too.
func Fuse[K comparable](dense, sparse []Scored[K], opts FuseOptions) ([]Fused[K], error) {
	k := opts.K
	if k == 0 {
		k = 60
	}
	wd, ws := opts.DenseWeight, opts.SparseWeight
	if wd == 0 && ws == 0 {
		wd, ws = 1, 1
	}
	if k < 0 || math.IsNaN(k) || math.IsInf(k, 0) || wd < 0 || ws < 0 || math.IsNaN(wd) || math.IsNaN(ws) {
		return nil, fmt.Errorf("embed: fuse: bad options %+v (K and weights must be finite and non-negative)", opts)
	}
	denseRanks, err := ranks(dense, "dense")
	if err != nil {
		return nil, err
	}
	sparseRanks, err := ranks(sparse, "sparse")
	if err != nil {
		return nil, err
	}
	index := make(map[K]int, len(dense)+len(sparse))
	var out []Fused[K]
	at := func(id K) *Fused[K] {
		i, ok := index[id]
		if !ok {
			i = len(out)
			index[id] = i
			out = append(out, Fused[K]{ID: id})
		}
		return &out[i]
	}
	for i, s := range dense {
		f := at(s.ID)
		f.DenseRank, f.DenseScore = denseRanks[i], s.Score
		f.Score += wd / (k + float64(denseRanks[i]))
	}
	for i, s := range sparse {
		f := at(s.ID)
		f.SparseRank, f.SparseScore = sparseRanks[i], s.Score
		f.Score += ws / (k + float64(sparseRanks[i]))
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
	return out, nil
}

// ranks returns the 1-based competition rank of each entry of list by descending score.
func ranks[K comparable](list []Scored[K], side string) ([]int, error) {
	seen := make(map[K]bool, len(list))
	order := make([]int, len(list))
	for i, s := range list {
		if math.IsNaN(s.Score) || math.IsInf(s.Score, 0) {
			return nil, fmt.Errorf("embed: fuse: %s score of %v is %v", side, s.ID, s.Score)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("embed: fuse: %v is listed twice in the %s ranking", s.ID, side)
		}
		seen[s.ID] = true
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return list[order[a]].Score > list[order[b]].Score })
	r := make([]int, len(list))
	for pos, i := range order {
		if pos > 0 && list[i].Score == list[order[pos-1]].Score {
			r[i] = r[order[pos-1]]
		} else {
			r[i] = pos + 1
		}
	}
	return r, nil
}
