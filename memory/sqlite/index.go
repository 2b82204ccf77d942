package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hologramagent/hologram/memory"
)

// visibility is the SQL condition (with its arguments) that keeps the events v can see; "" when
// v sees everything. It mirrors [memory.Viewer.CanSee].
func visibility(v memory.Viewer, alias string) (string, []any) {
	switch {
	case v.Owner:
		return "", nil
	case v.Group != "":
		return fmt.Sprintf("(%[1]sscope_kind = %[2]d OR (%[1]sscope_kind = %[3]d AND %[1]sscope_group = ?))",
			alias, int(memory.ScopePublic), int(memory.ScopeGroup)), []any{v.Group}
	}
	return fmt.Sprintf("%sscope_kind = %d", alias, int(memory.ScopePublic)), nil
}

// hitScanner scans eventCols followed by the indexed tokens and, optionally, the bm25 score.
type hitScanner struct {
	rows  *sql.Rows
	extra []any
}

func (h hitScanner) Scan(dest ...any) error { return h.rows.Scan(append(dest, h.extra...)...) }

// scanHits reads rows of eventCols, tokens and (withScore) bm25, and closes rows; want is how
// many rows are expected (the slice's first capacity). The queries read the tokens from
// events_fts_content (c0), the FTS5 table's own row store, by primary key: through events_fts
// FTS5 reads a row's columns with a statement of its own, ten times slower (doctext.go).
func scanHits(rows *sql.Rows, withScore bool, want int) ([]memory.TextHit, error) {
	defer rows.Close()
	out := make([]memory.TextHit, 0, want)
	for rows.Next() {
		var h memory.TextHit
		var toks sql.NullString
		var bm25 float64
		extra := []any{&toks}
		if withScore {
			extra = append(extra, &bm25)
		}
		e, err := scanEvent(hitScanner{rows, extra})
		if err != nil {
			return nil, err
		}
		h.Event, h.Indexed, h.Score = e, toks.String, -bm25
		out = append(out, h)
	}
	return out, rows.Err()
}

// DocFreq implements [memory.Index]. Document counts come from the fts5vocab table
// events_fts_vocab (terms are folded to lower case, as the index folds them); a term the index
// would split into several tokens is counted with a phrase query instead. total counts every
// event (each one has a row in the index, possibly without tokens), from the store's running
// totals as SearchTerms counts them: `count(*)` walks a whole index of the events table, which
// recall's coherence step paid on every turn (≈ 2 ms at 100,000 events).
func (s *Store) DocFreq(ctx context.Context, terms []string) ([]int, int, error) {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("doc freq: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil) // one snapshot for every count
	if err != nil {
		return nil, 0, fmt.Errorf("doc freq: %w", err)
	}
	defer tx.Rollback()
	df, err := s.termDocFreqs(ctx, tx, terms)
	if err != nil {
		return nil, 0, fmt.Errorf("doc freq: %w", err)
	}
	return df, s.stats.count(), nil
}

// querier is what termDocFreqs reads through: the reader pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// termDocFreqs counts the indexed events holding each term, as [Store.DocFreq] does: the
// single-token terms in one fts5vocab query, the others with a phrase query each.
func (s *Store) termDocFreqs(ctx context.Context, q querier, terms []string) ([]int, error) {
	df := make([]int, len(terms))
	slots := make(map[string][]int) // lower-cased single-token term → positions in terms
	var keys []string
	for i, term := range terms {
		switch {
		case strings.TrimSpace(term) == "":
		case singleToken(term):
			k := strings.ToLower(term)
			if slots[k] == nil {
				keys = append(keys, k)
			}
			slots[k] = append(slots[k], i)
		default:
			if err := q.QueryRowContext(ctx, `SELECT count(*) FROM events_fts WHERE events_fts MATCH ?`,
				ftsPhrases([]string{strings.Join(strings.Fields(term), " ")}, " ")).Scan(&df[i]); err != nil {
				return nil, fmt.Errorf("doc freq of %q: %w", term, err)
			}
		}
	}
	// Counts the cache knows need no query: fts5vocab walks a term's whole document list, so a
	// common term costs more the larger the store.
	gen := s.dfs.lookup(keys, func(k string, n int) {
		for _, i := range slots[k] {
			df[i] = n
		}
	})
	missing := keys[:0:0]
	for _, k := range keys {
		if _, ok := s.dfs.get(k); !ok {
			missing = append(missing, k)
		}
	}
	keys = missing
	if len(keys) == 0 {
		return df, nil
	}
	found, err := vocabDocs(ctx, q, "events_fts_vocab", keys)
	if err != nil {
		return nil, fmt.Errorf("doc freq: %w", err)
	}
	for term, n := range found {
		for _, i := range slots[term] {
			df[i] = n
		}
	}
	s.dfs.store(gen, keys, found)
	return df, nil
}

// vocabDocs reads the document counts of terms from an fts5vocab row table (a term it lacks is
// in no document). One equality lookup per term: fts5vocab seeks a term it is given with "=",
// but answers "term IN (…)" by scanning the whole vocabulary, which grows with the store
// (≈ 2 ms for 20,000 terms against 75 µs a lookup).
func vocabDocs(ctx context.Context, q querier, table string, terms []string) (map[string]int, error) {
	found := make(map[string]int, len(terms))
	for _, t := range terms {
		var n int
		err := q.QueryRowContext(ctx, `SELECT doc FROM `+table+` WHERE term = ?`, t).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found[t] = n
	}
	return found, nil
}

// dfCache remembers document frequencies of index terms. Appends keep cached counts exact (they
// add each new event's distinct terms); a count read from the index is kept only if no append
// happened while it was read (gen). Bounded: cleared past dfCacheMax terms.
type dfCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]int
	// total counts the documents, when known (haveTotal): appends add theirs.
	total     int
	haveTotal bool
}

