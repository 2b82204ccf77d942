package memory

import "context"

// Branches is the tree of a session's events. Every event has a parent (Event.Parent, 0 for a
// root): AppendEvents makes new events follow the session's head, the newest event of its
// current branch. The current branch is the path from a root to the head; regenerating a reply
// moves the head back to the user message it answers and editing a sent message moves it to the
// message before, so the next events start a sibling branch. Events of the other branches stay
// stored with OffBranch set; History, the L1 window and recall see the current branch only.
type Branches interface {
	// SetHead makes the path from a root to event head the session's current branch (head 0:
	// none, the next event is a new root). head must be an event of the session (ErrNotFound).
	SetHead(ctx context.Context, session string, head int64) error
	// BranchLeaf returns the newest event of the subtree under event id, following the newest
	// child at each step (id itself when it has no child): the head that shows the branch.
	BranchLeaf(ctx context.Context, session string, id int64) (int64, error)
	// Children returns the children of each given event of the session (ids in id order; parent
	// 0 lists the roots). Parents without children are absent.
	Children(ctx context.Context, session string, parents []int64) (map[int64][]int64, error)
	// HistoryPage returns up to limit events of the session's current branch older than event
	// before (before <= 0: the newest), in chronological order, and whether older ones exist.
	HistoryPage(ctx context.Context, session string, before int64, limit int) ([]Event, bool, error)
	// SessionEventIDs returns the ids of every event of a session, on every branch, in id order.
	SessionEventIDs(ctx context.Context, session string) ([]int64, error)
}

// Meta keys of a turn's final assistant event: the provider's usage summed over the turn's LLM
// calls, the turn's wall time in milliseconds and the model that answered.
const (
	MetaPromptTokens     = "usage.prompt_tokens"
	MetaCompletionTokens = "usage.completion_tokens"
	MetaMillis           = "usage.ms"
	MetaModel            = "model"
)
