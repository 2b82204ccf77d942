package backup

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Format and Version identify a full backup: the header of the document is
// {"format":"hologram-backup","version":1,"created":…,"schema":N}.
const (
	Format  = "hologram-backup"
	Version = 1
)

// The sections of a full backup, in the order ExportJSON writes them. Each is an array with one
// record per line.
const (
	secSessions = "sessions"
	secEvents   = "events"
	secBlocks   = "blocks"
	secEntities = "entities"
	secTriples  = "triples"
	secScenes   = "scenes"
	secSettings = "settings"
)

// header is the start of a full backup.
type header struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	Schema  int       `json:"schema"`
}

// The records of a full backup. Scopes are written as [memory.Scope.String] ("private",
// "public", "group:<id>"), times as RFC 3339 in UTC with nanoseconds; a time that is unset in
// the store (never accessed, still valid…) is left out.

type sessionRecord struct {
	ID           string    `json:"id"`
	Title        string    `json:"title,omitempty"`
	SystemPrompt string    `json:"system_prompt,omitempty"`
	Model        string    `json:"model,omitempty"`
	Channel      string    `json:"channel,omitempty"`
	Partner      string    `json:"partner,omitempty"`
	Scope        string    `json:"scope"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
}

type eventRecord struct {
	ID         int64             `json:"id"`
	Session    string            `json:"session"`
	TurnID     string            `json:"turn_id,omitempty"`
	Time       time.Time         `json:"time"`
	Role       string            `json:"role"`
	Content    string            `json:"content,omitempty"`
	Reasoning  string            `json:"reasoning,omitempty"`
	ToolCalls  []memory.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
	ToolName   string            `json:"tool_name,omitempty"`
	ToolStatus string            `json:"tool_status,omitempty"`
	Channel    string            `json:"channel,omitempty"`
	Partner    string            `json:"partner,omitempty"`
	Scene      string            `json:"scene,omitempty"`
	Scope      string            `json:"scope"`
	Tokens     int               `json:"tokens,omitempty"`
	Meta       map[string]string `json:"meta,omitempty"`
	Layer      int               `json:"layer"`
	Accesses   int               `json:"accesses,omitempty"`
	LastAccess time.Time         `json:"last_access,omitzero"`
	Distilled  bool              `json:"distilled,omitempty"`
	// Blocks are the ids of the blocks the event brought, in order.
	Blocks []string `json:"blocks,omitempty"`
	// Parent is the event this one follows (0: a root); OffBranch marks an event off its
	// session's current branch (memory.Branches). Backups without them chain each session.
	Parent    int64 `json:"parent,omitempty"`
	OffBranch bool  `json:"off_branch,omitempty"`
}

type blockRecord struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	MIME string `json:"mime,omitempty"`
	Text string `json:"text,omitempty"`
	// Data is base64 (standard encoding, padded).
	Data  []byte `json:"data,omitempty"`
	Size  int64  `json:"size"`
	Scope string `json:"scope"`
	// Layer is the holder's layer: 1 or 2 with Event set, 3 with Entity set.
	Layer   int       `json:"layer"`
	Event   int64     `json:"event,omitempty"`
	Entity  int64     `json:"entity,omitempty"`
	Created time.Time `json:"created"`
}

type entityRecord struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Block is the entity's text block (in the blocks section, held by this entity).
	Block        string    `json:"block,omitempty"`
	Scope        string    `json:"scope"`
	Pinned       bool      `json:"pinned,omitempty"`
	Origin       string    `json:"origin"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	LastRecalled time.Time `json:"last_recalled,omitzero"`
}

type tripleRecord struct {
	ID           int64     `json:"id"`
	Subject      int64     `json:"subject"`
	Predicate    string    `json:"predicate"`
	Object       int64     `json:"object"`
	ValidFrom    time.Time `json:"valid_from,omitzero"`
	ValidTo      time.Time `json:"valid_to,omitzero"`
	Sources      []int64   `json:"sources,omitempty"`
	Scope        string    `json:"scope"`
	Pinned       bool      `json:"pinned,omitempty"`
	SupersededBy int64     `json:"superseded_by,omitempty"`
	Origin       string    `json:"origin"`
	Created      time.Time `json:"created"`
}

type sceneRecord struct {
	ID          int64              `json:"id"`
	Key         string             `json:"key"`
	Declared    bool               `json:"declared,omitempty"`
	Features    map[string]float64 `json:"features"`
	Strength    float64            `json:"strength"`
	Occurrences int                `json:"occurrences"`
	Seen        time.Time          `json:"seen"`
	Created     time.Time          `json:"created"`
}

type settingRecord struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Secret marks a secret exported in clear text (see [Secrets]).
	Secret bool `json:"secret,omitempty"`
}

