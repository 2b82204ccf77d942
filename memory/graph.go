package memory

import (
	"context"
	"time"
)

// LayerL3 is the graph: a block held by an entity lives there. Events are never in L3.
const LayerL3 Layer = 3

// BlockKind is what a block holds.
type BlockKind string

// Block kinds.
const (
	BlockText  BlockKind = "text"
	BlockImage BlockKind = "image"
	BlockAudio BlockKind = "audio"
	// BlockVideo is a video as attached to a message. It is never stored: the kernel keeps its
	// keyframes as image blocks and a text block that describes it (a video of a gigabyte is
	// not memory; its pictures' words are).
	BlockVideo BlockKind = "video"
)

// Block is a piece of content (an attachment, a note, an image and its OCR text) with exactly one
// holder at any time: an event in L1 or L2, or an entity in L3. Its ID never changes when it moves.
// The event it first arrived with keeps a reference to it (Event.Blocks) after it moves to L3.
type Block struct {
	ID   string    `json:"id"` // assigned by the store when empty (random, 128-bit hex)
	Kind BlockKind `json:"kind"`
	// Name is a title or file name ("" when none).
	Name string `json:"name,omitempty"`
	MIME string `json:"mime,omitempty"`
	// Text is the content of a text block, or the OCR/transcript text of a media block. An
	// event's blocks as listed with it (History, searches) carry at most the first 64 Ki
	// characters of it (Size is the whole); [BlockStore.Block] gives it whole.
	Text string `json:"text,omitempty"`
	// Data is the bytes of a media block. Listings leave it nil; [BlockStore.Block] fills it.
	Data  []byte `json:"data,omitempty"`
	Size  int64  `json:"size"` // len(Data) for media, len(Text) for text; set by the store
	Scope Scope  `json:"scope"`
	// Holder: Layer is LayerL1 or LayerL2 with Event set, or LayerL3 with Entity set.
	Holder  BlockHolder `json:"holder"`
	Created time.Time   `json:"created"`
}

// BlockHolder is where a block lives.
type BlockHolder struct {
	Layer  Layer `json:"layer"`
	Event  int64 `json:"event,omitempty"`
	Entity int64 `json:"entity,omitempty"`
}

