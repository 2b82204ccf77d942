package client

import (
	"context"
	"io"
	"time"
)

// MemoryAdmin is the owner's side of memory: the L3 graph (for the star map and the inspector),
// forgetting, pins and edits, scenes, garbage collection, export and import. Part of [Service].
type MemoryAdmin interface {
	// Graph returns one page of the graph: entities and the triples between them (current
	// ones unless q.History), optionally with recent L2 events, filtered by scope.
	Graph(ctx context.Context, q GraphQuery) (GraphPage, error)
	// Entity returns one entity with all its triples (history included) and blocks.
	Entity(ctx context.Context, id int64) (EntityDetail, error)
	// PutEntity creates (ID 0) or edits an entity's name, kind, text and scope.
	PutEntity(ctx context.Context, e Entity) (Entity, error)
	// AddTriple adds an owner-made triple (entities by name, created when missing).
	AddTriple(ctx context.Context, t TripleInput) (Triple, error)
	// EditTriple supersedes a triple by a corrected one and returns the new triple.
	EditTriple(ctx context.Context, id int64, t TripleInput) (Triple, error)
	// Pin pins or unpins an entity, a triple or a block ("entity", "triple", "block"; a block is
	// moved to L3, held by Entity or by a new note entity).
	Pin(ctx context.Context, p PinRequest) error
	// MergeEntities moves every triple and block of From onto Into and deletes From.
	MergeEntities(ctx context.Context, into, from int64) (Entity, error)
	// DeleteEntity deletes an entity with its triples and blocks.
	DeleteEntity(ctx context.Context, id int64) error
	// Forget deletes events with their index rows, vectors and blocks, and every triple whose
	// only provenance they were.
	Forget(ctx context.Context, eventIDs []int64) (ForgetResult, error)
	// Scenes lists the scenes (declared and emergent; pending ones are not listed).
	Scenes(ctx context.Context) ([]Scene, error)
	// MemoryGC runs cooling, distillation and decay now and reports what each did.
	MemoryGC(ctx context.Context) (GCReport, error)
	// ExportMemory writes the memory in a format (see ExportRequest) to w.
	ExportMemory(ctx context.Context, req ExportRequest, w io.Writer) error
	// ImportMemory reads a file in a format from r.
	ImportMemory(ctx context.Context, format string, r io.Reader) (ImportReport, error)
	// CoolAll cools every session now, idle or not (every L1 event sinks to L2), and distils
	// every cold event, calling progress (from one goroutine, in order; it may be nil) as it
	// goes (memimport.go).
	CoolAll(ctx context.Context, progress func(GCProgress)) (GCReport, error)
	// EventContext returns an event (a triple's source, say) with up to radius events before
	// and after it in its session, in time order: the event in context. ErrNotFound when no
	// such event exists.
	EventContext(ctx context.Context, id int64, radius int) ([]MemoryHit, error)
	// Thumbnail returns an image block's thumbnail: a PNG at most [MaxThumbnailSide] pixels on
	// its longer side (GET [ThumbnailPath]). ErrNotFound for an unknown block, ErrInvalid for a
	// block that is not an image or whose image does not decode.
	Thumbnail(ctx context.Context, block string) ([]byte, error)
}

// Bounds of EventContext's radius: 0 means DefaultContextRadius.
const (
	DefaultContextRadius = 3
	MaxContextRadius     = 20
)

// Export and import formats.
const (
	// FormatJSON is the full backup: sessions, events, blocks, entities, triples, scenes and
	// settings (secrets only when asked). Importing it needs an empty memory.
	FormatJSON = "json"
	// FormatJSONL is the MCP memory server's format (@modelcontextprotocol/server-memory): one
	// JSON object per line, {"type":"entity","name","entityType","observations"} or
	// {"type":"relation","from","to","relationType"}. Importing it merges.
	FormatJSONL = "jsonl"
	// FormatMarkdown is a tar stream of Markdown files: entities/<name>.md per entity and
	// log/<yyyy-mm-dd>.md per day of events. Export only.
	FormatMarkdown = "markdown"
	// FormatChatGPT is the conversations.json of a ChatGPT data export (see [OpenImportFile]
	// for the export's .zip). Import only; it merges.
	FormatChatGPT = "chatgpt"
	// FormatOpenWebUI is Open WebUI's chat export (a JSON array of chats). Import only; it
	// merges.
	FormatOpenWebUI = "openwebui"
)

