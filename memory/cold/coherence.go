package cold

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// Episode coherence (query-term coverage over a window). In a conversation a memory is rarely
// one message: a plan, a preference or an event is talked over for several turns, and each turn
// names only part of it. A question that names five things is better answered by the stretch of
// conversation (an episode: one session's events with gaps under Params.BurstGap) that covers
// most of them than by the one turn that repeats two of them most often. Each candidate's
// episode gets a coverage in [0, 1): the IDF-weighted share of the query's terms that its
// candidate events hold, each term saturating as in BM25 (tf / (tf + 1.2)); an event's score is
// multiplied by 1 + Params.Coherence × coverage. Events outside any match keep their score.

// coherence applies the episode coverage to the candidates' scores.
func (r *Recaller) coherence(ctx context.Context, cs map[int64]*cand, terms []string) error {
	if r.p.Coherence <= 0 || len(terms) == 0 || len(cs) == 0 {
		return nil
	}
	df, total, err := r.opts.Index.DocFreq(ctx, terms)
	if err != nil {
		return fmt.Errorf("recall: coherence: %w", err)
	}
	slot := make(map[string]int, len(terms))
	idf := make([]float64, len(terms))
	sum := 0.0
	for i, t := range terms {
		slot[t] = i
		if i < len(df) && df[i] > 0 {
			idf[i] = memory.BM25IDF(float64(total), float64(df[i]))
			sum += idf[i]
		}
	}
	if sum == 0 {
		return nil
	}
	all := make([]*cand, 0, len(cs))
	for _, c := range cs {
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
	tf := make([]float64, len(terms))
	for from := 0; from < len(all); {
		to := from + 1
		for to < len(all) && all[to].ev.Session == all[from].ev.Session && all[to].ev.Time.Sub(all[to-1].ev.Time) <= r.p.BurstGap {
			to++
		}
		clear(tf)
		for _, c := range all[from:to] {
			for _, w := range strings.Fields(c.indexed) {
				if i, ok := slot[w]; ok {
					tf[i]++
				}
			}
		}
		cov := 0.0
		for i, f := range tf {
			cov += idf[i] * f / (f + 1.2)
		}
		cov /= sum
		if cov > 0 {
			for _, c := range all[from:to] {
				if c.score > 0 {
					c.score *= 1 + r.p.Coherence*cov
					c.why = append(c.why, fmt.Sprintf("episode covers %.0f%%", 100*cov))
				}
			}
		}
		from = to
	}
	return nil
}