// Entity is a node of the graph: a name and a kind, with a text block describing it.
type Entity struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Kind is lower case: person, place, org, thing, event, time, concept, note… (free text).
	Kind string `json:"kind"`
	// Text is the content of the entity's text block ("" when it has none); BlockID that block.
	Text    string `json:"text,omitempty"`
	BlockID string `json:"block_id,omitempty"`
	// Scope is the narrowest scope of the events it was distilled from (owner-created and
	// imported entities are private unless given one).
	Scope  Scope `json:"scope"`
	Pinned bool  `json:"pinned"`
	// Mentions counts the source events of its current triples (how often memory speaks of it).
	Mentions int `json:"mentions"`
	// Origin is "llm", "rules", "owner" or "import".
	Origin       string    `json:"origin"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	LastRecalled time.Time `json:"last_recalled"` // zero: never
}

// Triple is an edge of the graph: subject —predicate→ object, with provenance and validity. A
// correction supersedes a triple (ValidTo and SupersededBy are set); it is never overwritten.
type Triple struct {
	ID          int64  `json:"id"`
	Subject     int64  `json:"subject"`
	SubjectName string `json:"subject_name"`
	// Predicate is lower case with single spaces ("lives in", "likes", "works at").
	Predicate  string `json:"predicate"`
	Object     int64  `json:"object"`
	ObjectName string `json:"object_name"`
	// ValidFrom is when the fact became true (the source event's time when unknown); ValidTo is
	// when it stopped (zero: still valid).
	ValidFrom time.Time `json:"valid_from"`
	ValidTo   time.Time `json:"valid_to"`
	// Sources are the ids of the L2 events it came from (empty for owner-made or imported
	// triples). Forgetting the last source deletes the triple.
	Sources      []int64   `json:"sources"`
	Scope        Scope     `json:"scope"`
	Pinned       bool      `json:"pinned"`
	SupersededBy int64     `json:"superseded_by,omitempty"`
	Origin       string    `json:"origin"` // "llm", "rules", "owner" or "import"
	Created      time.Time `json:"created"`
}

// Current reports whether the triple is still valid (not superseded, no end of validity).
func (t Triple) Current() bool { return t.SupersededBy == 0 && t.ValidTo.IsZero() }

// Fact is one extracted statement, by entity name.
type Fact struct {
	Subject     string `json:"subject"`
	SubjectKind string `json:"subject_kind"`
	Predicate   string `json:"predicate"`
	Object      string `json:"object"`
	ObjectKind  string `json:"object_kind"`
	// ValidFrom: zero means the time of the newest source event.
	ValidFrom time.Time `json:"valid_from"`
	// Replaces marks a correction: the subject's current triples with the same predicate and
	// another object are superseded by this one.
	Replaces bool `json:"replaces,omitempty"`
	// Ends marks a negation ("I no longer play cello", "我现在不住在北京了"): the subject's current
	// triple with this predicate and object ends (ValidTo is the fact's ValidFrom, or its newest
	// source event's time) and nothing is created. Pinned triples are kept.
	Ends bool `json:"ends,omitempty"`
	// Sources are the event ids the fact was read from (a subset of Distillation.Events).
	Sources []int64 `json:"sources"`
}

// Adoption makes a block held by a source event the text block of an entity (by name), moving
// the block to L3.
type Adoption struct {
	Block  string `json:"block"`
	Entity string `json:"entity"`
}

// Distillation is the result of distilling some cold events, applied in one transaction.
type Distillation struct {
	// Events are the events distilled; they are marked distilled (and stay in L2), even when
	// no fact came out of them.
	Events []int64
	Facts  []Fact
	Adopt  []Adoption
	Origin string // "llm" or "rules"
	At     time.Time
	// Keep leaves the events undistilled: the facts of a turn read right after it (the rules,
	// in the background), which cooling distils again later (their facts then confirm these).
	Keep bool
}

// DistillResult says what applying a Distillation changed.
type DistillResult struct {
	Entities   int // entities created
	Triples    int // triples created
	Confirmed  int // existing current triples that gained sources (no duplicate is created)
	Superseded int
	Adopted    int
	// Skipped counts events that were already distilled or no longer exist (a rerun after a
	// crash): their facts are ignored, so a rerun never duplicates.
	Skipped int
}

// EntityQuery lists entities.
type EntityQuery struct {
	Viewer Viewer
	Name   string // exact name, case-insensitive ("" = any)
	Text   string // full-text over name and text ("" = any)
	Kind   string
	Scope  *Scope // only this scope
	After  int64  // paging: ids greater than After, in id order
	Limit  int    // default 100, at most 10,000
}

// TripleQuery lists triples.
type TripleQuery struct {
	Viewer Viewer
	Entity int64 // as subject or object (0 = any)
	// History includes superseded and ended triples (default: current only).
	History bool
	Scope   *Scope
	Since   time.Time // only triples created at or after Since (zero = any)
	// Scene keeps the triples with at least one source event in the scene of this key.
	Scene string
	// EndpointAfter and EndpointUpTo, when EndpointUpTo is set, keep the triples whose later
	// endpoint (the larger of the subject and object ids) is in (EndpointAfter, EndpointUpTo]:
	// the edges of one page of entities listed in id order.
	EndpointAfter, EndpointUpTo int64
	After                       int64 // paging by id
	Limit                       int   // default 100, at most 20,000
}

// TripleHit is a triple found by text with its BM25 score.
type TripleHit struct {
	Triple Triple
	Score  float64
}

// ForgetResult says what forgetting removed.
type ForgetResult struct {
	Events   int `json:"events"`
	Blocks   int `json:"blocks"`
	Triples  int `json:"triples"`  // deleted: the forgotten events were their only provenance
	Trimmed  int `json:"trimmed"`  // kept (other sources remain) but lost a source
	Entities int `json:"entities"` // left without triples, blocks or pin, and deleted
}

// ColdQuery selects events ready for distillation: in L2, not distilled, at most MaxAccesses
// accesses, and idle (neither accessed nor created) since IdleBefore.
type ColdQuery struct {
	MaxAccesses int
	IdleBefore  time.Time
	Limit       int
}

// Graph is L3: entities and triples. Implementations are safe for concurrent use. Every write is
// one transaction.
type Graph interface {
	// ColdEvents returns events ready for distillation, oldest first.
	ColdEvents(ctx context.Context, q ColdQuery) ([]Event, error)
	// ApplyDistillation stores a distillation (see Distillation). Entities are found by name
	// (case-insensitive) and kind, and created when missing; a fact equal to a current triple
	// adds its sources to it. Scopes: the narrowest of the sources'. Idempotent per event.
	ApplyDistillation(ctx context.Context, d Distillation) (DistillResult, error)

	// Entity returns ErrNotFound for an unknown id.
	Entity(ctx context.Context, id int64) (Entity, error)
	Entities(ctx context.Context, q EntityQuery) ([]Entity, error)
	// CountEntities counts the entities v may see, of one scope when scope is not nil.
	CountEntities(ctx context.Context, v Viewer, scope *Scope) (int, error)
	Triples(ctx context.Context, q TripleQuery) ([]Triple, error)
	// SearchTriples finds current triples by text (subject, predicate, object names and the
	// entities' text), best first, only those v may see.
	SearchTriples(ctx context.Context, terms []string, v Viewer, limit int) ([]TripleHit, error)

	// PutEntity creates (ID 0) or edits an entity: name, kind, text and scope. Editing the
	// name or kind of an entity is the owner's correction and keeps its triples.
	PutEntity(ctx context.Context, e Entity) (Entity, error)
	// AddTriple stores an owner-made or imported triple between entities named in f (created
	// when missing); f.Replaces supersedes as in distillation.
	AddTriple(ctx context.Context, f Fact, origin string, sc Scope) (Triple, error)
	// EditTriple supersedes triple id by a new one with f's subject/predicate/object (the new
	// triple keeps the old one's sources) and returns it.
	EditTriple(ctx context.Context, id int64, f Fact) (Triple, error)
	// Pin pins or unpins an entity or a triple (kind "entity" or "triple").
	Pin(ctx context.Context, kind string, id int64, pinned bool) error
	// MergeEntities moves every triple and block of from onto into and deletes from.
	MergeEntities(ctx context.Context, into, from int64) (Entity, error)
	// DeleteEntity deletes an entity, its triples and the blocks it holds (owner action).
	DeleteEntity(ctx context.Context, id int64) error
	// Recalled marks entities as recalled at t (the star map makes them glow).
	Recalled(ctx context.Context, ids []int64, t time.Time) error

	// Forget deletes events (owner action): their index rows and vectors, the blocks they hold,
	// and every triple whose only provenance they were; entities left with nothing are deleted.
	Forget(ctx context.Context, ids []int64) (ForgetResult, error)
}

// BlockStore keeps blocks. Events bring new blocks with Event.Blocks in AppendEvents (held by
// that event); SetLayer moves an event's blocks with it.
type BlockStore interface {
	// Block returns a block with its data; ErrNotFound when unknown.
	Block(ctx context.Context, id string) (Block, error)
	// Blocks lists the blocks held by an event (LayerL1/L2) or an entity (LayerL3), without data.
	Blocks(ctx context.Context, h BlockHolder) ([]Block, error)
	// PinBlock moves a block to L3, held by entity (0: a new entity of kind "note" named after
	// the block), and returns the holder entity.
	PinBlock(ctx context.Context, id string, entity int64) (Entity, error)
}

// Scene is a recurring situation (a channel, a partner, the tools used, the topic, the time of
// day) learnt from events (emergent) or given by a session key (declared, e.g.
// "chan:qq/peer:group_1"). Features are "kind:value" strings ("channel:qq", "partner:bob",
// "tool:shell", "topic:hiking", "tod:evening") with the weights of ARCHITECTURE.md §4.
type Scene struct {
	ID       int64              `json:"id"`
	Key      string             `json:"key"`
	Declared bool               `json:"declared"`
	Features map[string]float64 `json:"features"`
	// Strength grows by 1 per recurrence and halves every 30 days; it is stored as of Seen.
	Strength float64 `json:"strength"`
	// Occurrences counts the fingerprints that joined (a pending scene has 1).
	Occurrences int       `json:"occurrences"`
	Seen        time.Time `json:"seen"`
	Created     time.Time `json:"created"`
}

// SceneStore keeps scenes. A scene with Occurrences 1 is pending (not yet shown nor used).
type SceneStore interface {
	Scenes(ctx context.Context) ([]Scene, error)
	// PutScene creates (ID 0; Key must be unique) or replaces a scene.
	PutScene(ctx context.Context, s Scene) (Scene, error)
	DeleteScene(ctx context.Context, id int64) error
	// SetScene sets the scene key of events.
	SetScene(ctx context.Context, ids []int64, key string) error
}
