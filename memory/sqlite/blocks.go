package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// MaxBlockData is the largest Data a block may carry (64 MiB); AppendEvents refuses larger ones
// with [memory.ErrInvalid].
const MaxBlockData = 64 << 20

// maxBlockID bounds the length of a block id given by the caller.
const maxBlockID = 128

// checkNewBlock reports what AppendEvents refuses in a new block: an unknown kind, Data on a
// text block (its content is Text), Data above [MaxBlockData], and a given ID that is too long
// or holds spaces or control characters. The error wraps [memory.ErrInvalid]. The block's
// Scope, Holder, Size and Created are set by the store, whatever the caller put there.
func checkNewBlock(b memory.Block) error {
	switch b.Kind {
	case memory.BlockText:
		if len(b.Data) > 0 {
			return fmt.Errorf("text block carries %d bytes of data (a text block keeps its content in Text): %w",
				len(b.Data), memory.ErrInvalid)
		}
	case memory.BlockImage, memory.BlockAudio:
		if len(b.Data) > MaxBlockData {
			return fmt.Errorf("%s block data is %d bytes, more than the limit of %d (64 MiB): %w",
				b.Kind, len(b.Data), MaxBlockData, memory.ErrInvalid)
		}
	default:
		return fmt.Errorf("block kind %q is not text, image or audio: %w", string(b.Kind), memory.ErrInvalid)
	}
	if b.ID != "" {
		if len(b.ID) > maxBlockID || !utf8.ValidString(b.ID) ||
			strings.IndexFunc(b.ID, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			return fmt.Errorf("block id %q: want at most %d bytes of UTF-8 without spaces or control characters: %w",
				b.ID, maxBlockID, memory.ErrInvalid)
		}
	}
	return nil
}

// blockSize is the stored size of a block: its data length for media, its text length for text.
func blockSize(b memory.Block) int64 {
	if b.Kind == memory.BlockText {
		return int64(len(b.Text))
	}
	return int64(len(b.Data))
}

// MaxIndexedBlockText is how much of a block's text the full-text index reads (its start, cut
// on a rune boundary): a stored 10 MiB tool result took 210 MB to tokenise and index whole,
// while what an event is found by is said at the start. The block itself is kept whole.
const MaxIndexedBlockText = 256 << 10

