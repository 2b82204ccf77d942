package memtest

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// episodes splits every session into its episodes ([memory.EpisodeContinues]); an episode's id
// is its first event's. Under m.mu.
func (m *Mem) episodes() []memory.EpisodeHit {
	var out []memory.EpisodeHit
	for session, evs := range m.events {
		n := 0
		for i, e := range evs {
			if i > 0 && memory.EpisodeContinues(evs[i-1], n, e) {
				out[len(out)-1].LastID, out[len(out)-1].Last = e.ID, e.Time
				n++
				continue
			}
			out = append(out, memory.EpisodeHit{ID: e.ID, Session: session, FirstID: e.ID, LastID: e.ID, Last: e.Time})
			n = 1
		}
	}
	slices.SortFunc(out, func(a, b memory.EpisodeHit) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// SearchEpisodes implements [memory.Episodes] naively: every episode is scored, with the
// SQLite store's BM25 (k1 1.2, b 0.75, lengths against the mean of the episodes that match).
func (m *Mem) SearchEpisodes(ctx context.Context, q memory.EpisodeQuery) ([]memory.EpisodeHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	terms, qtf := q.Counts()
	if len(terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	type doc struct {
		hit    memory.EpisodeHit
		length float64
		tf     []float64
	}
	eps := m.episodes()
	df := make([]float64, len(terms))
	var docs []doc
	for _, h := range eps {
		d := doc{hit: h, tf: make([]float64, len(terms))}
		for _, e := range m.events[h.Session] {
			if !h.Holds(e) {
				continue
			}
			for _, w := range strings.Fields(strings.ToLower(m.indexed[e.ID])) {
				d.length++
				if i := slices.Index(terms, w); i >= 0 {
					d.tf[i]++
				}
			}
		}
		matched := false
		for i, f := range d.tf {
			if f > 0 {
				df[i]++
				matched = true
			}
		}
		first := m.events[h.Session][m.where[h.FirstID].index]
		if matched && q.Viewer.CanSee(first.Scope) && (q.Session == "" || h.Session == q.Session) {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	idf := make([]float64, len(terms))
	for i, t := range terms {
		if df[i] > 0 {
			idf[i] = qtf[t] * memory.BM25IDF(float64(len(eps)), df[i])
		}
	}
	sum := 0.0
	for _, d := range docs {
		sum += d.length
	}
	avg := max(sum/float64(len(docs)), 1)
	out := make([]memory.EpisodeHit, 0, len(docs))
	for _, d := range docs {
		d.hit.Score = memory.BM25Score(idf, d.tf, d.length, avg, memory.BM25EpisodeB)
		out = append(out, d.hit)
	}
	slices.SortStableFunc(out, func(a, b memory.EpisodeHit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out[:min(limit, len(out))], nil
}

// EpisodeEvents implements [memory.Episodes].
func (m *Mem) EpisodeEvents(ctx context.Context, eps []memory.EpisodeHit, v memory.Viewer) ([]memory.TextHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	var out []memory.TextHit
	for _, h := range eps {
		for _, e := range m.events[h.Session] {
			if h.Holds(e) && v.CanSee(e.Scope) {
				out = append(out, memory.TextHit{Event: copyEvent(e), Indexed: m.indexed[e.ID]})
			}
		}
	}
	slices.SortFunc(out, func(a, b memory.TextHit) int { return cmp.Compare(a.Event.ID, b.Event.ID) })
	return out, nil
}