// docs returns the cached document count, if known, and the generation to store a count
// read from the index under.
func (c *dfCache) docs() (int, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.haveTotal, c.gen
}

// storeDocs caches a document count read at generation gen.
func (c *dfCache) storeDocs(gen uint64, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.total, c.haveTotal = n, true
	}
}

const dfCacheMax = 200_000

// lookup reports the cached counts of keys through found and returns the generation to store
// new counts under.
func (c *dfCache) lookup(keys []string, found func(string, int)) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if n, ok := c.m[k]; ok {
			found(k, n)
		}
	}
	return c.gen
}

func (c *dfCache) get(k string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[k]
	return n, ok
}

// store caches counts read at generation gen (terms absent from the index have count 0).
func (c *dfCache) store(gen uint64, keys []string, found map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return // an append happened while the counts were read
	}
	if c.m == nil || len(c.m) > dfCacheMax {
		c.m = make(map[string]int)
	}
	for _, k := range keys {
		c.m[k] = found[k]
	}
}

// reset forgets every cached count (after events left the index).
func (c *dfCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
	c.haveTotal = false
}

// appended counts the distinct terms of newly committed events (space-joined token strings).
func (c *dfCache) appended(texts ...[]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.total += len(texts)
	if len(c.m) == 0 {
		return
	}
	for _, doc := range texts {
		seen := map[string]bool{}
		for _, text := range doc {
			for _, t := range strings.Fields(text) {
				t = strings.ToLower(t)
				if !seen[t] {
					seen[t] = true
					if n, ok := c.m[t]; ok {
						c.m[t] = n + 1
					}
				}
			}
		}
	}
}

// singleToken reports whether the index tokenizer keeps term as one token: every rune is a
// letter, a digit, a private-use character or printable ASCII punctuation.
func singleToken(term string) bool {
	for _, r := range term {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.Is(unicode.Co, r):
		case r > ' ' && r < 0x7f: // ASCII punctuation is a token character of events_fts
		default:
			return false
		}
	}
	return term != ""
}

