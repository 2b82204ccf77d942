// Package window computes a session's L1 context window (ARCHITECTURE.md §4): the most recent
// events are pinned, every other candidate is scored against the current input, and the best are
// kept; what the token budget still holds then goes to the earlier turns, newest first, so the
// window fills its budget whenever the session has that much. Every kept item carries its score, reason and source, so a
// user can see why it is in the prompt; the rest sink to L2.
//
// An assistant event that calls tools and the results of those calls form one unit: they are kept
// or sunk together, so the prompt never holds a call without its result.
//
// With a dense model active ([Query].Dense), a candidate is scored by both sides and the two
// rankings are fused by reciprocal rank ([embed.Fuse]): BM25 over the candidates' own terms,
// and the cosine of its vector to the input's. On the dense side only the candidates whose
// cosine stands out from the session's others count (at least [DenseZ] standard deviations
// above their mean, and positive): every text is somewhat similar to every other in a model's
// space, and a window that kept whatever is nearest would keep everything. Candidates without a
// vector in the active space are ranked by BM25 alone; spaces are never mixed.
package window

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
)

// Config bounds a window. Zero fields take the defaults.
type Config struct {
	Budget int // tokens the window may hold (default 8000)
	Recent int // recent events pinned at most (default 12); fewer when events are long
	// MaxItems caps the events in the window whatever their size (0: no cap): a budget of tiny
	// events would otherwise fill the prompt with thousands of messages.
	MaxItems int
}

// Defaults of Config.
const (
	DefaultBudget = 8000
	DefaultRecent = 12
)

// Candidate is an L1 event with the index terms it was indexed under, interned by a [Vocab].
type Candidate struct {
	Event memory.Event
	Terms []uint32
}

// Vocab interns terms as small integers so that scoring compares numbers, not strings. It is not
// safe for concurrent use; the kernel keeps one per session cache under a lock.
type Vocab struct{ ids map[string]uint32 }

// NewVocab returns an empty Vocab.
func NewVocab() *Vocab { return &Vocab{ids: map[string]uint32{}} }

// Intern returns the ids of terms, adding new ones.
func (v *Vocab) Intern(terms []string) []uint32 {
	out := make([]uint32, len(terms))
	for i, t := range terms {
		id, ok := v.ids[t]
		if !ok {
			id = uint32(len(v.ids)) + 1
			v.ids[t] = id
		}
		out[i] = id
	}
	return out
}

// Lookup returns the ids of the known terms among terms (unknown ones cannot match anything).
func (v *Vocab) Lookup(terms []string) []uint32 {
	out := make([]uint32, 0, len(terms))
	for _, t := range terms {
		if id, ok := v.ids[t]; ok {
			out = append(out, id)
		}
	}
	return out
}

// Size is the number of interned terms.
func (v *Vocab) Size() int { return len(v.ids) }

// Source of a kept item.
const (
	SourcePinned   = "pinned"
	SourceScored   = "scored"
	SourceRecalled = "recalled"
)

// Item is one kept candidate (by index) and why it is kept.
type Item struct {
	Index  int
	Score  float64
	Reason string
	Source string
}

// Result is a computed window.
type Result struct {
	Items  []Item // chronological
	Sunk   []int  // indexes of the candidates that did not fit, to move to L2
	Pinned int    // events pinned as recent
	Filled int    // earlier events kept because the budget had room after the relevant ones
	Used   int    // tokens of the kept items
	Budget int
}

// unit is a run of candidates kept or sunk together: [start, end).
type unit struct {
	start, end int
	tokens     int
	score      float64
	why        string
}

// DenseScore is a candidate's cosine similarity to the input in the active dense space. OK is
// false for a candidate without a vector in that space: it is ranked by BM25 alone.
type DenseScore struct {
	Cos float64
	OK  bool
}

// DenseZ is how far above the mean cosine of a session's candidates (in standard deviations)
// a candidate's cosine must be for the dense side to call it relevant to the input.
const DenseZ = 1.0

