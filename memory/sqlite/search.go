package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/memory"
)

// defaultLimit is the number of hits SearchTerms returns when the query sets no Limit.
const defaultLimit = 100

// SearchTerms implements [memory.Index]: BM25 (k1 1.2, b 0.5) over the index's terms, the
// expansion column counting ExpansionWeight per occurrence (in frequencies and in document
// lengths). Terms are deduplicated (a term with spaces counts as its parts); no terms, no hits,
// unless q.To is set: then the events of [q.From, q.To) are listed, oldest first, score 0.
// Visibility (q.Viewer), layer, session and time filters run in SQL; hits are ranked by score,
// then id.
//
// FTS5 finds the candidates, SQLite's own bm25() does not rank them: an OR query makes FTS5 score
// every matching row (tens of thousands for common words in a large store). Instead the rarest
// terms select at most candidateRows rows (15 per hit wanted) (a row matching only very common terms cannot outrank
// one matching a rare term by much, and such rows are still found when no rarer term exists), and
// Go scores those candidates on every query term, with document frequencies from the index's
// vocabulary and lengths from the store's running totals.
func (s *Store) SearchTerms(ctx context.Context, q memory.TextQuery) ([]memory.TextHit, error) {
	terms := termPhrases(q.Terms)
	if len(terms) == 0 && q.To.IsZero() {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	filter, args, err := searchFilter(q, s.branched.Load())
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return s.eventsBetween(ctx, filter, args, limit)
	}
	// Document frequencies in one read; the event count from the running totals (every event
	// has one index row), not a count(*) of the events table per search.
	df, err := s.termDocFreqs(ctx, s.r, terms)
	if err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
	}
	total := s.stats.count()
	// The rarest terms, up to rowsCap matching rows in all (15 rows per hit wanted, 500–3000).
	rowsCap := min(candidateRows, max(200, 8*limit))
	order := make([]int, 0, len(terms))
	for i := range terms {
		if df[i] > 0 {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	pick := rarest(terms, df, order, rowsCap)
	// Every index row has its event, so without a filter the join to events is skipped: the rows
	// come in the same (index) order either way. Only the rowids come back, as one value: the
	// candidates' index text comes from the store's cache (docTexts).
	query := `SELECT f.rowid FROM events_fts f WHERE events_fts MATCH ? LIMIT ?`
	if filter != "1" {
		query = `SELECT f.rowid FROM events_fts f JOIN events e ON e.id = f.rowid
		WHERE events_fts MATCH ? AND ` + filter + ` LIMIT ?`
	}
	var idText sql.NullString
	if err := s.r.QueryRowContext(ctx, `SELECT group_concat(rowid) FROM (`+query+`)`,
		append(append([]any{orPhrases(pick)}, args...), rowsCap)...).Scan(&idText); err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
	}
	candIDs, err := parseIDs(idText.String)
	if err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
	}
	texts, err := s.docTexts(ctx, s.r, candIDs)
	if err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
	}

	slot := newTermSlots(terms)
	idf := make([]float64, len(terms))
	for i := range terms {
		idf[i] = memory.BM25IDF(float64(total), float64(df[i]))
	}
	avg := s.stats.avgLen()
	type scored struct {
		id    int64
		score float64
	}
	cands := make([]scored, 0, len(candIDs))
	tf := make([]float64, len(terms))
	for i, id := range candIDs {
		clear(tf)
		n := countTerms(texts[i].tokens, slot, tf, 1)
		n += ExpansionWeight * countTerms(texts[i].expansion, slot, tf, ExpansionWeight)
		norm := bm25K1 * (1 - bm25B + bm25B*n/avg)
		score := 0.0
		for i, f := range tf {
			if f > 0 {
				score += idf[i] * f * (bm25K1 + 1) / (f + norm)
			}
		}
		cands = append(cands, scored{id, score})
	}
	slices.SortFunc(cands, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return compareIDs(a.id, b.id)
	})
	cands = cands[:min(limit, len(cands))]
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	hits, err := s.Events(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
	}
	byID := make(map[int64]memory.TextHit, len(hits))
	for _, h := range hits {
		byID[h.Event.ID] = h
	}
	out := make([]memory.TextHit, 0, len(cands))
	for _, c := range cands {
		if h, ok := byID[c.id]; ok {
			h.Score = c.score
			out = append(out, h)
		}
	}
	return out, nil
}

// rarest returns the terms at positions order (those with df > 0), rarest first, as long as
// their rows together stay within rowsCap (at least one term).
func rarest(terms []string, df []int, order []int, rowsCap int) []string {
	sort.Slice(order, func(a, b int) bool { return df[order[a]] < df[order[b]] })
	var pick []string
	rows := 0
	for _, i := range order {
		if len(pick) > 0 && rows+df[i] > rowsCap {
			break
		}
		pick = append(pick, terms[i])
		rows += df[i]
	}
	return pick
}

// candidateRows bounds the rows one search scores (fewer when fewer hits are wanted); bm25K1
// and bm25B are BM25's constants, shared with the in-memory index of the tests.
const (
	candidateRows = 3000
	bm25K1        = memory.BM25K1
	bm25B         = memory.BM25B
)

// termSlots finds a query term's position: a linear scan for a few terms (cheaper than hashing
// every token of every candidate), a map for many. Terms are distinct.
type termSlots struct {
	terms []string
	m     map[string]int
}

