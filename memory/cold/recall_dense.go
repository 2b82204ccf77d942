package cold

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
)

// The dense side of recall and its fusion with the sparse ranking (text and image vectors).

// Dense is the dense side of recall: the kernel's active embedding model and the vectors of
// the events in its space. Implementations are safe for concurrent use.
type Dense interface {
	// Search returns the events nearest to q.Text in the active space that q.Viewer may see,
	// in q.Layers and q.Session (when set), best first, at most q.Limit, and the distribution
	// of the cosines of every event it compared. Events without a vector in the active space
	// are never returned. With no model ready it returns an empty result, not an error.
	Search(ctx context.Context, q DenseQuery) (DenseResult, error)
}

// DenseQuery is a dense search.
type DenseQuery struct {
	Text    string
	Viewer  memory.Viewer
	Layers  []memory.Layer // empty: every layer
	Session string         // non-empty: only this session's events
	Limit   int
}

// DenseHit is an event and its cosine similarity to the query; Indexed is what it was indexed
// under (as [memory.TextHit]).
type DenseHit struct {
	Event   memory.Event
	Indexed string
	Cos     float64
}

// ImageHit is an image block whose vector (in a model that embeds images and text in one
// space) is near the query, and the event that brought it: the image ranks that event.
type ImageHit struct {
	Block   string
	Event   memory.Event
	Indexed string
	Cos     float64
}

// DenseResult is a dense search's answer: the best hits, and the mean and standard deviation
// of the cosines of the N events compared (the query's background similarity); with a model
// that embeds images, the best image blocks too, and the statistics of the ImageN images
// compared (an image's cosine to a text has its own range, so the two sides are judged apart).
type DenseResult struct {
	Hits     []DenseHit
	Mean, SD float64
	N        int

	Images             []ImageHit
	ImageMean, ImageSD float64
	ImageN             int
}

// fuseDense runs the dense search, adds the events that stand out (see Params.DenseZ) to the
// candidates, and replaces every candidate's score by its reciprocal-rank fusion of the sparse
// ranking (the scores so far) and the dense one. When no event stands out the sparse scores are
// left as they are.
func (r *Recaller) fuseDense(ctx context.Context, q Query, cs map[int64]*cand) error {
	res, err := r.opts.Dense.Search(ctx, DenseQuery{Text: q.Text, Viewer: q.Viewer, Layers: q.Layers, Session: q.Session,
		Limit: min(r.p.MaxCands, max(20, 6*q.K))})
	if err != nil {
		return fmt.Errorf("recall: dense: %w", err)
	}
	floor := math.Inf(1)
	if res.SD > 1e-9 {
		floor = res.Mean + r.p.DenseZ*res.SD
	}
	var dense []embed.Scored[int64]
	for _, h := range res.Hits {
		if h.Cos <= 0 || h.Cos < floor || math.IsNaN(h.Cos) || !layerOK(h.Event.Layer, q.Layers) ||
			(q.Session != "" && h.Event.Session != q.Session) || !q.Viewer.CanSee(h.Event.Scope) {
			continue
		}
		dense = append(dense, embed.Scored[int64]{ID: h.Event.ID, Score: h.Cos})
		if cs[h.Event.ID] == nil {
			cs[h.Event.ID] = &cand{ev: h.Event, indexed: h.Indexed}
		}
	}
	images := r.imageRanking(q, res, cs)
	if len(dense) == 0 && len(images) == 0 {
		return nil
	}
	var sparse []embed.Scored[int64]
	for _, c := range sortedByScore(cs) {
		if c.score > 0 {
			sparse = append(sparse, embed.Scored[int64]{ID: c.ev.ID, Score: c.score})
		}
	}
	fused, err := embed.Fuse(dense, sparse, embed.FuseOptions{})
	if err != nil {
		return fmt.Errorf("recall: dense: %w", err)
	}
	for _, c := range cs {
		c.score = 0
	}
	for _, f := range fused {
		c := cs[f.ID]
		c.score = f.Score
		if f.DenseRank > 0 {
			c.why = append(c.why, fmt.Sprintf("dense %.2f, rank %d", f.DenseScore, f.DenseRank))
		}
	}
	// The image side is a third ranking in the same reciprocal-rank sum (embed.Fuse's K): an
	// event whose picture and whose words both match ranks above one that only one side finds.
	for i, im := range images {
		c := cs[im.ID]
		c.score += 1 / (imageFuseK + float64(i+1))
		c.why = append(c.why, fmt.Sprintf("image %.2f, rank %d", im.Score, i+1))
	}
	return nil
}

// imageFuseK is the rank constant of the image side's reciprocal rank, embed.Fuse's default.
const imageFuseK = 60

// imageRanking ranks the events whose image blocks stand out from the images' background
// similarity to the query (the image cosines' mean plus Params.ImageZ standard deviations),
// each by its best image; it adds those events to the candidates and records which of their
// images matched. Nothing without image hits.
func (r *Recaller) imageRanking(q Query, res DenseResult, cs map[int64]*cand) []embed.Scored[int64] {
	if len(res.Images) == 0 {
		return nil
	}
	floor := math.Inf(1)
	if res.ImageSD > 1e-9 {
		floor = res.ImageMean + r.p.ImageZ*res.ImageSD
	}
	best := map[int64]float64{}
	var order []int64
	for _, h := range res.Images { // best first
		if h.Cos <= 0 || h.Cos < floor || math.IsNaN(h.Cos) || !layerOK(h.Event.Layer, q.Layers) ||
			(q.Session != "" && h.Event.Session != q.Session) || !q.Viewer.CanSee(h.Event.Scope) {
			continue
		}
		c := cs[h.Event.ID]
		if c == nil {
			c = &cand{ev: h.Event, indexed: h.Indexed}
			cs[h.Event.ID] = c
		}
		c.images = append(c.images, h.Block)
		if _, ok := best[h.Event.ID]; !ok {
			best[h.Event.ID] = h.Cos
			order = append(order, h.Event.ID)
		}
	}
	out := make([]embed.Scored[int64], len(order))
	for i, id := range order {
		out[i] = embed.Scored[int64]{ID: id, Score: best[id]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
