package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// defaultLimit is the number of hits SearchTerms returns when the query sets no Limit.
const defaultLimit = 100

// SearchTerms implements [memory.Index]. The query is an FTS5 OR of the terms, each quoted so
// that FTS5 syntax inside a term is literal (a term containing spaces counts as its parts; each
// distinct term counts once); no terms means no hits. Visibility (q.Viewer), layer and session
// filters run in SQL, hits are ranked by FTS5 bm25 (k1 = 1.2, b = 0.75) and then by id, and
// Score is -bm25, so higher is better. Matching folds case, as the index does.
//
// Every match is scored (FTS5 computes bm25 for each row an OR query matches, and reads the
// whole document list of each term for its IDF), so the cost grows with the matches of the most
// frequent term: see BenchmarkSearchTerms100k.
func (s *Store) SearchTerms(ctx context.Context, q memory.TextQuery) ([]memory.TextHit, error) {
	phrases := termPhrases(q.Terms)
	if len(phrases) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	var where []string
	var args []any
	if cond, cargs := visibility(q.Viewer, "e."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	if len(q.Layers) > 0 {
		ph := make([]string, len(q.Layers))
		for i, l := range q.Layers {
			if !l.Valid() {
				return nil, fmt.Errorf("search terms: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
			}
			ph[i] = "?"
			args = append(args, int(l))
		}
		where = append(where, "e.layer IN ("+strings.Join(ph, ", ")+")")
	}
	if q.Session != "" {
		where, args = append(where, "e.session = ?"), append(args, q.Session)
	}
	filter := "1"
	if len(where) > 0 {
		filter = strings.Join(where, " AND ")
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixCols("e.")+`, f.tokens, bm25(events_fts, 1.0, `+expansionWeightSQL+`) AS score
		FROM events_fts f JOIN events e ON e.id = f.rowid
		WHERE events_fts MATCH ? AND `+filter+` ORDER BY score, e.id LIMIT ?`,
		append(append([]any{orPhrases(phrases)}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
	}
	hits, err := scanHits(rows, true)
	if err != nil {
		return nil, fmt.Errorf("search terms: %w", err)
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

var expansionWeightSQL = strconv.FormatFloat(ExpansionWeight, 'f', -1, 64)