func newTermSlots(terms []string) termSlots {
	ts := termSlots{terms: terms}
	if len(terms) > 8 {
		ts.m = make(map[string]int, len(terms))
		for i, t := range terms {
			ts.m[t] = i
		}
	}
	return ts
}

func findSlot[T ~string | ~[]byte](ts termSlots, t T) (int, bool) {
	if ts.m != nil {
		j, ok := ts.m[string(t)] // no allocation: the compiler looks up with the bytes
		return j, ok
	}
	for j, q := range ts.terms {
		if q == string(t) {
			return j, true
		}
	}
	return 0, false
}

// countTerms adds w to tf[j] for each query term t (at position j of slot) in the space-joined
// text and returns the number of terms in it.
func countTerms[T ~string | ~[]byte](text T, slot termSlots, tf []float64, w float64) float64 {
	n := 0
	for len(text) > 0 {
		i := indexSpace(text)
		var t T
		if i < 0 {
			t, text = text, text[:0]
		} else {
			t, text = text[:i], text[i+1:]
		}
		if len(t) == 0 {
			continue
		}
		n++
		if j, ok := findSlot(slot, t); ok {
			tf[j] += w
		}
	}
	return float64(n)
}

// indexSpace is the index of the first ' ' in text, or -1.
func indexSpace[T ~string | ~[]byte](text T) int {
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' {
			return i
		}
	}
	return -1
}

// searchFilter is the SQL condition (on events e) of a query's viewer, layers and session;
// branched adds that events off their session's current branch are not recalled.
func searchFilter(q memory.TextQuery, branched bool) (string, []any, error) {
	var where []string
	var args []any
	if branched {
		where = append(where, "e.off_branch = 0")
	}
	if cond, cargs := visibility(q.Viewer, "e."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	if len(q.Layers) > 0 {
		ph := make([]string, len(q.Layers))
		for i, l := range q.Layers {
			if !l.Valid() {
				return "", nil, fmt.Errorf("search terms: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
			}
			ph[i] = "?"
			args = append(args, int(l))
		}
		where = append(where, "e.layer IN ("+strings.Join(ph, ", ")+")")
	}
	if q.Session != "" {
		where, args = append(where, "e.session = ?"), append(args, q.Session)
	}
	if !q.To.IsZero() {
		where, args = append(where, "e.time >= ? AND e.time < ?"), append(args, toNanos(q.From), toNanos(q.To))
	}
	if len(where) == 0 {
		return "1", nil, nil
	}
	return strings.Join(where, " AND "), args, nil
}

// eventsBetween lists the events that pass filter (which holds the time window), oldest first,
// with their index terms (events_time keeps it a range read).
func (s *Store) eventsBetween(ctx context.Context, filter string, args []any, limit int) ([]memory.TextHit, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixCols("e.")+`, f.c0
		FROM events e LEFT JOIN events_fts_content f ON f.id = e.id
		WHERE `+filter+` ORDER BY e.time, e.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("search terms: events by time: %w", err)
	}
	hits, err := scanHits(rows, false, min(limit, 256))
	if err == nil {
		err = attachHitBlocks(ctx, s.r, hits)
	}
	if err != nil {
		return nil, fmt.Errorf("search terms: events by time: %w", err)
	}
	return hits, nil
}

// termPhrases splits terms on whitespace and de-duplicates the parts, in order.
func termPhrases(terms []string) []string {
	var out []string
	seen := make(map[string]bool)
	for _, t := range terms {
		for _, w := range strings.Fields(t) {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// orPhrases is the FTS5 OR of phrases, each quoted.
func orPhrases(phrases []string) string { return ftsPhrases(phrases, " OR ") }

// indexStats are the running totals BM25 needs: indexed events and their (weighted) lengths.
type indexStats struct {
	mu    sync.Mutex
	docs  float64
	terms float64
}

func (st *indexStats) add(docs int, terms float64) {
	st.mu.Lock()
	st.docs += float64(docs)
	st.terms += terms
	st.mu.Unlock()
}

// count is the number of indexed events.
func (st *indexStats) count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return int(st.docs)
}

func (st *indexStats) avgLen() float64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.docs == 0 || st.terms == 0 {
		return 1
	}
	return st.terms / st.docs
}

// indexLen is the weighted length of an indexed event.
func indexLen(tokens, expansion string) float64 {
	return float64(len(strings.Fields(tokens))) + ExpansionWeight*float64(len(strings.Fields(expansion)))
}

// loadStats computes the totals from the index (at Open).
func (s *Store) loadStats(ctx context.Context) error {
	var docs int
	var toks, exps float64
	// events_fts_content (c0 tokens, c1 expansion): FTS5's own rows, read as a plain table
	// (through events_fts every row's columns cost a statement of their own).
	err := s.w.QueryRowContext(ctx, `SELECT count(*),
		total(length(c0) - length(replace(c0, ' ', '')) + (c0 != '')),
		total(length(c1) - length(replace(c1, ' ', '')) + (c1 != ''))
		FROM events_fts_content`).Scan(&docs, &toks, &exps)
	if err != nil {
		return fmt.Errorf("index statistics: %w", err)
	}
	s.stats.add(docs, toks+ExpansionWeight*exps)
	return nil
}
