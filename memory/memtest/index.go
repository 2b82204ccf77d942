package memtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// BM25 parameters: the SQLite store's ([memory.BM25K1], [memory.BM25B]), so that tests on this
// index rank as the product does.
const (
	bm25K1 = memory.BM25K1
	bm25B  = memory.BM25B
)

// queryTerms lowercases, splits and de-duplicates query terms the way the SQLite store builds its
// OR query.
func queryTerms(terms []string) []string {
	var out []string
	for _, t := range terms {
		for _, f := range strings.Fields(strings.ToLower(t)) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// SearchTerms implements [memory.Index] with a naive BM25 over every event, the store's
// constants and IDF ([memory.BM25IDF]), ties broken by id.
func (m *Mem) SearchTerms(ctx context.Context, q memory.TextQuery) ([]memory.TextHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, l := range q.Layers {
		if !l.Valid() {
			return nil, fmt.Errorf("search terms: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
		}
	}
	terms := queryTerms(q.Terms)
	if len(terms) == 0 && q.To.IsZero() {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	inTime := func(e memory.Event) bool {
		return q.To.IsZero() || (!e.Time.Before(q.From) && e.Time.Before(q.To))
	}
	if len(terms) == 0 { // the events of the time window, oldest first
		var hits []memory.TextHit
		for id := range m.indexed {
			pos := m.where[id]
			e := m.events[pos.session][pos.index]
			if q.Viewer.CanSee(e.Scope) && (q.Session == "" || e.Session == q.Session) &&
				(len(q.Layers) == 0 || slices.Contains(q.Layers, e.Layer)) && inTime(e) {
				hits = append(hits, memory.TextHit{Event: copyEvent(e), Indexed: m.indexed[id]})
			}
		}
		sort.Slice(hits, func(i, j int) bool {
			if !hits[i].Event.Time.Equal(hits[j].Event.Time) {
				return hits[i].Event.Time.Before(hits[j].Event.Time)
			}
			return hits[i].Event.ID < hits[j].Event.ID
		})
		return hits[:min(len(hits), limit)], nil
	}

	// Corpus statistics over every event, as FTS5 keeps them.
	docs := make(map[int64][]string, len(m.indexed))
	total := 0
	df := make(map[string]int)
	for id, s := range m.indexed {
		toks := strings.Fields(strings.ToLower(s))
		docs[id] = toks
		total += len(toks)
		seen := make(map[string]bool)
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(docs))
	avgdl := 0.0
	if n > 0 {
		avgdl = float64(total) / n
	}
	idf := make(map[string]float64, len(terms))
	for _, t := range terms {
		idf[t] = memory.BM25IDF(n, float64(df[t]))
	}

	var hits []memory.TextHit
	for id, toks := range docs {
		pos := m.where[id]
		e := m.events[pos.session][pos.index]
		if !q.Viewer.CanSee(e.Scope) || (q.Session != "" && e.Session != q.Session) ||
			(len(q.Layers) > 0 && !slices.Contains(q.Layers, e.Layer)) || !inTime(e) {
			continue
		}
		score, matched := 0.0, false
		for _, t := range terms {
			tf := 0
			for _, x := range toks {
				if x == t {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			matched = true
			f := float64(tf)
			score += idf[t] * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(toks))/avgdl))
		}
		if matched {
			hits = append(hits, memory.TextHit{Event: copyEvent(e), Score: score, Indexed: m.indexed[id]})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Event.ID < hits[j].Event.ID
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// DocFreq implements [memory.Index]; terms are matched in lower case.
func (m *Mem) DocFreq(ctx context.Context, terms []string) ([]int, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if err := m.lock(); err != nil {
		return nil, 0, err
	}
	defer m.mu.Unlock()
	out := make([]int, len(terms))
	for i, term := range terms {
		want := strings.Fields(strings.ToLower(term))
		if len(want) != 1 {
			continue // the SQLite store counts multi-token terms as phrases; the suite never asks
		}
		for _, s := range m.indexed {
			if slices.Contains(strings.Fields(strings.ToLower(s)), want[0]) {
				out[i]++
			}
		}
	}
	return out, len(m.indexed), nil
}

// Neighbours implements [memory.Index]: positions count every event of the anchor's session,
// then the neighbours v cannot see are dropped.
func (m *Mem) Neighbours(ctx context.Context, ids []int64, radius int, v memory.Viewer) ([]memory.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if radius <= 0 {
		return nil, nil
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	found := make(map[int64]memory.Event)
	for _, id := range ids {
		pos, ok := m.where[id]
		if !ok {
			continue
		}
		evs := m.events[pos.session]
		for i := max(0, pos.index-radius); i <= min(len(evs)-1, pos.index+radius); i++ {
			if e := evs[i]; !slices.Contains(ids, e.ID) && v.CanSee(e.Scope) {
				found[e.ID] = copyEvent(e)
			}
		}
	}
	out := make([]memory.Event, 0, len(found))
	for _, e := range found {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Events implements [memory.Index].
func (m *Mem) Events(ctx context.Context, ids []int64) ([]memory.TextHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var out []memory.TextHit
	for _, id := range sorted {
		if pos, ok := m.where[id]; ok {
			out = append(out, memory.TextHit{Event: copyEvent(m.events[pos.session][pos.index]), Indexed: m.indexed[id]})
		}
	}
	return out, nil
}

// LayerEvents implements [memory.Layers].
func (m *Mem) LayerEvents(ctx context.Context, session string, l memory.Layer) ([]memory.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !l.Valid() {
		return nil, fmt.Errorf("layer events: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
	}
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	if _, ok := m.sessions[session]; !ok {
		return nil, fmt.Errorf("layer events: session %q: %w", session, memory.ErrNotFound)
	}
	var out []memory.Event
	for _, e := range m.events[session] {
		if e.Layer == l {
			out = append(out, copyEvent(e))
		}
	}
	return out, nil
}

// SetLayer implements [memory.Layers]; an unknown id changes nothing and is ErrNotFound.
func (m *Mem) SetLayer(ctx context.Context, ids []int64, l memory.Layer) error {
	if !l.Valid() {
		return fmt.Errorf("set layer: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
	}
	return m.update(ctx, "set layer", ids, func(e *memory.Event) { e.Layer = l })
}

// Touch implements [memory.Layers]; an unknown id changes nothing and is ErrNotFound.
func (m *Mem) Touch(ctx context.Context, ids []int64, at time.Time) error {
	at = utc(at)
	return m.update(ctx, "touch", slices.Compact(slices.Sorted(slices.Values(ids))), func(e *memory.Event) {
		e.Accesses++
		if at.After(e.LastAccess) {
			e.LastAccess = at
		}
	})
}

// update applies change to every event in ids, or to none when one is unknown.
func (m *Mem) update(ctx context.Context, what string, ids []int64, change func(*memory.Event)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	var missing []int64
	for _, id := range ids {
		if _, ok := m.where[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%s: events %v: %w", what, slices.Compact(missing), memory.ErrNotFound)
	}
	for _, id := range ids {
		pos := m.where[id]
		change(&m.events[pos.session][pos.index])
	}
	return nil
}

var (
	_ memory.Index  = (*Mem)(nil)
	_ memory.Layers = (*Mem)(nil)
)