// blockTokens appends the index tokens of the blocks' texts to an event's space-joined tokens,
// so that an event is found by what its attachments say (a text block's content, an image's
// OCR text), up to [MaxIndexedBlockText] of each.
func (s *Store) blockTokens(toks string, blocks []memory.Block) (string, error) {
	var b strings.Builder
	b.WriteString(toks)
	for i, bl := range blocks {
		text := bl.Text
		if len(text) > MaxIndexedBlockText {
			n := MaxIndexedBlockText
			for n > 0 && !utf8.RuneStart(text[n]) {
				n--
			}
			text = text[:n]
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		t, err := memory.IndexTokens(s.tok, memory.Event{Content: text})
		if err != nil {
			return "", fmt.Errorf("block %d: %w", i, err)
		}
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String(), nil
}

// blockInserter stores the new blocks of events inside AppendEvents' transaction.
type blockInserter struct {
	block, ref *sql.Stmt
}

func prepareBlockInserter(ctx context.Context, tx *sql.Tx) (*blockInserter, error) {
	block, err := tx.PrepareContext(ctx, `INSERT INTO blocks (id, kind, name, mime, text, data, size, scope_kind,
		scope_group, holder_layer, holder_event, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, fmt.Errorf("prepare block insert: %w", err)
	}
	ref, err := tx.PrepareContext(ctx, `INSERT INTO event_blocks (event, block, pos) VALUES (?, ?, ?)`)
	if err != nil {
		block.Close()
		return nil, fmt.Errorf("prepare block reference insert: %w", err)
	}
	return &blockInserter{block: block, ref: ref}, nil
}

func (bi *blockInserter) close() {
	bi.block.Close()
	bi.ref.Close()
}

// insert stores blocks as new blocks held by the stored event e, with its references in order,
// and returns them as read back (ids assigned, Data nil).
func (bi *blockInserter) insert(ctx context.Context, e memory.Event, blocks []memory.Block) ([]memory.Block, error) {
	out := make([]memory.Block, len(blocks))
	for pos, b := range blocks {
		if b.ID == "" {
			b.ID = newBlockID()
		}
		b.Scope = e.Scope
		b.Holder = memory.BlockHolder{Layer: e.Layer, Event: e.ID}
		b.Created = e.Time
		b.Size = blockSize(b)
		var data []byte
		if len(b.Data) > 0 {
			data = b.Data
		}
		if _, err := bi.block.ExecContext(ctx, b.ID, string(b.Kind), b.Name, b.MIME, b.Text, data, b.Size,
			int(b.Scope.Kind), b.Scope.Group, int(b.Holder.Layer), b.Holder.Event, toNanos(b.Created)); err != nil {
			var se sqlite3.Error
			if errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey || se.ExtendedCode == sqlite3.ErrConstraintUnique) {
				return nil, fmt.Errorf("block %d: id %q: %w", pos, b.ID, memory.ErrExists)
			}
			return nil, fmt.Errorf("block %d: %w", pos, err)
		}
		if _, err := bi.ref.ExecContext(ctx, e.ID, b.ID, pos); err != nil {
			return nil, fmt.Errorf("block %d: reference: %w", pos, err)
		}
		b.Data = nil
		out[pos] = b
	}
	return out, nil
}

// blockCols are the columns of a block (without its data) for scanBlockRow; b is the blocks table.
const blockCols = `b.id, b.kind, b.name, b.mime, b.text, b.size, b.scope_kind, b.scope_group, b.holder_layer,
	coalesce(b.holder_event, 0), coalesce(b.holder_entity, 0), b.created`

// ListedBlockText is how much of a text block's Text (in characters) an event brings when it
// is listed (History, searches, windows): a 10 MiB tool result stored as a block was read whole
// with every turn's history, ~100 MB of copies a turn. [Store.Block] and [Store.Blocks] give the
// text whole; Size is always the whole size.
const ListedBlockText = 64 << 10

// listedBlockCols are blockCols with a text block's text cut at ListedBlockText characters.
var listedBlockCols = strings.Replace(blockCols, "b.text", fmt.Sprintf("substr(b.text, 1, %d)", ListedBlockText), 1)

// scanBlockRow scans blockCols, then extra.
func scanBlockRow(sc scanner, extra ...any) (memory.Block, error) {
	var b memory.Block
	var kind string
	var scope, layer int
	var created int64
	dest := append([]any{&b.ID, &kind, &b.Name, &b.MIME, &b.Text, &b.Size, &scope, &b.Scope.Group, &layer,
		&b.Holder.Event, &b.Holder.Entity, &created}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return memory.Block{}, err
	}
	b.Kind, b.Scope.Kind, b.Holder.Layer, b.Created = memory.BlockKind(kind), memory.ScopeKind(scope), memory.Layer(layer), fromNanos(created)
	return b, nil
}

// eventBlocks reads the block references of events (without data, text blocks' text up to
// ListedBlockText, with each block's current holder), by event id in position order. One query; nil when no event has blocks.
//
// The ids are joined with json_each rather than tested with IN (SELECT … json_each): IN builds
// a temporary index of the list first, which made this query cost twice as much (≈ 54 against
// 24 µs for 200 events without blocks, a search's result set).
func eventBlocks(ctx context.Context, q querier, ids []int64) (map[int64][]memory.Block, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids))) // each event once, probed in key order
	rows, err := q.QueryContext(ctx, `SELECT eb.event, `+listedBlockCols+`
		FROM json_each(?) j JOIN event_blocks eb ON eb.event = j.value JOIN blocks b ON b.id = eb.block
		ORDER BY eb.event, eb.pos`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("event blocks: %w", err)
	}
	defer rows.Close()
	var out map[int64][]memory.Block
	for rows.Next() {
		var ev int64
		b, err := scanBlockRow(prependScanner{rows, &ev})
		if err != nil {
			return nil, fmt.Errorf("event blocks: %w", err)
		}
		if out == nil {
			out = make(map[int64][]memory.Block)
		}
		out[ev] = append(out[ev], b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("event blocks: %w", err)
	}
	return out, nil
}

// prependScanner scans first into dest[0] of its own, then the caller's destinations.
type prependScanner struct {
	rows  *sql.Rows
	first any
}

func (p prependScanner) Scan(dest ...any) error {
	return p.rows.Scan(append([]any{p.first}, dest...)...)
}

// attachBlocks fills the Blocks of events read through q (one query for all of them).
func attachBlocks(ctx context.Context, q querier, evs []memory.Event) error {
	if len(evs) == 0 {
		return nil
	}
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	byEvent, err := eventBlocks(ctx, q, ids)
	if err != nil {
		return err
	}
	for i := range evs {
		if bs := byEvent[evs[i].ID]; len(bs) > 0 {
			evs[i].Blocks = append([]memory.Block(nil), bs...)
		}
	}
	return nil
}

// attachHitBlocks is attachBlocks for search hits.
func attachHitBlocks(ctx context.Context, q querier, hits []memory.TextHit) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Event.ID
	}
	byEvent, err := eventBlocks(ctx, q, ids)
	if err != nil {
		return err
	}
	for i := range hits {
		if bs := byEvent[hits[i].Event.ID]; len(bs) > 0 {
			hits[i].Event.Blocks = append([]memory.Block(nil), bs...)
		}
	}
	return nil
}

// Block implements [memory.BlockStore]: the block with its data; [memory.ErrNotFound] when
// unknown.
func (s *Store) Block(ctx context.Context, id string) (memory.Block, error) {
	var data []byte
	b, err := scanBlockRow(s.r.QueryRowContext(ctx, `SELECT `+blockCols+`, b.data FROM blocks b WHERE b.id = ?`, id), &data)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Block{}, fmt.Errorf("block %q: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return memory.Block{}, fmt.Errorf("block %q: %w", id, err)
	}
	if len(data) > 0 {
		b.Data = data
	}
	return b, nil
}

// Blocks implements [memory.BlockStore]: the blocks held by an event (h.Layer L1 or L2 with
// h.Event set; whichever of the two the event is in) in the order the event brought them, or by
// an entity (h.Layer L3 with h.Entity set) oldest first, without data. A malformed holder is
// [memory.ErrInvalid]; an unknown event or entity is [memory.ErrNotFound].
func (s *Store) Blocks(ctx context.Context, h memory.BlockHolder) ([]memory.Block, error) {
	var query, exists string
	var id int64
	switch {
	case h.Layer.Valid() && h.Event > 0 && h.Entity == 0:
		id = h.Event
		query = `SELECT ` + blockCols + ` FROM blocks b LEFT JOIN event_blocks eb ON eb.event = b.holder_event AND eb.block = b.id
			WHERE b.holder_event = ? ORDER BY eb.pos IS NULL, eb.pos, b.created, b.id`
		exists = `SELECT 1 FROM events WHERE id = ?`
	case h.Layer == memory.LayerL3 && h.Entity > 0 && h.Event == 0:
		id = h.Entity
		query = `SELECT ` + blockCols + ` FROM blocks b WHERE b.holder_entity = ? ORDER BY b.created, b.id`
		exists = `SELECT 1 FROM entities WHERE id = ?`
	default:
		return nil, fmt.Errorf("blocks: holder %+v: want layer 1 or 2 with an event, or layer 3 with an entity: %w", h, memory.ErrInvalid)
	}
	rows, err := s.r.QueryContext(ctx, query, id)
	if err != nil {
		return nil, fmt.Errorf("blocks of %+v: %w", h, err)
	}
	defer rows.Close()
	var out []memory.Block
	for rows.Next() {
		b, err := scanBlockRow(rows)
		if err != nil {
			return nil, fmt.Errorf("blocks of %+v: %w", h, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("blocks of %+v: %w", h, err)
	}
	if len(out) == 0 {
		var one int
		err := s.r.QueryRowContext(ctx, exists, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			if h.Layer == memory.LayerL3 {
				return nil, fmt.Errorf("blocks: entity %d: %w", id, memory.ErrNotFound)
			}
			return nil, fmt.Errorf("blocks: event %d: %w", id, memory.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("blocks of %+v: %w", h, err)
		}
	}
	return out, nil
}

// noteNameRunes bounds the name PinBlock gives a new note taken from a block's text.
const noteNameRunes = 80

// noteName is the name of the note entity PinBlock creates for a block: its Name, else the first
// non-blank line of its Text cut to 80 runes, else "note " and the first 8 characters of its id.
func noteName(name, text, id string) string {
	if n := strings.Join(strings.Fields(name), " "); n != "" {
		return n
	}
	for line := range strings.Lines(text) {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > noteNameRunes {
			line = strings.TrimSpace(string([]rune(line)[:noteNameRunes]))
		}
		return line
	}
	short := id
	if utf8.RuneCountInString(short) > 8 {
		short = string([]rune(short)[:8])
	}
	return "note " + short
}

// noteNameKey is the key entities are found by: the name lower-cased, trimmed, with white space
// collapsed to single spaces.
func noteNameKey(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), " "))
}

// PinBlock implements [memory.BlockStore]: in one transaction it moves the block to L3, held
// by entity, which must exist, or (entity 0) by the note entity named after the block (see
// noteName; found by name when it exists, else created with origin "owner" and the block's
// scope), and makes it the entity's text block when the entity has none and the block is text.
// Events keep their references to the block. Pinning a block to the entity already holding it
// changes nothing. An unknown block or entity is [memory.ErrNotFound].
func (s *Store) PinBlock(ctx context.Context, id string, entity int64) (memory.Entity, error) {
	if entity < 0 {
		return memory.Entity{}, fmt.Errorf("pin block %q: entity id %d: %w", id, entity, memory.ErrInvalid)
	}
	now := toNanos(s.now())
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: begin: %w", id, err)
	}
	defer tx.Rollback()

	var kind, name, text, group string
	var scope, layer int
	var holder sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT kind, name, text, scope_kind, scope_group, holder_layer, holder_entity
		FROM blocks WHERE id = ?`, id).Scan(&kind, &name, &text, &scope, &group, &layer, &holder)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, err)
	}

	target := entity
	if target == 0 {
		nm := noteName(name, text, id)
		err := tx.QueryRowContext(ctx, `SELECT id FROM entities WHERE name_key = ? AND kind = 'note'`, noteNameKey(nm)).Scan(&target)
		if errors.Is(err, sql.ErrNoRows) {
			err = tx.QueryRowContext(ctx, `INSERT INTO entities (name, name_key, kind, scope_kind, scope_group, origin, created, updated)
				VALUES (?, ?, 'note', ?, ?, 'owner', ?, ?) RETURNING id`, nm, noteNameKey(nm), scope, group, now, now).Scan(&target)
		}
		if err != nil {
			return memory.Entity{}, fmt.Errorf("pin block %q: note entity %q: %w", id, nm, err)
		}
	} else {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM entities WHERE id = ?`, target).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return memory.Entity{}, fmt.Errorf("pin block %q: entity %d: %w", id, target, memory.ErrNotFound)
		}
		if err != nil {
			return memory.Entity{}, fmt.Errorf("pin block %q: entity %d: %w", id, target, err)
		}
	}

	if layer != int(memory.LayerL3) || holder.Int64 != target {
		if _, err := tx.ExecContext(ctx, `UPDATE blocks SET holder_layer = 3, holder_event = NULL, holder_entity = ? WHERE id = ?`,
			target, id); err != nil {
			return memory.Entity{}, fmt.Errorf("pin block %q: move: %w", id, err)
		}
		if holder.Valid { // an entity's text block leaves it
			if _, err := tx.ExecContext(ctx, `UPDATE entities SET block_id = NULL, updated = ? WHERE id = ? AND block_id = ?`,
				now, holder.Int64, id); err != nil {
				return memory.Entity{}, fmt.Errorf("pin block %q: entity %d: %w", id, holder.Int64, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE entities SET updated = ?,
			block_id = CASE WHEN block_id IS NULL AND ? = 'text' THEN ? ELSE block_id END WHERE id = ?`,
			now, kind, id, target); err != nil {
			return memory.Entity{}, fmt.Errorf("pin block %q: entity %d: %w", id, target, err)
		}
	}

	var sessions []string
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT e.session FROM event_blocks eb JOIN events e ON e.id = eb.event
		WHERE eb.block = ?`, id)
	if err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, err)
	}
	for rows.Next() {
		var sess string
		if err := rows.Scan(&sess); err != nil {
			rows.Close()
			return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, err)
		}
		sessions = append(sessions, sess)
	}
	if err := rows.Close(); err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, err)
	}
	if err := rows.Err(); err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, err)
	}

	ent, err := pinnedEntity(ctx, tx, target)
	if err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return memory.Entity{}, fmt.Errorf("pin block %q: commit: %w", id, err)
	}
	s.invalidateSessions(sessions...)
	s.ckpt.committed()
	return ent, nil
}

// pinnedEntity reads the entity PinBlock returns, with the text of its text block and its
// mentions (the source events of its current triples).
func pinnedEntity(ctx context.Context, q querier, id int64) (memory.Entity, error) {
	var e memory.Entity
	var scope int
	var pinned bool
	var created, updated, recalled int64
	err := q.QueryRowContext(ctx, `SELECT e.id, e.name, e.kind, coalesce(e.block_id, ''), coalesce(b.text, ''),
		e.scope_kind, e.scope_group, e.pinned, e.origin, e.created, e.updated, e.last_recalled,
		(SELECT count(DISTINCT ts.event) FROM triples t JOIN triple_sources ts ON ts.triple = t.id
			WHERE (t.subject = e.id OR t.object = e.id) AND t.superseded_by IS NULL AND t.valid_to = 0)
		FROM entities e LEFT JOIN blocks b ON b.id = e.block_id WHERE e.id = ?`, id).Scan(
		&e.ID, &e.Name, &e.Kind, &e.BlockID, &e.Text, &scope, &e.Scope.Group, &pinned, &e.Origin,
		&created, &updated, &recalled, &e.Mentions)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Entity{}, fmt.Errorf("entity %d: %w", id, memory.ErrNotFound)
	}
	if err != nil {
		return memory.Entity{}, fmt.Errorf("entity %d: %w", id, err)
	}
	e.Scope.Kind, e.Pinned, e.Created, e.Updated = memory.ScopeKind(scope), pinned, fromNanos(created), fromNanos(updated)
	if recalled != 0 {
		e.LastRecalled = fromNanos(recalled)
	}
	return e, nil
}

var _ memory.BlockStore = (*Store)(nil)
