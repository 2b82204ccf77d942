package memory

import "math"

// BM25 as the store's text index ranks (memory/sqlite), and as its in-memory stand-in
// (memory/memtest) and recall's episode and coherence steps (memory/cold) weigh terms, so that
// a unit test ranks the way the product does.
const (
	// BM25K1 is the term-frequency saturation.
	BM25K1 = 1.2
	// BM25B is the length normalisation: events are short turns, where length says less
	// than in documents (0.75 is the usual value for documents).
	BM25B = 0.5
	// BM25EpisodeB is the length normalisation of episodes as documents ([Episodes]): a
	// stretch of conversation is a document in the usual sense.
	BM25EpisodeB = 0.75
)

// BM25Score is BM25 of one document: Σ idf[i] × tf[i] × (k1 + 1) / (tf[i] + k1 × (1 − b + b ×
// length / avg)), k1 = [BM25K1].
func BM25Score(idf, tf []float64, length, avg, b float64) float64 {
	norm := BM25K1 * (1 - b + b*length/avg)
	score := 0.0
	for i, f := range tf {
		if f > 0 {
			score += idf[i] * f * (BM25K1 + 1) / (f + norm)
		}
	}
	return score
}

// BM25IDF is a term's inverse document frequency among total documents, df of which hold it:
// log(1 + (N − n + 0.5) / (n + 0.5)), never negative.
func BM25IDF(total, df float64) float64 {
	return math.Log(1 + (total-df+0.5)/(df+0.5))
}
