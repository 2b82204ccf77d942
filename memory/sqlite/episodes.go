package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// Episodes (migration 0008; [memory.EpisodeContinues]). The write side keeps each session's
// episodes as its events are stored; an episode's text goes into episodes_fts once it is closed,
// so each event's tokens are written there once. Until then the episode is pending and searched
// from its events (pendingEpisodes bounds how many).

// episodeRow is an episode as stored.
type episodeRow struct {
	id              int64
	session         string
	scope           memory.Scope
	firstID, lastID int64
	lastTime        int64
	events          int
	indexed         bool
	dirty, closed   bool // in a batch: to write back; no event will join it any more
}

// last is the episode's last event as far as [memory.EpisodeContinues] looks at it.
func (r *episodeRow) last() memory.Event {
	return memory.Event{Session: r.session, Scope: r.scope, Time: fromNanos(r.lastTime)}
}

// episodeChanges is what a transaction did to episodes_fts, for the caches after its commit:
// the texts of the episodes it indexed, and whether an indexed one left it.
type episodeChanges struct {
	indexed []string
	removed bool
}

// committed brings the episode caches up to date after the transaction's commit.
func (ch *episodeChanges) committed(c *dfCache) {
	if ch.removed {
		c.reset()
		return
	}
	if len(ch.indexed) > 0 {
		docs := make([][]string, len(ch.indexed))
		for i, t := range ch.indexed {
			docs[i] = []string{t}
		}
		c.appended(docs...)
	}
}

// episodeBatch assigns a batch's events (in id order) to episodes in tx.
type episodeBatch struct {
	ch   *episodeChanges
	tx   *sql.Tx
	open map[string]*episodeRow // session → its last episode
	done []*episodeRow          // episodes of this batch, in order
}

// appendEpisodes keeps the episodes of a batch of events just inserted (ids set): it assigns
// them, then indexes the pending episodes of any session that have been quiet for an episode
// gap before the batch's newest event.
func appendEpisodes(ctx context.Context, tx *sql.Tx, evs []memory.Event, ch *episodeChanges) error {
	if err := assignEpisodes(ctx, tx, evs, ch); err != nil {
		return err
	}
	var newest int64
	for _, e := range evs {
		newest = max(newest, toNanos(e.Time))
	}
	return indexQuiet(ctx, tx, newest-int64(memory.EpisodeGap), 16, ch)
}

