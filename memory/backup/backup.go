// Package backup exports and imports the memory in open formats (ARCHITECTURE.md §4):
//
//   - a full JSON backup ([ExportJSON], [RestoreJSON]): lossless, streamed record by record, restored
//     into an empty memory in one transaction with every id kept;
//   - JSONL in the format of the MCP memory server, @modelcontextprotocol/server-memory
//     ([ExportJSONL], [ImportJSONL]): entities with observations and relations, merged on import;
//   - Markdown ([ExportMarkdown]): a tar stream of one file per entity and one log per day, for
//     people to read (export only);
//   - chat histories of other apps ([ImportChats]): ChatGPT's conversations.json and Open
//     WebUI's chat export, streamed, one session per conversation, merged by conversation and
//     message id (import only; see chats.go).
//
// The package imports only memory and the standard library. The store side is the small
// interfaces [Source], [Sink] and [ChatSink], which memory/sqlite implements; settings pass
// through [Secrets], which the kernel implements with its codec.
package backup

import (
	"context"
	"errors"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Source is a store that can be read whole.
type Source interface {
	// Snapshot opens a consistent, read-only view of the whole memory; writes that commit after
	// it opened are not seen. The caller must Close it.
	Snapshot(ctx context.Context) (Snapshot, error)
}

// Snapshot is a consistent view of the whole memory. Each method calls fn once per record, in
// the order it documents, and stops at the first error fn returns (and returns it). Records are
// the caller's to keep.
type Snapshot interface {
	// Schema is the schema version of the store the snapshot reads.
	Schema() int
	// Sessions visits every session by id.
	Sessions(ctx context.Context, fn func(memory.Session) error) error
	// Events visits every event, by id, or by time and then id when byTime is set. Blocks holds
	// the event's block references in order: each block's id, kind, name, MIME type, size, scope
	// and holder, without text or data.
	Events(ctx context.Context, byTime bool, fn func(memory.Event) error) error
	// Blocks visits every block by id, with its text, and with its data when withData is set.
	Blocks(ctx context.Context, withData bool, fn func(memory.Block) error) error
	// Entities visits every entity by id, with Text and BlockID; Mentions is left zero.
	Entities(ctx context.Context, fn func(memory.Entity) error) error
	// Triples visits every triple (superseded and ended ones too) by id, with entity names and
	// sources (ascending).
	Triples(ctx context.Context, fn func(memory.Triple) error) error
	// Scenes visits every scene (pending ones too) by id.
	Scenes(ctx context.Context, fn func(memory.Scene) error) error
	// Settings visits every setting by key.
	Settings(ctx context.Context, fn func(key, value string) error) error
	// Close releases the snapshot. It is safe to call more than once.
	Close() error
}

// Sink is a store a full backup can be restored into.
type Sink interface {
	// BeginRestore opens the one transaction a restore runs in. It fails, wrapping
	// [ErrNotEmpty], when the store already holds events, entities, triples or blocks.
	BeginRestore(ctx context.Context) (Restorer, error)
}

// Restorer writes the records of a restore inside one transaction. Records keep their ids and
// may reference records written later (references are checked at Commit). Nothing is visible
// until Commit; after an error the caller calls Rollback.
type Restorer interface {
	// Session stores a session; an existing session with the same id (necessarily empty) is
	// replaced.
	Session(memory.Session) error
	// Event stores an event with its id, layer, accesses and distilled mark, and indexes it as
	// the store indexes appended events. Its Blocks name the blocks it brought (by ID, in order);
	// the blocks themselves come through Block.
	Event(memory.Event) error
	// Block stores a block with its data and holder.
	Block(memory.Block) error
	// Entity stores an entity (its text is its block's, BlockID names it).
	Entity(memory.Entity) error
	// Triple stores a triple with its sources, validity, pin and supersession.
	Triple(memory.Triple) error
	// Scene stores a scene; a stored scene with the same id or key is replaced.
	Scene(memory.Scene) error
	// Setting creates or replaces a setting.
	Setting(key, value string) error
	// Commit checks every reference, indexes the triples and commits.
	Commit() error
	// Rollback abandons the restore; it is a no-op after Commit.
	Rollback() error
}

// Secrets decides how settings leave and enter a backup. The kernel implements it: provider keys
// are sealed at rest by its codec, so they are left out of a backup unless asked for, exported in
// clear text when asked, and sealed again on import.
type Secrets interface {
	// Export returns what a backup holds for a setting: out is the value to write, secret marks
	// it as a secret in clear text, keep false leaves the setting out. include says whether the
	// owner asked for secrets.
	Export(key, value string, include bool) (out string, secret bool, keep bool, err error)
	// Import returns the value to store for a setting read from a backup (secret: it was
	// exported as a secret in clear text).
	Import(key, value string, secret bool) (string, error)
}

// Options configures exports and imports. The zero value is usable.
type Options struct {
	// Clock gives the time a backup records as its creation (nil: time.Now).
	Clock func() time.Time
	// Secrets filters settings; nil passes every setting through unchanged, none marked secret.
	Secrets Secrets
	// IncludeSecrets asks Secrets to export secrets in clear text.
	IncludeSecrets bool
	// Location is the time zone of Markdown log days and times (nil: UTC).
	Location *time.Location
}

func (o Options) now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock()
}

func (o Options) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

// Report says what an import added.
type Report struct {
	Sessions int `json:"sessions"`
	Events   int `json:"events"`
	Blocks   int `json:"blocks"`
	Entities int `json:"entities"`
	Triples  int `json:"triples"`
	Scenes   int `json:"scenes"`
	Settings int `json:"settings"`
	// Skipped counts records already present (a JSONL import merges by name).
	Skipped int `json:"skipped"`
}

// ErrNotEmpty is wrapped by the error of [Sink.BeginRestore] (and so of [RestoreJSON]) when the
// store already holds memory: a restore never merges.
var ErrNotEmpty = errors.New("restore needs an empty memory")
