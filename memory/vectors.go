package memory

import (
	"context"
	"strings"
)

// EventVector is one event's dense vector in one space (see [VectorStore]). An empty Vec marks
// an event that has nothing to embed (no text): it counts as embedded and never matches.
type EventVector struct {
	Event int64
	Vec   []float32
}

// VectorEntry is a stored vector with what the dense side filters by before ranking: the
// event's session and scope (both fixed when the event is stored). Layers change, so callers
// check them on the events they rank.
type VectorEntry struct {
	Event   int64
	Session string
	Scope   Scope
	Vec     []float32
}

// VectorStore keeps the dense vectors of events, one per (event, space). A space is the
// fingerprint of the model and settings that produced the vectors (embed.Space.Fingerprint):
// vectors of two spaces are never compared, so a model change re-embeds every event into the
// new space instead of mixing them. Vectors are derived data: forgetting an event deletes its
// vectors with it, backups leave them out, and a restored store is re-embedded.
// Implementations are safe for concurrent use.
type VectorStore interface {
	// PutVectors stores vecs in space, replacing an event's earlier vector in that space, in
	// one transaction. Events that no longer exist (forgotten meanwhile) are skipped; the number
	// stored is returned. Every non-empty vector of one call has the same length, and no
	// element is NaN or infinite (an error that wraps [ErrInvalid] otherwise).
	PutVectors(ctx context.Context, space string, vecs []EventVector) (int, error)
	// ScanVectors calls fn with every non-empty vector of space, in event id order; an error
	// from fn stops the scan and is returned. fn may keep the entry's Vec.
	ScanVectors(ctx context.Context, space string, fn func(VectorEntry) error) error
	// Unembedded returns up to limit events with an id above after that have no vector in
	// space, in id order (limit ≤ 0: 100).
	Unembedded(ctx context.Context, space string, after int64, limit int) ([]Event, error)
	// VectorCounts returns how many events have a vector in space, and how many events there
	// are.
	VectorCounts(ctx context.Context, space string) (have, total int, err error)
	// DeleteVectorsExcept deletes the vectors of every space but keep ("" deletes them all)
	// and returns how many were deleted.
	DeleteVectorsExcept(ctx context.Context, keep string) (int, error)
	// VectorSpaces returns the number of vectors of each space that has any.
	VectorSpaces(ctx context.Context) (map[string]int, error)
}

// EmbeddingText is what of an event a dense model embeds: its [IndexedText] followed by the
// text of the blocks it brought (text attachments, the OCR text of images), separated by
// newlines. Blocks read back without Text (listings) add nothing.
func EmbeddingText(e Event) string {
	var b strings.Builder
	b.WriteString(IndexedText(e))
	for _, bl := range e.Blocks {
		if t := strings.TrimSpace(bl.Text); t != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
	}
	return strings.TrimSpace(b.String())
}

// BlockVector is one image block's dense vector in one space (see [BlockVectorStore]). An empty
// Vec marks a block that could not be embedded (an undecodable image): it counts as embedded
// and never matches.
type BlockVector struct {
	Block string
	Vec   []float32
}

// BlockVectorEntry is a stored block vector with what recall needs to use it: the event that
// brought the block (its holder while it is in L1 or L2; the event that references it once it
// has moved to L3), that event's session, and the block's scope.
type BlockVectorEntry struct {
	Block   string
	Event   int64
	Session string
	Scope   Scope
	Vec     []float32
}

// BlockVectorStore keeps the dense vectors of image blocks, one per (block, space), in the
// spaces of models that embed images as well as text (CLIP-like models): a text query embedded
// in the same space finds the images it describes. Like event vectors they are derived data:
// deleting a block (Forget of the event that holds it) deletes its vectors, a block that moves
// between holders keeps them (its id never changes), backups leave them out.
// Implementations are safe for concurrent use.
type BlockVectorStore interface {
	// PutBlockVectors stores vecs in space, replacing a block's earlier vector in that space, in
	// one transaction. Blocks that no longer exist are skipped; the number stored is returned.
	// The rules of [VectorStore.PutVectors] on lengths and values apply.
	PutBlockVectors(ctx context.Context, space string, vecs []BlockVector) (int, error)
	// ScanBlockVectors calls fn with every non-empty block vector of space whose block still
	// belongs to an event (see [BlockVectorEntry]), in block id order; an error from fn stops
	// the scan and is returned. fn may keep the entry's Vec.
	ScanBlockVectors(ctx context.Context, space string, fn func(BlockVectorEntry) error) error
	// UnembeddedImages returns up to limit image blocks with an id above after that have no
	// vector in space, in id order, with their Data (limit ≤ 0: 8; images are large).
	UnembeddedImages(ctx context.Context, space, after string, limit int) ([]Block, error)
	// BlockVectorCounts returns how many image blocks have a vector in space, and how many
	// image blocks there are.
	BlockVectorCounts(ctx context.Context, space string) (have, total int, err error)
	// DeleteBlockVectorsExcept deletes the block vectors of every space but keep ("" deletes
	// them all) and returns how many were deleted.
	DeleteBlockVectorsExcept(ctx context.Context, keep string) (int, error)
}