// Neighbours implements [memory.Index]. Positions count every event of the anchor's session
// (visible to v or not); the neighbours v cannot see are then dropped. Unknown ids anchor
// nothing; radius <= 0 returns nothing.
func (s *Store) Neighbours(ctx context.Context, ids []int64, radius int, v memory.Viewer) ([]memory.Event, error) {
	if radius <= 0 || len(ids) == 0 {
		return nil, nil
	}
	// First each anchor's range: the events of its session from the radius-th earlier to the
	// radius-th later one (to the session's first or last when there are fewer). Anchors close
	// to each other share most of their ranges, so the ranges of a session are merged before the
	// events are read: each event is read once, however many anchors it is near.
	rows, err := s.r.QueryContext(ctx, `SELECT x.session,
			coalesce((SELECT id FROM events WHERE session = x.session AND id < x.id ORDER BY id DESC LIMIT 1 OFFSET ?), 0),
			coalesce((SELECT id FROM events WHERE session = x.session AND id > x.id ORDER BY id LIMIT 1 OFFSET ?), 9223372036854775807)
		FROM events x WHERE x.id IN (SELECT value FROM json_each(?))`,
		radius-1, radius-1, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	var spans []idSpan
	for rows.Next() {
		var sp idSpan
		if err := rows.Scan(&sp.Session, &sp.Lo, &sp.Hi); err != nil {
			rows.Close()
			return nil, fmt.Errorf("neighbours: %w", err)
		}
		spans = append(spans, sp)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	if len(spans) == 0 {
		return nil, nil
	}
	spanJSON, _ := json.Marshal(mergeSpans(spans)) // strings and int64s always marshal
	rows, err = s.r.QueryContext(ctx, `SELECT `+prefixCols("e.")+` FROM json_each(?) j
		JOIN events e ON e.session = j.value ->> 'Session' AND e.id BETWEEN j.value ->> 'Lo' AND j.value ->> 'Hi'`,
		string(spanJSON))
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	defer rows.Close()
	anchors := make(map[int64]bool, len(ids))
	for _, id := range ids {
		anchors[id] = true
	}
	found := make(map[int64]memory.Event)
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("neighbours: %w", err)
		}
		if !anchors[e.ID] && !e.OffBranch && v.CanSee(e.Scope) { // another branch is not context
			found[e.ID] = e
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	out := make([]memory.Event, 0, len(found))
	for _, e := range found {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b memory.Event) int { return compareIDs(a.ID, b.ID) })
	if err := attachBlocks(ctx, s.r, out); err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	return out, nil
}

// idSpan is a range of event ids within one session (both ends included).
type idSpan struct {
	Session string
	Lo, Hi  int64
}

// mergeSpans sorts spans by session and start and merges the ones that overlap or touch.
func mergeSpans(spans []idSpan) []idSpan {
	slices.SortFunc(spans, func(a, b idSpan) int {
		if c := strings.Compare(a.Session, b.Session); c != 0 {
			return c
		}
		return compareIDs(a.Lo, b.Lo)
	})
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.Session == last.Session && (last.Hi == math.MaxInt64 || sp.Lo <= last.Hi+1) {
			last.Hi = max(last.Hi, sp.Hi)
			continue
		}
		out = append(out, sp)
	}
	return out
}

func compareIDs(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// queryEventsOn runs a query that selects eventCols in tx.
func queryEventsOn(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]memory.Event, error) {
	return queryEventsWith(ctx, tx, query, args...)
}

// idList is the JSON array of ids that queries expand with json_each.
func idList(ids []int64) string {
	b, _ := json.Marshal(ids) // []int64 always marshals
	return string(b)
}

// Events implements [memory.Index]: the events with these ids and their indexed tokens, in id
// order; unknown ids are skipped. Score is zero.
func (s *Store) Events(ctx context.Context, ids []int64) ([]memory.TextHit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixCols("e.")+`, f.c0
		FROM events e LEFT JOIN events_fts_content f ON f.id = e.id
		WHERE e.id IN (SELECT value FROM json_each(?)) ORDER BY e.id`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("events by id: %w", err)
	}
	hits, err := scanHits(rows, false, len(ids))
	if err != nil {
		return nil, fmt.Errorf("events by id: %w", err)
	}
	if err := attachHitBlocks(ctx, s.r, hits); err != nil {
		return nil, fmt.Errorf("events by id: %w", err)
	}
	return hits, nil
}