// Query is what the candidates are scored against.
type Query struct {
	// Terms are the input's index terms, interned by the candidates' [Vocab] (Lookup);
	// VocabSize is that Vocab's Size.
	Terms     []uint32
	VocabSize int
	// Dense, when not nil, holds one score per candidate, by index (missing entries count as
	// not OK): the window fuses the dense and the sparse ranking. nil: BM25 alone.
	Dense []DenseScore
}

// Compute builds the window of candidates (a session's L1 events, chronological) for the input's
// terms, by BM25 alone. recalled marks events that coldcontext_query brought back (their source
// says so).
func Compute(cands []Candidate, inputTerms []uint32, vocabSize int, cfg Config, recalled map[int64]bool) Result {
	return ComputeQuery(cands, Query{Terms: inputTerms, VocabSize: vocabSize}, cfg, recalled)
}

// ComputeQuery is [Compute] for a [Query]: with q.Dense set, candidates are ranked by the
// fusion of their BM25 and dense ranks, each kept item's Score is its fused score, and its
// Reason names both sides ("relevant to the input (dense 0.83, rank 1; bm25 2.10, rank 3)").
func ComputeQuery(cands []Candidate, q Query, cfg Config, recalled map[int64]bool) Result {
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.Recent <= 0 {
		cfg.Recent = DefaultRecent
	}
	res := Result{Budget: cfg.Budget}
	if len(cands) == 0 {
		return res
	}
	units := group(cands)
	total := 0
	for _, c := range cands {
		total += tokensOf(c.Event)
	}
	mean := float64(total) / float64(len(cands))
	pinN := cfg.Recent
	if mean > 0 {
		pinN = min(cfg.Recent, int(float64(cfg.Budget)/mean))
	}
	pinN = max(pinN, 1)

	keep := make([]bool, len(units))
	// Pin the most recent units holding pinN events, newest first, within the budget.
	pinned := 0
	for u := len(units) - 1; u >= 0 && pinned < pinN; u-- {
		if res.Used+units[u].tokens > cfg.Budget && pinned > 0 {
			break
		}
		keep[u] = true
		units[u].why = "recent"
		res.Used += units[u].tokens
		pinned += units[u].end - units[u].start
	}
	res.Pinned = pinned

	// Score the others against the input: BM25 over the candidates' own terms, fused with the
	// dense ranking when there is one.
	scores := bm25(cands, q.Terms, q.VocabSize)
	var details []sides
	if q.Dense != nil {
		scores, details = fuseDense(scores, q.Dense)
	}
	type ranked struct {
		score float64
		u     int
	}
	var rest []ranked
	for u := range units {
		if keep[u] {
			continue
		}
		best := 0.0
		for i := units[u].start; i < units[u].end; i++ {
			best = math.Max(best, scores[i])
		}
		units[u].score = best
		if best > 0 { // units that share no term with the input are never chosen by score
			rest = append(rest, ranked{best, u})
		}
	}
	// Take units best first until the budget is full: a heap pops only as many as fit, where a
	// full sort would order thousands that never will.
	better := func(a, b ranked) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.u > b.u // newer first among equals
	}
	down := func(h []ranked, i int) {
		for {
			l, best := 2*i+1, i
			if l < len(h) && better(h[l], h[best]) {
				best = l
			}
			if r := l + 1; r < len(h) && better(h[r], h[best]) {
				best = r
			}
			if best == i {
				return
			}
			h[i], h[best] = h[best], h[i]
			i = best
		}
	}
	for i := len(rest)/2 - 1; i >= 0; i-- {
		down(rest, i)
	}
	items := pinned
	misses := 0 // units popped in a row that did not fit: past a few, the window is full
	for len(rest) > 0 && res.Used < cfg.Budget && misses < 32 && (cfg.MaxItems <= 0 || items < cfg.MaxItems) {
		u := rest[0].u
		rest[0] = rest[len(rest)-1]
		rest = rest[:len(rest)-1]
		down(rest, 0)
		if res.Used+units[u].tokens > cfg.Budget {
			misses++
			continue
		}
		misses = 0
		keep[u] = true
		items += units[u].end - units[u].start
		res.Used += units[u].tokens
		units[u].why = "relevant to the input"
	}
	// What the budget still holds goes to the turns before the pinned ones, newest first: a
	// short input that matches nothing still gets the conversation it continues, as far back as
	// the budget reaches (a unit too large to fit is passed over, as above).
	misses = 0
	for u := len(units) - 1; u >= 0 && res.Used < cfg.Budget && misses < 32 && (cfg.MaxItems <= 0 || items < cfg.MaxItems); u-- {
		if keep[u] {
			continue
		}
		if res.Used+units[u].tokens > cfg.Budget || cfg.MaxItems > 0 && items+units[u].end-units[u].start > cfg.MaxItems {
			misses++
			continue
		}
		misses = 0
		keep[u] = true
		items += units[u].end - units[u].start
		res.Used += units[u].tokens
		res.Filled += units[u].end - units[u].start
		units[u].why = "earlier in the conversation"
	}
	res.Items = make([]Item, 0, items)
	for u, un := range units {
		for i := un.start; i < un.end; i++ {
			if !keep[u] {
				res.Sunk = append(res.Sunk, i)
				continue
			}
			why := un.why
			if details != nil {
				if d := details[i].String(); d != "" {
					why += " (" + d + ")"
				}
			}
			it := Item{Index: i, Score: scores[i], Reason: why, Source: SourceScored}
			if un.why == "recent" || un.why == "earlier in the conversation" {
				it.Source = SourcePinned
			}
			if recalled[cands[i].Event.ID] && it.Source != SourcePinned {
				it.Source, it.Reason = SourceRecalled, "recalled from cold context; "+it.Reason
			}
			res.Items = append(res.Items, it)
		}
	}
	return res
}

