package cold

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// Episode documents fused with the turn ranking. A question of a few words names a fact, and
// the turn that states it is the best document; a long query — a user's message that goes on
// with a plan, or the dialogue so far — describes a topic, and the best document for a topic is
// the whole stretch of conversation about it (an episode: one session's events with gaps under
// Params.BurstGap), which names each of its parts somewhere. So each candidate episode is scored
// as one BM25 document (its known events' index terms together: the candidates and the
// neighbours the context step fetched; k1 1.2, b 0.75, lengths against the mean of the
// candidate episodes), and every matching event's score becomes
//
//	score + w × best × episode / bestEpisode,    w = Params.Episode × min(1, terms / Params.EpisodeTerms)
//
// (best: the best event score). A term the query says n times counts n times (as in plain
// BM25 over the query's words): a long query repeats what it is about.: the episode ranking weighs in proportion to how long the query
// is, and the events of one episode keep their order among themselves.

// episodes applies the episode-document scores to the candidates.
func (r *Recaller) episodes(ctx context.Context, q Query, cs map[int64]*cand, terms []string, qtf map[string]int) error {
	if r.p.Episode <= 0 || len(terms) == 0 || len(cs) == 0 {
		return nil
	}
	share := 1.0
	if r.p.EpisodeTerms > 0 {
		share = math.Min(1, float64(len(terms))/float64(r.p.EpisodeTerms))
	}
	w := r.p.Episode * share
	if w <= 0 {
		return nil
	}
	// An episode's document is all of its events, not only the candidates: the events around
	// the best candidates (EpisodeRadius positions either side) are fetched with their terms.
	docs, err := r.episodeEvents(ctx, q, cs)
	if err != nil {
		return err
	}
	df, total, err := r.opts.Index.DocFreq(ctx, terms)
	if err != nil {
		return fmt.Errorf("recall: episodes: %w", err)
	}
	slot := make(map[string]int, len(terms))
	idf := make([]float64, len(terms))
	for i, t := range terms {
		slot[t] = i
		if i < len(df) && df[i] > 0 {
			idf[i] = memory.BM25IDF(float64(total), float64(df[i]))
			if n := qtf[t]; n > 1 && r.p.EpisodeQTF {
				idf[i] *= float64(n)
			}
		}
	}
	all := make([]*cand, 0, len(docs))
	for _, c := range docs {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].ev.Session != all[j].ev.Session {
			return all[i].ev.Session < all[j].ev.Session
		}
		if !all[i].ev.Time.Equal(all[j].ev.Time) {
			return all[i].ev.Time.Before(all[j].ev.Time)
		}
		return all[i].ev.ID < all[j].ev.ID
	})
	type episode struct {
		from, to int
		length   float64
		tf       []float64
		score    float64
	}
	var eps []*episode
	sumLen := 0.0
	for from := 0; from < len(all); {
		to := from + 1
		for to < len(all) && all[to].ev.Session == all[from].ev.Session && all[to].ev.Time.Sub(all[to-1].ev.Time) <= r.p.BurstGap {
			to++
		}
		e := &episode{from: from, to: to, tf: make([]float64, len(terms))}
		for _, c := range all[from:to] {
			ws := strings.Fields(c.indexed)
			e.length += float64(len(ws))
			for _, t := range ws {
				if i, ok := slot[t]; ok {
					e.tf[i]++
				}
			}
		}
		sumLen += e.length
		eps = append(eps, e)
		from = to
	}
	if len(eps) == 0 || sumLen == 0 {
		return nil
	}
	const k1, b = 1.2, 0.75
	avg := sumLen / float64(len(eps))
	bestEp, best := 0.0, 0.0
	for _, e := range eps {
		norm := k1 * (1 - b + b*e.length/avg)
		for i, f := range e.tf {
			if f > 0 {
				e.score += idf[i] * f * (k1 + 1) / (f + norm)
			}
		}
		bestEp = math.Max(bestEp, e.score)
	}
	for _, c := range cs {
		best = math.Max(best, c.score)
	}
	if bestEp <= 0 || best <= 0 {
		return nil
	}
	for _, e := range eps {
		if e.score <= 0 {
			continue
		}
		add := w * best * e.score / bestEp
		for _, d := range all[e.from:e.to] {
			if c := cs[d.ev.ID]; c != nil && c.score > 0 {
				c.score += add
				c.why = append(c.why, fmt.Sprintf("episode %.2f", add))
			}
		}
	}
	return nil
}

// episodeEvents returns the candidates and the events around the best of them (the documents
// of their episodes), each with its index terms. The extra events are not candidates.
func (r *Recaller) episodeEvents(ctx context.Context, q Query, cs map[int64]*cand) (map[int64]*cand, error) {
	docs := make(map[int64]*cand, len(cs))
	for id, c := range cs {
		docs[id] = c
	}
	best := sortedByScore(cs)
	if n := min(r.p.MaxNeighbour, 3*q.K); len(best) > n {
		best = best[:n]
	}
	ids := make([]int64, 0, len(best))
	for _, c := range best {
		ids = append(ids, c.ev.ID)
	}
	if r.p.EpisodeRadius > 0 && len(ids) > 0 {
		nbs, err := r.opts.Index.Neighbours(ctx, ids, r.p.EpisodeRadius, q.Viewer)
		if err != nil {
			return nil, fmt.Errorf("recall: episodes: %w", err)
		}
		for _, ev := range nbs {
			if docs[ev.ID] == nil && layerOK(ev.Layer, q.Layers) && (q.Session == "" || ev.Session == q.Session) {
				docs[ev.ID] = &cand{ev: ev}
			}
		}
	}
	var missing []int64
	for id, c := range docs {
		if c.indexed == "" {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		evs, err := r.opts.Index.Events(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("recall: episodes: %w", err)
		}
		for _, h := range evs {
			if c := docs[h.Event.ID]; c != nil {
				c.indexed = h.Indexed
			}
		}
	}
	return docs, nil
}
