package memory

import (
	"context"
	"time"
)

// Layer is where an event lives.
type Layer int

// Layers. L3 (the graph) holds entities and triples, not events.
const (
	LayerL1 Layer = 1 // in its session's context window
	LayerL2 Layer = 2 // cold context, recalled on demand
)

// Viewer is who is looking: it decides which scopes are visible (ARCHITECTURE.md §4). The
// owner's own clients (GUI, waiter, token API, private chats) see every scope; a group session
// sees public things and its own group's; a public session sees public things only.
type Viewer struct {
	Owner bool   // sees everything
	Group string // with Owner false: the group whose things are visible ("" = none)
}

// OwnerViewer sees every scope.
var OwnerViewer = Viewer{Owner: true}

// ViewerFor is the viewer of a session: private sessions are the owner's, group sessions see
// their group, public sessions see only public things.
func ViewerFor(s Session) Viewer {
	switch s.Scope.Kind {
	case ScopeGroup:
		return Viewer{Group: s.Scope.Group}
	case ScopePublic:
		return Viewer{}
	}
	return OwnerViewer
}

// CanSee reports whether something in scope sc is visible to v.
func (v Viewer) CanSee(sc Scope) bool {
	switch {
	case v.Owner, sc.Kind == ScopePublic:
		return true
	case sc.Kind == ScopeGroup:
		return v.Group != "" && sc.Group == v.Group
	}
	return false
}

// Narrowest returns the narrowest of two scopes (private < group < public); two different
// groups make it private.
func Narrowest(a, b Scope) Scope {
	switch {
	case a.Kind == ScopePrivate || b.Kind == ScopePrivate:
		return Scope{Kind: ScopePrivate}
	case a.Kind == ScopeGroup && b.Kind == ScopeGroup:
		if a.Group != b.Group {
			return Scope{Kind: ScopePrivate}
		}
		return a
	case a.Kind == ScopeGroup:
		return a
	case b.Kind == ScopeGroup:
		return b
	}
	return Scope{Kind: ScopePublic}
}

// TextQuery is a full-text query over events' indexed tokens.
type TextQuery struct {
	// Terms are index tokens (already tokenised and stemmed the way events are indexed); an
	// event matches when it contains any of them.
	Terms   []string
	Viewer  Viewer
	Layers  []Layer // empty: every layer
	Session string  // non-empty: only this session's events
	Limit   int     // default 100
	// From and To, when To is set, keep only the events with From ≤ time < To. With no Terms
	// and a To, SearchTerms lists those events oldest first, with score 0: the events of the
	// day a question names.
	From, To time.Time
}

// TextHit is one match with its BM25 score (higher is better) and the tokens it was indexed
// under (space-joined, as stored in the full-text index), so callers can re-score it.
type TextHit struct {
	Event   Event
	Score   float64
	Indexed string
}

// Index is the full-text side of the store. Implementations are safe for concurrent use.
type Index interface {
	// SearchTerms returns the best matches of q by BM25, best first, only events q.Viewer can see.
	SearchTerms(ctx context.Context, q TextQuery) ([]TextHit, error)
	// DocFreq returns, for each term, the number of indexed events containing it, and the total
	// number of indexed events (for IDF weighting and feedback).
	DocFreq(ctx context.Context, terms []string) (df []int, total int, err error)
	// Neighbours returns the events within radius positions (by id) of each given event in the
	// same session, visible to v, the given events excluded, in id order.
	Neighbours(ctx context.Context, ids []int64, radius int, v Viewer) ([]Event, error)
	// Events returns events by id with their indexed tokens (missing ids are skipped), in id order.
	Events(ctx context.Context, ids []int64) ([]TextHit, error)
	Episodes
}

// Layers moves events between L1 and L2 and records accesses.
type Layers interface {
	// LayerEvents returns a session's events in layer l, in chronological order.
	LayerEvents(ctx context.Context, session string, l Layer) ([]Event, error)
	// SetLayer moves events to layer l (their ids and times never change).
	SetLayer(ctx context.Context, ids []int64, l Layer) error
	// Touch counts one access of each event at time at (Peek).
	Touch(ctx context.Context, ids []int64, at time.Time) error
}

// Memory is everything the memory engine (memory/engine) asks of a store: sessions and events,
// the text index, layers, the graph, blocks, scenes and vectors (of events and of image blocks), and the conversation partners
// it has seen. memory/sqlite implements it; the kernel takes a store of this type, so a store
// that lacks a capability does not compile instead of switching a feature off.
type Memory interface {
	Store
	Branches
	Index
	Layers
	Graph
	BlockStore
	SceneStore
	VectorStore
	BlockVectorStore
	// Partners lists the distinct conversation partners of stored events.
	Partners(ctx context.Context) ([]string, error)
}