// assignEpisodes puts events (in id order, ids set) into their sessions' episodes and closes
// and indexes the episodes they end.
func assignEpisodes(ctx context.Context, tx *sql.Tx, evs []memory.Event, ch *episodeChanges) error {
	b := &episodeBatch{ch: ch, tx: tx, open: map[string]*episodeRow{}}
	for _, e := range evs {
		cur, ok := b.open[e.Session]
		if !ok {
			var err error
			if cur, err = lastEpisode(ctx, tx, e.Session); err != nil {
				return err
			}
			if cur != nil {
				b.done = append(b.done, cur)
			}
			b.open[e.Session] = cur
		}
		if cur != nil && memory.EpisodeContinues(cur.last(), cur.events, e) {
			cur.lastID, cur.lastTime, cur.events, cur.dirty = e.ID, toNanos(e.Time), cur.events+1, true
		} else {
			if cur != nil {
				cur.closed = true
			}
			cur = &episodeRow{session: e.Session, scope: e.Scope, firstID: e.ID, lastID: e.ID, lastTime: toNanos(e.Time), events: 1, dirty: true}
			b.done = append(b.done, cur)
			b.open[e.Session] = cur
		}
	}
	for _, r := range b.done {
		if err := b.write(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// lastEpisode reads a session's last episode (nil when it has none).
func lastEpisode(ctx context.Context, tx *sql.Tx, session string) (*episodeRow, error) {
	r := &episodeRow{session: session}
	var kind int
	err := tx.QueryRowContext(ctx, `SELECT id, scope_kind, scope_group, first_id, last_id, last_time, events, indexed
		FROM episodes WHERE session = ? ORDER BY last_id DESC LIMIT 1`, session).
		Scan(&r.id, &kind, &r.scope.Group, &r.firstID, &r.lastID, &r.lastTime, &r.events, &r.indexed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("episodes: session %q: %w", session, err)
	}
	r.scope.Kind = memory.ScopeKind(kind)
	return r, nil
}

// write stores a changed episode: a grown one leaves episodes_fts until it is closed again; a
// closed one is indexed.
func (b *episodeBatch) write(ctx context.Context, r *episodeRow) error {
	if r.dirty {
		if r.indexed {
			if _, err := b.tx.ExecContext(ctx, `DELETE FROM episodes_fts WHERE rowid = ?`, r.id); err != nil {
				return fmt.Errorf("episodes: %w", err)
			}
			r.indexed, b.ch.removed = false, true
		}
		if r.id == 0 {
			res, err := b.tx.ExecContext(ctx, `INSERT INTO episodes (session, scope_kind, scope_group, first_id, last_id, last_time, events)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, r.session, int(r.scope.Kind), r.scope.Group, r.firstID, r.lastID, r.lastTime, r.events)
			if err != nil {
				return fmt.Errorf("episodes: %w", err)
			}
			if r.id, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("episodes: %w", err)
			}
		} else if _, err := b.tx.ExecContext(ctx, `UPDATE episodes SET last_id = ?, last_time = ?, events = ?, indexed = 0 WHERE id = ?`,
			r.lastID, r.lastTime, r.events, r.id); err != nil {
			return fmt.Errorf("episodes: %w", err)
		}
	}
	if r.closed && !r.indexed {
		return indexEpisode(ctx, b.tx, r.id, b.ch)
	}
	return nil
}

// indexEpisode writes an episode's text (its remaining events' tokens) into episodes_fts, or
// deletes the episode if none of its events remains.
func indexEpisode(ctx context.Context, tx *sql.Tx, id int64, ch *episodeChanges) error {
	var session string
	var first, last int64
	if err := tx.QueryRowContext(ctx, `SELECT session, first_id, last_id FROM episodes WHERE id = ?`, id).Scan(&session, &first, &last); err != nil {
		return fmt.Errorf("episode %d: %w", id, err)
	}
	var n int
	var toks sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT count(*), group_concat(f.c0, ' ') FROM events e JOIN events_fts_content f ON f.id = e.id
		WHERE e.session = ? AND e.id BETWEEN ? AND ?`, session, first, last).Scan(&n, &toks); err != nil {
		return fmt.Errorf("episode %d: %w", id, err)
	}
	if n == 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM episodes WHERE id = ?`, id)
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM episodes_fts WHERE rowid = ?`, id); err != nil {
		return fmt.Errorf("episode %d: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO episodes_fts (rowid, tokens) VALUES (?, ?)`, id, toks.String); err != nil {
		return fmt.Errorf("episode %d: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE episodes SET indexed = 1, events = ? WHERE id = ?`, n, id); err != nil {
		return fmt.Errorf("episode %d: %w", id, err)
	}
	ch.indexed = append(ch.indexed, toks.String)
	return nil
}

// indexQuiet indexes up to limit pending episodes whose last event is before `before` (unix
// nanoseconds), oldest first (limit ≤ 0: all of them).
func indexQuiet(ctx context.Context, tx *sql.Tx, before int64, limit int, ch *episodeChanges) error {
	if limit <= 0 {
		limit = -1
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM episodes WHERE indexed = 0 AND last_time < ? ORDER BY last_time LIMIT ?`, before, limit)
	if err != nil {
		return fmt.Errorf("episodes: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("episodes: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("episodes: %w", err)
	}
	for _, id := range ids {
		if err := indexEpisode(ctx, tx, id, ch); err != nil {
			return err
		}
	}
	return nil
}

// rebuildEpisodes assigns every stored event to episodes anew and indexes them all (migration
// 0008 on an existing store, and a restore; the caller resets the episode caches).
func rebuildEpisodes(ctx context.Context, tx *sql.Tx) error {
	ch := &episodeChanges{}
	if _, err := tx.ExecContext(ctx, `DELETE FROM episodes_fts`); err != nil {
		return fmt.Errorf("rebuild episodes: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM episodes`); err != nil {
		return fmt.Errorf("rebuild episodes: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, session, time, scope_kind, scope_group FROM events ORDER BY session, id`)
	if err != nil {
		return fmt.Errorf("rebuild episodes: %w", err)
	}
	var evs []memory.Event
	for rows.Next() {
		var e memory.Event
		var t int64
		var kind int
		if err := rows.Scan(&e.ID, &e.Session, &t, &kind, &e.Scope.Group); err != nil {
			rows.Close()
			return fmt.Errorf("rebuild episodes: %w", err)
		}
		e.Time, e.Scope.Kind = fromNanos(t), memory.ScopeKind(kind)
		evs = append(evs, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rebuild episodes: %w", err)
	}
	// One session at a time keeps the batch's map small; the order within a session is id order.
	for from := 0; from < len(evs); {
		to := from + 1
		for to < len(evs) && evs[to].Session == evs[from].Session {
			to++
		}
		if err := assignEpisodes(ctx, tx, evs[from:to], ch); err != nil {
			return fmt.Errorf("rebuild episodes: %w", err)
		}
		from = to
	}
	return indexQuiet(ctx, tx, 1<<62, 0, ch)
}

// pendingEpisodes bounds the pending episodes a search reads from their events (the newest):
// in use they are the conversations of the last hour.
const pendingEpisodes = 64

// episodeDoc is an episode being scored.
type episodeDoc struct {
	hit    memory.EpisodeHit
	toks   string
	length float64
	tf     []float64
}

// SearchEpisodes implements [memory.Episodes]: BM25 (k1 1.2, b 0.75) over episodes as
// documents, each term weighted by how often the query gives it, document frequencies over
// episodes and lengths against the mean of the episodes scored. As in [Store.SearchTerms], the
// rarest terms select the indexed episodes scored (at most candidateRows); the pending ones are
// read from their events.
func (s *Store) SearchEpisodes(ctx context.Context, q memory.EpisodeQuery) ([]memory.EpisodeHit, error) {
	terms, qtf := q.Counts()
	if len(terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	filter, args := episodeFilter(q)
	docs, err := s.pendingEpisodeDocs(ctx, filter, args)
	if err != nil {
		return nil, fmt.Errorf("search episodes: %w", err)
	}
	df, total, err := s.episodeDocFreqs(ctx, terms)
	if err != nil {
		return nil, fmt.Errorf("search episodes: %w", err)
	}
	slot := newTermSlots(terms)
	for _, d := range docs {
		d.tf = make([]float64, len(terms))
		d.length = countTerms(d.toks, slot, d.tf, 1)
		for i, f := range d.tf {
			if f > 0 {
				df[i]++
			}
		}
	}
	total += len(docs)
	order := make([]int, 0, len(terms))
	for i := range terms {
		if df[i] > 0 {
			order = append(order, i)
		}
	}
	rowsCap := min(candidateRows, max(200, 8*limit))
	pick := rarest(terms, df, order, rowsCap)
	if len(pick) > 0 {
		sqlRows, err := s.r.QueryContext(ctx, `SELECT p.id, p.session, p.first_id, p.last_id, p.last_time, f.tokens
			FROM episodes_fts f JOIN episodes p ON p.id = f.rowid
			WHERE episodes_fts MATCH ? AND `+filter+` LIMIT ?`, append(append([]any{orPhrases(pick)}, args...), rowsCap)...)
		if err != nil {
			return nil, fmt.Errorf("search episodes: %w", err)
		}
		for sqlRows.Next() {
			d := &episodeDoc{tf: make([]float64, len(terms))}
			var toks sql.RawBytes
			var last int64
			if err := sqlRows.Scan(&d.hit.ID, &d.hit.Session, &d.hit.FirstID, &d.hit.LastID, &last, &toks); err != nil {
				sqlRows.Close()
				return nil, fmt.Errorf("search episodes: %w", err)
			}
			d.length = countTerms(toks, slot, d.tf, 1)
			d.hit.Last = fromNanos(last)
			docs = append(docs, d)
		}
		sqlRows.Close()
		if err := sqlRows.Err(); err != nil {
			return nil, fmt.Errorf("search episodes: %w", err)
		}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	return scoreEpisodes(docs, terms, qtf, df, total, limit), nil
}

// scoreEpisodes ranks scored documents by BM25 (k1 1.2, b 0.75) and returns the best limit.
func scoreEpisodes(docs []*episodeDoc, terms []string, qtf map[string]float64, df []int, total, limit int) []memory.EpisodeHit {
	idf := make([]float64, len(terms))
	for i, t := range terms {
		if df[i] > 0 {
			idf[i] = qtf[t] * memory.BM25IDF(float64(total), float64(df[i]))
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
		if d.hit.Score > 0 {
			out = append(out, d.hit)
		}
	}
	slices.SortFunc(out, func(a, b memory.EpisodeHit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return compareIDs(a.ID, b.ID)
	})
	return out[:min(limit, len(out))]
}

// episodeFilter is the SQL condition (on alias p.) for the episodes q may search.
func episodeFilter(q memory.EpisodeQuery) (string, []any) {
	where := []string{"1"}
	var args []any
	if cond, cargs := visibility(q.Viewer, "p."); cond != "" {
		where, args = append(where, cond), append(args, cargs...)
	}
	if q.Session != "" {
		where, args = append(where, "p.session = ?"), append(args, q.Session)
	}
	return strings.Join(where, " AND "), args
}

// pendingEpisodeDocs reads the newest pending episodes that pass filter with their events' tokens.
func (s *Store) pendingEpisodeDocs(ctx context.Context, filter string, args []any) ([]*episodeDoc, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT p.id, p.session, p.first_id, p.last_id, p.last_time,
		(SELECT group_concat(f.c0, ' ') FROM events e JOIN events_fts_content f ON f.id = e.id
			WHERE e.session = p.session AND e.id BETWEEN p.first_id AND p.last_id)
		FROM episodes p WHERE p.indexed = 0 AND `+filter+` ORDER BY p.last_time DESC LIMIT ?`, append(args, pendingEpisodes)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*episodeDoc
	for rows.Next() {
		d := &episodeDoc{}
		var toks sql.NullString
		var last int64
		if err := rows.Scan(&d.hit.ID, &d.hit.Session, &d.hit.FirstID, &d.hit.LastID, &last, &toks); err != nil {
			return nil, err
		}
		d.toks, d.hit.Last = toks.String, fromNanos(last)
		out = append(out, d)
	}
	return out, rows.Err()
}

// episodeDocFreqs counts the indexed episodes holding each (lower-case, single-token) term, and
// the indexed episodes, through the episode cache (s.epDFs) as [Store.DocFreq] does for events.
func (s *Store) episodeDocFreqs(ctx context.Context, terms []string) ([]int, int, error) {
	df := make([]int, len(terms))
	slot := make(map[string]int, len(terms))
	for i, t := range terms {
		slot[t] = i
	}
	total, haveTotal, gen := s.epDFs.docs()
	if !haveTotal {
		if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM episodes WHERE indexed = 1`).Scan(&total); err != nil {
			return nil, 0, err
		}
		s.epDFs.storeDocs(gen, total)
	}
	gen = s.epDFs.lookup(terms, func(k string, n int) { df[slot[k]] = n })
	var missing []string
	for _, t := range terms {
		if _, ok := s.epDFs.get(t); !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return df, total, nil
	}
	found, err := vocabDocs(ctx, s.r, "episodes_fts_vocab", missing)
	if err != nil {
		return nil, 0, err
	}
	for term, n := range found {
		if i, ok := slot[term]; ok {
			df[i] = n
		}
	}
	s.epDFs.store(gen, missing, found)
	return df, total, nil
}

// EpisodeEvents implements [memory.Episodes].
func (s *Store) EpisodeEvents(ctx context.Context, eps []memory.EpisodeHit, v memory.Viewer) ([]memory.TextHit, error) {
	if len(eps) == 0 {
		return nil, nil
	}
	where := make([]string, 0, len(eps))
	var args []any
	for _, h := range eps {
		where = append(where, "(e.session = ? AND e.id BETWEEN ? AND ?)")
		args = append(args, h.Session, h.FirstID, h.LastID)
	}
	filter := "(" + strings.Join(where, " OR ") + ")"
	if cond, cargs := visibility(v, "e."); cond != "" {
		filter, args = filter+" AND "+cond, append(args, cargs...)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+prefixCols("e.")+`, f.c0
		FROM events e LEFT JOIN events_fts_content f ON f.id = e.id WHERE `+filter+` ORDER BY e.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("episode events: %w", err)
	}
	hits, err := scanHits(rows, false, 16*len(eps))
	if err == nil {
		err = attachHitBlocks(ctx, s.r, hits)
	}
	if err != nil {
		return nil, fmt.Errorf("episode events: %w", err)
	}
	return hits, nil
}
