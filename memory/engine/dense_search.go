package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/vector"
	"github.com/hologramagent/hologram/memory/window"
)

// The dense side at query time: query vectors (cached), the window's dense scores and the
// vector search recall fuses (dense.go holds the model's life cycle).

type queryVec struct {
	space, text string
	vec         []float32
}

// queryVec embeds a query (the turn's input, a recall query) in the active space, normalised;
// the last few are remembered, so a turn's window and recall embed its input once.
func (d *Dense) queryVec(ctx context.Context, emb embed.Embedder, space, text string) ([]float32, error) {
	d.qmu.Lock()
	for _, q := range d.qcache {
		if q.space == space && q.text == text {
			d.qmu.Unlock()
			return q.vec, nil
		}
	}
	d.qmu.Unlock()
	vs, err := emb.EmbedTexts(ctx, []string{text}, embed.Query)
	if err != nil {
		return nil, err
	}
	v := vector.Normalized(vs[0])
	d.qmu.Lock()
	d.qcache = append(d.qcache, queryVec{space: space, text: text, vec: v})
	if len(d.qcache) > queryCacheSize {
		d.qcache = slices.Delete(d.qcache, 0, len(d.qcache)-queryCacheSize)
	}
	d.qmu.Unlock()
	return v, nil
}

func (d *Dense) clearQueries() {
	d.qmu.Lock()
	d.qcache = nil
	d.qmu.Unlock()
}

// windowScores returns the dense scores of a session's window candidates for input, or nil
// (sparse) when no model is ready or the input cannot be embedded.
func (d *Dense) windowScores(ctx context.Context, input string) (func(ids []int64) []window.DenseScore, bool) {
	emb, space, vecs := d.active()
	if emb == nil || strings.TrimSpace(input) == "" {
		return nil, false
	}
	qv, err := d.queryVec(ctx, emb, space, input)
	if err != nil {
		d.m.log.Warn("embedding the input failed; this window is ranked by BM25 alone", "err", err)
		return nil, false
	}
	return func(ids []int64) []window.DenseScore {
		out := make([]window.DenseScore, len(ids))
		cos, ok := vecs.Cosines(qv, ids)
		for i := range ids {
			out[i] = window.DenseScore{Cos: cos[i], OK: ok[i]}
		}
		return out
	}, true
}

// Search implements cold.Dense: a scan of the active space's vectors that q.Viewer may see
// (in q.Session when set), the cosine of each to the query, their mean and spread, and the
// best events in q.Layers; with a model that embeds images, the same over the image blocks'
// vectors (each found with the event that brought it). With no model ready, or when the query
// cannot be embedded, it returns nothing (recall goes on sparse).
func (d *Dense) Search(ctx context.Context, q cold.DenseQuery) (cold.DenseResult, error) {
	emb, space, vecs := d.active()
	if emb == nil || q.Limit <= 0 {
		return cold.DenseResult{}, nil
	}
	d.mu.Lock()
	imgs := d.imgs
	d.mu.Unlock()
	qv, err := d.queryVec(ctx, emb, space, q.Text)
	if err != nil {
		d.m.log.Warn("embedding a recall query failed; recall is sparse", "err", err)
		return cold.DenseResult{}, nil
	}
	keep := func(e memory.VectorEntry) bool {
		return q.Viewer.CanSee(e.Scope) && (q.Session == "" || e.Session == q.Session)
	}
	best, st := vecs.Search(qv, q.Limit*searchOverFetch, keep)
	res := cold.DenseResult{N: st.N, Mean: st.Mean, SD: st.SD}
	var bestImgs []scoredImage
	if imgs != nil && imgs.len() > 0 {
		var ist vector.Stats
		bestImgs, ist = imgs.search(qv, q.Limit*searchOverFetch, keep)
		res.ImageN, res.ImageMean, res.ImageSD = ist.N, ist.Mean, ist.SD
	}
	if res.N == 0 && len(bestImgs) == 0 {
		return res, nil
	}
	ids := make([]int64, 0, len(best)+len(bestImgs))
	cos := make(map[int64]float64, len(best))
	for _, b := range best {
		ids = append(ids, b.Event)
		cos[b.Event] = b.Cos
	}
	seen := make(map[int64]bool, len(bestImgs))
	for _, b := range bestImgs {
		if _, ok := cos[b.event]; !ok && !seen[b.event] {
			seen[b.event] = true
			ids = append(ids, b.event)
		}
	}
	hits, err := d.index.Events(ctx, ids)
	if err != nil {
		return cold.DenseResult{}, fmt.Errorf("dense search: %w", err)
	}
	byID := make(map[int64]memory.TextHit, len(hits))
	for _, h := range hits { // forgotten events are simply missing
		if !layerIn(h.Event.Layer, q.Layers) {
			continue
		}
		byID[h.Event.ID] = h
		if c, ok := cos[h.Event.ID]; ok {
			res.Hits = append(res.Hits, cold.DenseHit{Event: h.Event, Indexed: h.Indexed, Cos: c})
		}
	}
	for _, b := range bestImgs { // best first
		if h, ok := byID[b.event]; ok {
			res.Images = append(res.Images, cold.ImageHit{Block: b.block, Event: h.Event, Indexed: h.Indexed, Cos: b.cos})
		}
	}
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Cos > res.Hits[j].Cos })
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
	}
	return res, nil
}

func layerIn(l memory.Layer, ls []memory.Layer) bool { return len(ls) == 0 || slices.Contains(ls, l) }

// windowDense returns how to score a session's window candidates densely for input, or nil
// when the window is sparse (no model ready, or the input could not be embedded).
func (m *Engine) windowDense(ctx context.Context, input string) func(cands []window.Candidate) []window.DenseScore {
	if m.dense == nil {
		return nil
	}
	scores, ok := m.dense.windowScores(ctx, input)
	if !ok {
		return nil
	}
	return func(cands []window.Candidate) []window.DenseScore {
		ids := make([]int64, len(cands))
		for i, c := range cands {
			ids[i] = c.Event.ID
		}
		return scores(ids)
	}
}