// LayerEvents implements [memory.Layers]. An unknown session is [memory.ErrNotFound]; a layer
// other than L1 or L2 is [memory.ErrInvalid].
func (s *Store) LayerEvents(ctx context.Context, session string, l memory.Layer) ([]memory.Event, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("layer events: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
	}
	evs, err := s.queryEvents(ctx, `SELECT `+eventCols+` FROM events WHERE session = ? AND layer = ? AND off_branch = 0 ORDER BY id`, session, int(l))
	if err != nil {
		return nil, fmt.Errorf("layer events of session %q: %w", session, err)
	}
	if len(evs) == 0 {
		if err := s.sessionExists(ctx, session); err != nil {
			return nil, fmt.Errorf("layer events: %w", err)
		}
	}
	return evs, nil
}

// SetLayer implements [memory.Layers]. It is atomic: when an id is unknown nothing changes and
// the error wraps [memory.ErrNotFound]. The blocks the events hold move with them in the same
// transaction; blocks that went to L3 (held by an entity) stay there. Cached History tails are
// updated after the commit.
func (s *Store) SetLayer(ctx context.Context, ids []int64, l memory.Layer) error {
	if !l.Valid() {
		return fmt.Errorf("set layer: layer %d is not L1 or L2: %w", int(l), memory.ErrInvalid)
	}
	if err := s.updateEvents(ctx, ids, `UPDATE events SET layer = ?`, int(l), true); err != nil {
		return fmt.Errorf("set layer %d: %w", int(l), err)
	}
	return nil
}

// Touch implements [memory.Layers]: each distinct id gets one more access and a last access of
// at, unless it already has a later one. It is atomic: when an id is unknown nothing changes and
// the error wraps [memory.ErrNotFound].
func (s *Store) Touch(ctx context.Context, ids []int64, at time.Time) error {
	if err := s.updateEvents(ctx, ids, `UPDATE events SET accesses = accesses + 1, last_access = max(last_access, ?)`,
		toNanos(at), false); err != nil {
		return fmt.Errorf("touch: %w", err)
	}
	return nil
}

// updateEvents runs update (an UPDATE events SET … statement taking arg) on the events with
// these ids in one transaction, and then brings the tail cache up to date. With moveBlocks, the
// blocks held by those events follow them to the layer each event is in now, in the same
// transaction.
func (s *Store) updateEvents(ctx context.Context, ids []int64, update string, arg any, moveBlocks bool) error {
	if len(ids) == 0 {
		return nil
	}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, update+` WHERE id IN (SELECT value FROM json_each(?))
		RETURNING id, session, layer, accesses, last_access`, arg, idList(ids))
	if err != nil {
		return err
	}
	var changes []eventChange
	for rows.Next() {
		var ch eventChange
		var layer int
		if err := rows.Scan(&ch.id, &ch.session, &layer, &ch.accesses, &ch.lastAccess); err != nil {
			rows.Close()
			return err
		}
		ch.layer = memory.Layer(layer)
		changes = append(changes, ch)
		delete(want, ch.id)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(want) > 0 {
		missing := make([]int64, 0, len(want))
		for id := range want {
			missing = append(missing, id)
		}
		slices.Sort(missing)
		return fmt.Errorf("events %v: %w", missing, memory.ErrNotFound)
	}
	if moveBlocks {
		// Only blocks held by an event (L1/L2) have a holder_event: an L3 block never moves back.
		if _, err := tx.ExecContext(ctx, `UPDATE blocks SET holder_layer = (SELECT layer FROM events WHERE id = blocks.holder_event)
			WHERE holder_event IN (SELECT value FROM json_each(?))`, idList(ids)); err != nil {
			return fmt.Errorf("move blocks: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.tails.changed(changes)
	s.ckpt.committed()
	return nil
}

var (
	_ memory.Index  = (*Store)(nil)
	_ memory.Layers = (*Store)(nil)
)

// Partners lists the distinct non-empty partners of stored events (for recall's partner
// matching), sorted. It reads the partner index, not the events.
func (s *Store) Partners(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT partner FROM events WHERE partner != '' ORDER BY partner`)
	if err != nil {
		return nil, fmt.Errorf("partners: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("partners: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

var _ memory.Memory = (*Store)(nil)
