package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// docText is what an event is indexed under: its events_fts row.
type docText struct {
	tokens, expansion string
}

func (d docText) size() int { return len(d.tokens) + len(d.expansion) + 48 }

// docCache keeps the index text of recently written and recently scored events, so that a search
// scores its candidates without reading their rows back: FTS5 reads a row's columns through its
// content table one statement per row, which cost ≈ 3 µs a candidate and most of a search that
// reads hundreds (docs/benchmarks.md, "The turn's cost"). An event's index text never changes
// once written (events are appended, never re-tokenized in place, and their ids are never
// reused: AUTOINCREMENT), so the cache needs no invalidation but a reset when a restore fills
// the store anew. It is bounded by entries and bytes and forgets the oldest entry first.
type docCache struct {
	mu    sync.Mutex
	m     map[int64]docText
	order []int64 // ids in insertion order from order[head]; compacted as it is consumed
	head  int
	bytes int
	maxN  int
	maxB  int
}

// Bounds of the cache: the candidates of a few dozen searches, a few MB at most.
const (
	docCacheEntries = 8192
	docCacheBytes   = 4 << 20
)

func newDocCache(entries, bytes int) *docCache {
	return &docCache{m: make(map[int64]docText), maxN: entries, maxB: bytes}
}

// get returns an event's index text when cached.
func (c *docCache) get(id int64) (docText, bool) {
	c.mu.Lock()
	d, ok := c.m[id]
	c.mu.Unlock()
	return d, ok
}

// put remembers events' index texts (ids[i] has texts[i]).
func (c *docCache) put(ids []int64, texts []docText) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		d := texts[i]
		if _, ok := c.m[id]; ok || d.size() > c.maxB/16 { // a huge document does not flush the others
			continue
		}
		for len(c.m) > 0 && (len(c.m) >= c.maxN || c.bytes+d.size() > c.maxB) {
			old := c.order[c.head]
			c.head++
			c.bytes -= c.m[old].size()
			delete(c.m, old)
		}
		if c.head > len(c.order)/2 {
			c.order = append(c.order[:0], c.order[c.head:]...)
			c.head = 0
		}
		c.m[id] = d
		c.order = append(c.order, id)
		c.bytes += d.size()
	}
}

// reset forgets everything.
func (c *docCache) reset() {
	c.mu.Lock()
	c.m = make(map[int64]docText)
	c.order, c.head, c.bytes = nil, 0, 0
	c.mu.Unlock()
}

// docTexts returns the index texts of events ids (every one has its events_fts row), from the
// cache and, for those it lacks, from the full-text table's content in one query.
func (s *Store) docTexts(ctx context.Context, q querier, ids []int64) ([]docText, error) {
	out := make([]docText, len(ids))
	var missing []int64
	pos := map[int64]int{}
	for i, id := range ids {
		if d, ok := s.docs.get(id); ok {
			out[i] = d
		} else {
			missing = append(missing, id)
			pos[id] = i
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	// events_fts_content is the FTS5 table's own row store (id, c0 = tokens, c1 = expansion):
	// read by primary key it costs a tenth of reading the same columns through events_fts.
	rows, err := q.QueryContext(ctx, `SELECT id, coalesce(c0, ''), coalesce(c1, '') FROM events_fts_content WHERE id IN (SELECT value FROM json_each(?))`, idList(missing))
	if err != nil {
		return nil, fmt.Errorf("index text: %w", err)
	}
	defer rows.Close()
	got := make([]int64, 0, len(missing))
	texts := make([]docText, 0, len(missing))
	for rows.Next() {
		var id int64
		var d docText
		if err := rows.Scan(&id, &d.tokens, &d.expansion); err != nil {
			return nil, fmt.Errorf("index text: %w", err)
		}
		out[pos[id]] = d
		got, texts = append(got, id), append(texts, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index text: %w", err)
	}
	s.docs.put(got, texts)
	return out, nil
}

// parseIDs parses group_concat's comma-separated rowids.
func parseIDs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	ids := make([]int64, 0, strings.Count(s, ",")+1)
	for f := range strings.SplitSeq(s, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("rowid %q: %w", f, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