// ExportRequest asks for an export.
type ExportRequest struct {
	Format string `json:"format"`
	// IncludeSecrets puts sealed settings (provider keys) into a JSON backup, in clear text.
	IncludeSecrets bool `json:"include_secrets,omitempty"`
}

// ImportReport says what an import added.
type ImportReport struct {
	Sessions int `json:"sessions"`
	Events   int `json:"events"`
	Blocks   int `json:"blocks"`
	Entities int `json:"entities"`
	Triples  int `json:"triples"`
	Scenes   int `json:"scenes"`
	Settings int `json:"settings"`
	// Skipped counts records already present (a JSONL import merges by name; a chat history
	// import, by conversation and message id).
	Skipped int `json:"skipped"`

	// Chats says what became of each conversation of a chat history import (FormatChatGPT,
	// FormatOpenWebUI); nil for the other formats.
	Chats *ChatsReport `json:"chats,omitempty"`
}

// ChatsReport is the part of an [ImportReport] only chat history imports have: Conversations
// were read, each imported (it added messages), unchanged (imported before), empty (nothing to
// import) or refused.
type ChatsReport struct {
	Conversations int `json:"conversations"`
	Imported      int `json:"imported"`
	Unchanged     int `json:"unchanged"`
	Empty         int `json:"empty"`
	// SkippedBy counts the messages and parts not imported by reason: "branch" (not on the
	// branch the user last saw), "system", "tool", "hidden", "empty", "reasoning", "context",
	// "image", "audio", "file", "unsupported".
	SkippedBy map[string]int `json:"skipped_by,omitempty"`
	// Refused lists the first refused conversations with why; RefusedCount counts them all.
	Refused      []ImportRefusal `json:"refused,omitempty"`
	RefusedCount int             `json:"refused_count"`
}

// ImportRefusal is one conversation a chat history import refused: its position in the file
// (from 1), the byte offset where it starts (or the comma and spaces before it), its id and
// title, and why.
type ImportRefusal struct {
	Index  int    `json:"index"`
	Offset int64  `json:"offset"`
	ID     string `json:"id,omitempty"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
}

// GraphQuery asks for a page of the graph.
type GraphQuery struct {
	Scope   string `json:"scope,omitempty"`   // only things of this scope
	History bool   `json:"history,omitempty"` // include superseded and ended triples
	// After is the paging cursor of the previous page ("" = first page).
	After string `json:"after,omitempty"`
	Limit int    `json:"limit,omitempty"` // entities per page: default 1,000, at most 10,000
	// Events adds up to this many recent L2 events (and their links to triples), default 0, at
	// most 1,000.
	Events int `json:"events,omitempty"`
	// Scene keeps only the triples with a source event in the scene of this key (the entities
	// are listed as without it), e.g. to light one scene's part of the star map.
	Scene string `json:"scene,omitempty"`
}

// GraphPage is one page: entities with the triples among entities seen so far (an edge is sent
// with the page of its later endpoint), and Next for the following page ("" at the end).
type GraphPage struct {
	Entities []Entity   `json:"entities"`
	Triples  []Triple   `json:"triples"`
	Events   []GraphEvt `json:"events,omitempty"`
	Next     string     `json:"next,omitempty"`
	// Total counts every visible entity.
	Total int `json:"total"`
}

// GraphEvt is an L2 event in a graph page, linked to the triples it is a source of.
type GraphEvt struct {
	ID      int64     `json:"id"`
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Role    string    `json:"role"`
	Partner string    `json:"partner,omitempty"`
	Content string    `json:"content"`
	Scope   string    `json:"scope"`
	Triples []int64   `json:"triples,omitempty"`
}

// Entity is a node of the graph.
type Entity struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Kind         string    `json:"kind"`
	Text         string    `json:"text,omitempty"`
	Scope        string    `json:"scope"`
	Pinned       bool      `json:"pinned"`
	Mentions     int       `json:"mentions"`
	Origin       string    `json:"origin,omitempty"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	LastRecalled time.Time `json:"last_recalled"`
}

