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