// sides is what each side said of one candidate: its rank (1-based; 0 when that side did not
// list it) and score there.
type sides struct {
	denseRank, sparseRank int
	dense, sparse         float64
}

// String explains the candidate's fused score: "dense 0.83, rank 1; bm25 2.10, rank 3".
func (s sides) String() string {
	var parts []string
	if s.denseRank > 0 {
		parts = append(parts, fmt.Sprintf("dense %.2f, rank %d", s.dense, s.denseRank))
	}
	if s.sparseRank > 0 {
		parts = append(parts, fmt.Sprintf("bm25 %.2f, rank %d", s.sparse, s.sparseRank))
	}
	return strings.Join(parts, "; ")
}

// fuseDense fuses the candidates' BM25 scores with their dense scores by reciprocal rank
// ([embed.Fuse]): the sparse side lists the candidates with a positive BM25, the dense side
// those whose cosine stands out (see [DenseZ]). It returns each candidate's fused score (0: on
// neither side) and what each side said of it.
func fuseDense(sparse []float64, dense []DenseScore) ([]float64, []sides) {
	var n, sum, sq float64
	for i := range sparse {
		if i < len(dense) && dense[i].OK {
			n++
			sum += dense[i].Cos
			sq += dense[i].Cos * dense[i].Cos
		}
	}
	// Nothing stands out when every cosine is the same (or there is one): floor stays +Inf.
	floor := math.Inf(1)
	if n > 0 {
		mean := sum / n
		if sd := math.Sqrt(math.Max(0, sq/n-mean*mean)); sd > 1e-9 {
			floor = mean + DenseZ*sd - 1e-9 // the tolerance keeps rounding from losing the top of two
		}
	}
	var ds, ss []embed.Scored[int]
	for i, s := range sparse {
		if s > 0 {
			ss = append(ss, embed.Scored[int]{ID: i, Score: s})
		}
		if i < len(dense) && dense[i].OK && dense[i].Cos > 0 && dense[i].Cos >= floor && !math.IsNaN(dense[i].Cos) {
			ds = append(ds, embed.Scored[int]{ID: i, Score: dense[i].Cos})
		}
	}
	// Fuse ranks each list with a stable sort; handing them over in order already makes that
	// sort a linear pass (10,000 candidates: ≈ 4× faster).
	byScore := func(a, b embed.Scored[int]) int { return cmp.Compare(b.Score, a.Score) }
	slices.SortStableFunc(ds, byScore)
	slices.SortStableFunc(ss, byScore)
	fused, err := embed.Fuse(ds, ss, embed.FuseOptions{})
	if err != nil {
		// Only a NaN or infinite score makes Fuse fail, and neither side lists one: BM25 is
		// finite and NaN cosines are left out above. Fall back to BM25 rather than lose the
		// window.
		return sparse, nil
	}
	scores := make([]float64, len(sparse))
	why := make([]sides, len(sparse))
	for _, f := range fused {
		scores[f.ID] = f.Score
		why[f.ID] = sides{denseRank: f.DenseRank, sparseRank: f.SparseRank, dense: f.DenseScore, sparse: f.SparseScore}
	}
	return scores, why
}

