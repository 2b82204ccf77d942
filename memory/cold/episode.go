package cold

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Episode documents fused with the turn ranking. A question of a few words names a fact, and
// the turn that states it is the best document; a long query — a user's message that goes on
// with a plan, or the dialogue so far — describes a topic, and the best document for a topic is
// the whole stretch of conversation about it (an episode, [memory.EpisodeContinues]), which
// names each of its parts somewhere. The index ranks every episode as one BM25 document
// ([memory.Episodes]: k1 1.2, b 0.75, document frequencies over episodes; a term the query says
// n times counts n times, as in plain BM25 over the query's words: a long query repeats what it
// is about), and every candidate's score becomes
//
//	score + w × best × episode / bestEpisode,    w = Params.Episode × min(1, terms / Params.EpisodeTerms)
//
// (best: the best event score): the episode ranking weighs in proportion to how long the query
// is, and the events of one episode keep their order among themselves. (Bringing in the events
// of the best episodes that no candidate belongs to was measured and left out: no figure of any
// dev set moved, and it read whole episodes on every recall.)

// episodes applies the episode-document scores to the candidates.
func (r *Recaller) episodes(ctx context.Context, q Query, cs map[int64]*cand, terms []string, qtf map[string]int) error {
	if r.p.Episode <= 0 || len(terms) == 0 || len(terms) < r.p.EpisodeMinTerms || len(cs) == 0 {
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
	qterms := make([]string, 0, len(terms))
	for _, t := range terms {
		n := 1
		if r.p.EpisodeQTF {
			n = max(1, qtf[t])
		}
		for range n {
			qterms = append(qterms, t)
		}
	}
	eps, err := r.opts.Index.SearchEpisodes(ctx, memory.EpisodeQuery{Terms: qterms, Viewer: q.Viewer, Session: q.Session,
		Limit: min(r.p.MaxNeighbour, max(20, 3*q.K))})
	if err != nil {
		return fmt.Errorf("recall: episodes: %w", err)
	}
	if len(eps) == 0 || eps[0].Score <= 0 {
		return nil
	}
	r.recency(eps)
	best := 0.0
	for _, c := range cs {
		best = math.Max(best, c.score)
	}
	if best <= 0 {
		return nil
	}
	bySession := make(map[string][]memory.EpisodeHit, len(eps))
	for _, e := range eps {
		bySession[e.Session] = append(bySession[e.Session], e)
	}
	for _, c := range cs {
		if c.score <= 0 {
			continue
		}
		for _, e := range bySession[c.ev.Session] {
			if e.Holds(c.ev) {
				c.episode = e.ID
				add := w * best * e.Score / eps[0].Score
				c.score += add
				c.why = append(c.why, fmt.Sprintf("episode %.2f", add))
				break
			}
		}
	}
	return nil
}

// recency weighs each episode by how recent it is among those found: score × (1 + Recency ×
// e^(−age / RecencyDays)), age in days before the newest episode found (not before the clock:
// an owner back after a month picks up where the conversations left off). A message that goes
// on with a plan usually goes on with its latest conversation; being part of the episode step,
// the weight grows with the query's length as the episode's does, so a short question about
// long ago is barely moved. eps is re-sorted, best first.
func (r *Recaller) recency(eps []memory.EpisodeHit) {
	if r.p.Recency <= 0 || r.p.RecencyDays <= 0 {
		return
	}
	var newest time.Time
	for _, e := range eps {
		if e.Last.After(newest) {
			newest = e.Last
		}
	}
	for i := range eps {
		age := newest.Sub(eps[i].Last).Hours() / 24
		eps[i].Score *= 1 + r.p.Recency*math.Exp(-age/r.p.RecencyDays)
	}
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].Score > eps[j].Score })
}
