package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/hologramagent/hologram/memory"
)

// Fact recall settings.
const (
	autoRecallFacts  = 8   // facts recalled into pre_action
	namedEntityBoost = 0.5 // added to every current triple of an entity the query names
	maxNamedEntities = 5
)

// factHit is a recalled triple with its fused score.
type factHit struct {
	t     memory.Triple
	score float64
}

// recallFacts is the L3 side of recall: current triples found by text (BM25 over subject,
// predicate and object), fused with every current triple of the entities the query names, best
// first. Recalled entities are marked so the star map can light them.
func (m *Engine) recallFacts(ctx context.Context, v memory.Viewer, text string, k int) ([]factHit, error) {
	terms, err := m.tok(text)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return nil, nil
	}
	hits, err := m.store.SearchTriples(ctx, terms, v, 4*k)
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 {
		return nil, nil
	}
	top := hits[0].Score
	byID := map[int64]*factHit{}
	for _, h := range hits {
		s := 1.0
		if top > 0 {
			s = h.Score / top
		}
		byID[h.Triple.ID] = &factHit{t: h.Triple, score: s}
	}
	lower := strings.ToLower(text)
	named := []int64{}
	for _, h := range hits {
		for _, e := range []struct {
			id   int64
			name string
		}{{h.Triple.Subject, h.Triple.SubjectName}, {h.Triple.Object, h.Triple.ObjectName}} {
			if len(named) < maxNamedEntities && !slices.Contains(named, e.id) && mentions(lower, strings.ToLower(e.name)) {
				named = append(named, e.id)
			}
		}
	}
	for _, id := range named {
		ts, err := m.store.Triples(ctx, memory.TripleQuery{Viewer: v, Entity: id, Limit: 50})
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			fh := byID[t.ID]
			if fh == nil {
				fh = &factHit{t: t}
				byID[t.ID] = fh
			}
			fh.score += namedEntityBoost
		}
	}
	out := make([]factHit, 0, len(byID))
	for _, fh := range byID {
		out = append(out, *fh)
	}
	slices.SortFunc(out, func(a, b factHit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(b.t.ID - a.t.ID) // newer first
	})
	out = out[:min(len(out), k)]
	ents := map[int64]bool{}
	for _, fh := range out {
		ents[fh.t.Subject], ents[fh.t.Object] = true, true
	}
	ids := make([]int64, 0, len(ents))
	for id := range ents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if err := m.store.Recalled(ctx, ids, m.clock()); err != nil {
		m.log.Warn("marking recalled entities", "err", err)
	}
	return out, nil
}

// mentions reports whether name occurs in text as whole words (both lower case).
func mentions(text, name string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		before := j == 0 || !isWordByte(text, j-1)
		after := end == len(text) || !isWordByte(text, end)
		// CJK names sit inside runs of CJK text without spaces: any occurrence counts.
		if (before && after) || hasHan(name) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(s string, i int) bool {
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

func hasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}

// describeFact renders a triple for a prompt.
func describeFact(t memory.Triple) string {
	s := fmt.Sprintf("%s %s %s", t.SubjectName, t.Predicate, t.ObjectName)
	if !t.ValidFrom.IsZero() {
		s += " (since " + t.ValidFrom.UTC().Format("2006-01-02") + ")"
	}
	return s
}