// group makes units: an assistant event with tool calls takes the tool results that follow it.
func group(cands []Candidate) []unit {
	units := make([]unit, 0, len(cands))
	for i := 0; i < len(cands); i++ {
		u := unit{start: i, end: i + 1, tokens: tokensOf(cands[i].Event)}
		if calls := cands[i].Event.ToolCalls; len(calls) > 0 {
			for i+1 < len(cands) && cands[i+1].Event.Role == memory.RoleTool && callsInclude(calls, cands[i+1].Event.ToolCallID) {
				i++
				u.end = i + 1
				u.tokens += tokensOf(cands[i].Event)
			}
		}
		units = append(units, u)
	}
	return units
}

func callsInclude(calls []memory.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

func tokensOf(e memory.Event) int {
	if e.Tokens > 0 {
		return e.Tokens
	}
	return max(1, (len(e.Content)+3)/4)
}

// bm25 scores every candidate against the query terms (k1 1.2, b 0.75, IDF over the candidates).
func bm25(cands []Candidate, query []uint32, vocabSize int) []float64 {
	scores := make([]float64, len(cands))
	if len(query) == 0 {
		return scores
	}
	// slot[term id] = 1 + position of the term in the query (0: not a query term).
	slot := make([]uint8, vocabSize+1)
	nq := 0
	for _, t := range query {
		if int(t) <= vocabSize && slot[t] == 0 && nq < 255 {
			nq++
			slot[t] = uint8(nq)
		}
	}
	df := make([]int, nq)
	// Counts of the query terms, only for the candidates that contain one (most do not).
	matched := make([]int32, 0, len(cands))
	counts := make([]int32, 0, len(cands)*nq)
	row := make([]int32, nq)
	total := 0
	for i, c := range cands {
		total += len(c.Terms)
		hit := false
		for _, t := range c.Terms {
			if int(t) < len(slot) {
				if j := slot[t]; j != 0 {
					row[j-1]++
					hit = true
				}
			}
		}
		if hit {
			matched = append(matched, int32(i))
			for j, f := range row {
				if f > 0 {
					df[j]++
				}
			}
			counts = append(counts, row...)
			clear(row)
		}
	}
	n := float64(len(cands))
	avg := math.Max(1, float64(total)/n)
	idf := make([]float64, nq)
	for j, d := range df {
		idf[j] = math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5))
	}
	const k1, b = 1.2, 0.75
	for m, i := range matched {
		norm := k1 * (1 - b + b*float64(len(cands[i].Terms))/avg)
		s := 0.0
		for j, f := range counts[m*nq : (m+1)*nq] {
			if f > 0 {
				s += idf[j] * float64(f) * (k1 + 1) / (float64(f) + norm)
			}
		}
		scores[i] = s
	}
	return scores
}