// Triple is an edge of the graph.
type Triple struct {
	ID           int64     `json:"id"`
	Subject      int64     `json:"subject"`
	SubjectName  string    `json:"subject_name"`
	Predicate    string    `json:"predicate"`
	Object       int64     `json:"object"`
	ObjectName   string    `json:"object_name"`
	ValidFrom    time.Time `json:"valid_from"`
	ValidTo      time.Time `json:"valid_to"`
	Sources      []int64   `json:"sources"`
	Scope        string    `json:"scope"`
	Pinned       bool      `json:"pinned"`
	SupersededBy int64     `json:"superseded_by,omitempty"`
	Origin       string    `json:"origin,omitempty"`
	Created      time.Time `json:"created"`
}

// TripleInput is a triple by entity names.
type TripleInput struct {
	Subject     string    `json:"subject"`
	SubjectKind string    `json:"subject_kind,omitempty"`
	Predicate   string    `json:"predicate"`
	Object      string    `json:"object"`
	ObjectKind  string    `json:"object_kind,omitempty"`
	ValidFrom   time.Time `json:"valid_from"`
	Replaces    bool      `json:"replaces,omitempty"`
	Scope       string    `json:"scope,omitempty"`
}

// Block is a block as listed (without data).
type Block struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Name        string `json:"name,omitempty"`
	MIME        string `json:"mime,omitempty"`
	Text        string `json:"text,omitempty"`
	Size        int64  `json:"size"`
	Scope       string `json:"scope"`
	HolderLayer int    `json:"holder_layer"`
	HolderEvent int64  `json:"holder_event,omitempty"`
	// HolderEntity is set for an L3 block.
	HolderEntity int64 `json:"holder_entity,omitempty"`
}

// EntityDetail is an entity with every triple it is part of and the blocks it holds.
type EntityDetail struct {
	Entity  Entity   `json:"entity"`
	Triples []Triple `json:"triples"`
	Blocks  []Block  `json:"blocks"`
}

// PinRequest pins or unpins something.
type PinRequest struct {
	Kind   string `json:"kind"` // "entity", "triple" or "block"
	ID     int64  `json:"id,omitempty"`
	Block  string `json:"block,omitempty"`  // for kind "block"
	Entity int64  `json:"entity,omitempty"` // for kind "block": the holder entity (0: a new note)
	Pinned bool   `json:"pinned"`
}

// ForgetResult says what forgetting removed.
type ForgetResult struct {
	Events   int `json:"events"`
	Blocks   int `json:"blocks"`
	Triples  int `json:"triples"`
	Trimmed  int `json:"trimmed"`
	Entities int `json:"entities"`
}

// Scene is a recurring situation.
type Scene struct {
	ID          int64              `json:"id"`
	Key         string             `json:"key"`
	Declared    bool               `json:"declared"`
	Features    map[string]float64 `json:"features"`
	Strength    float64            `json:"strength"` // as of now (decayed)
	Occurrences int                `json:"occurrences"`
	Seen        time.Time          `json:"seen"`
}

// GCReport says what a memory GC pass did.
type GCReport struct {
	Cooled     int           `json:"cooled"`     // L1 events sunk to L2 from idle sessions
	Distilled  int           `json:"distilled"`  // events distilled
	Entities   int           `json:"entities"`   // entities created
	Triples    int           `json:"triples"`    // triples created
	Confirmed  int           `json:"confirmed"`  // existing triples that gained a source
	Superseded int           `json:"superseded"` // triples superseded by corrections
	Extractor  string        `json:"extractor"`  // "llm", "rules" or "llm+rules" (fallback used)
	Decayed    int           `json:"decayed"`    // faded scenes removed
	Took       time.Duration `json:"took"`
}