// ExportJSON writes a full backup of src to w: a header and then sessions, events, blocks (with
// their data, base64), entities, triples, scenes and settings, one record per line, read from one
// snapshot and written as they are read. Settings pass through opts.Secrets.
func ExportJSON(ctx context.Context, src Source, w io.Writer, opts Options) (err error) {
	snap, err := src.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("export json: %w", err)
	}
	defer func() {
		if cerr := snap.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("export json: %w", cerr)
		}
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)

	h, err := json.Marshal(header{Format: Format, Version: Version, Created: opts.now().UTC(), Schema: snap.Schema()})
	if err != nil {
		return fmt.Errorf("export json: header: %w", err)
	}
	bw.Write(h[:len(h)-1]) // the header's fields open the document; sections follow
	sw := &sectionWriter{bw: bw, enc: enc}

	sw.begin(secSessions)
	if err := snap.Sessions(ctx, func(s memory.Session) error { return sw.record(fromSession(s)) }); err != nil {
		return fmt.Errorf("export json: sessions: %w", err)
	}
	sw.begin(secEvents)
	if err := snap.Events(ctx, false, func(e memory.Event) error { return sw.record(fromEvent(e)) }); err != nil {
		return fmt.Errorf("export json: events: %w", err)
	}
	sw.begin(secBlocks)
	if err := snap.Blocks(ctx, true, func(b memory.Block) error { return sw.record(fromBlock(b)) }); err != nil {
		return fmt.Errorf("export json: blocks: %w", err)
	}
	sw.begin(secEntities)
	if err := snap.Entities(ctx, func(e memory.Entity) error { return sw.record(fromEntity(e)) }); err != nil {
		return fmt.Errorf("export json: entities: %w", err)
	}
	sw.begin(secTriples)
	if err := snap.Triples(ctx, func(t memory.Triple) error { return sw.record(fromTriple(t)) }); err != nil {
		return fmt.Errorf("export json: triples: %w", err)
	}
	sw.begin(secScenes)
	if err := snap.Scenes(ctx, func(s memory.Scene) error { return sw.record(fromScene(s)) }); err != nil {
		return fmt.Errorf("export json: scenes: %w", err)
	}
	sw.begin(secSettings)
	if err := snap.Settings(ctx, func(k, v string) error {
		rec := settingRecord{Key: k, Value: v}
		if opts.Secrets != nil {
			out, secret, keep, err := opts.Secrets.Export(k, v, opts.IncludeSecrets)
			if err != nil {
				return fmt.Errorf("setting %q: %w", k, err)
			}
			if !keep {
				return nil
			}
			rec.Value, rec.Secret = out, secret
		}
		return sw.record(rec)
	}); err != nil {
		return fmt.Errorf("export json: settings: %w", err)
	}
	sw.end()
	bw.WriteString("}\n")
	if sw.err != nil {
		return fmt.Errorf("export json: %w", sw.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export json: %w", err)
	}
	return nil
}

// sectionWriter writes the sections of a backup: `,\n"name":[\n` then records, the second and
// later ones after a comma, each on its own line, and `]` at the end. The first write error
// sticks (bufio keeps it too) and stops the snapshot's iteration.
type sectionWriter struct {
	bw   *bufio.Writer
	enc  *json.Encoder
	open bool
	n    int
	err  error
}

func (sw *sectionWriter) begin(name string) {
	sw.end()
	fmt.Fprintf(sw.bw, ",\n%q:[\n", name)
	sw.open, sw.n = true, 0
}

func (sw *sectionWriter) end() {
	if sw.open {
		sw.bw.WriteString("]")
		sw.open = false
	}
}

func (sw *sectionWriter) record(v any) error {
	if sw.n > 0 {
		sw.bw.WriteByte(',')
	}
	sw.n++
	if err := sw.enc.Encode(v); err != nil {
		sw.err = err
		return err
	}
	return nil
}

func fromSession(s memory.Session) sessionRecord {
	return sessionRecord{ID: s.ID, Title: s.Title, SystemPrompt: s.SystemPrompt, Model: s.Model,
		Channel: s.Channel, Partner: s.Partner, Scope: s.Scope.String(),
		Created: s.Created.UTC(), Updated: s.Updated.UTC()}
}

func fromEvent(e memory.Event) eventRecord {
	r := eventRecord{ID: e.ID, Session: e.Session, TurnID: e.TurnID, Time: e.Time.UTC(), Role: string(e.Role),
		Content: e.Content, Reasoning: e.Reasoning, ToolCalls: e.ToolCalls, ToolCallID: e.ToolCallID,
		ToolName: e.ToolName, ToolStatus: e.ToolStatus, Channel: e.Channel, Partner: e.Partner, Scene: e.Scene,
		Scope: e.Scope.String(), Tokens: e.Tokens, Meta: e.Meta, Layer: int(e.Layer), Accesses: e.Accesses,
		LastAccess: utc(e.LastAccess), Distilled: e.Distilled, Parent: e.Parent, OffBranch: e.OffBranch}
	for _, b := range e.Blocks {
		r.Blocks = append(r.Blocks, b.ID)
	}
	return r
}

func fromBlock(b memory.Block) blockRecord {
	return blockRecord{ID: b.ID, Kind: string(b.Kind), Name: b.Name, MIME: b.MIME, Text: b.Text, Data: b.Data,
		Size: b.Size, Scope: b.Scope.String(), Layer: int(b.Holder.Layer), Event: b.Holder.Event,
		Entity: b.Holder.Entity, Created: b.Created.UTC()}
}

func fromEntity(e memory.Entity) entityRecord {
	return entityRecord{ID: e.ID, Name: e.Name, Kind: e.Kind, Block: e.BlockID, Scope: e.Scope.String(),
		Pinned: e.Pinned, Origin: e.Origin, Created: e.Created.UTC(), Updated: e.Updated.UTC(),
		LastRecalled: utc(e.LastRecalled)}
}

func fromTriple(t memory.Triple) tripleRecord {
	return tripleRecord{ID: t.ID, Subject: t.Subject, Predicate: t.Predicate, Object: t.Object,
		ValidFrom: utc(t.ValidFrom), ValidTo: utc(t.ValidTo), Sources: t.Sources, Scope: t.Scope.String(),
		Pinned: t.Pinned, SupersededBy: t.SupersededBy, Origin: t.Origin, Created: t.Created.UTC()}
}

func fromScene(s memory.Scene) sceneRecord {
	f := s.Features
	if f == nil {
		f = map[string]float64{}
	}
	return sceneRecord{ID: s.ID, Key: s.Key, Declared: s.Declared, Features: f, Strength: s.Strength,
		Occurrences: s.Occurrences, Seen: s.Seen.UTC(), Created: s.Created.UTC()}
}

// utc is t in UTC, the zero time staying zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
