package backup

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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

// RestoreJSON reads a full backup written by [ExportJSON] from r and restores it into sink, which
// must be empty (the error wraps [ErrNotEmpty] otherwise). The document is decoded token by token
// and each record is written as it is read, all in one transaction: a malformed or truncated
// document, or a bad record anywhere, restores nothing, and the error names the record
// ("events[41] (id 42): …"). Settings pass through opts.Secrets.
func RestoreJSON(ctx context.Context, sink Sink, r io.Reader, opts Options) (Report, error) {
	rs, err := sink.BeginRestore(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("restore: %w", err)
	}
	defer rs.Rollback()
	rd := &restoreReader{dec: json.NewDecoder(bufio.NewReaderSize(r, 64<<10)), rs: rs, opts: opts}
	rd.dec.DisallowUnknownFields()
	if err := rd.document(ctx); err != nil {
		return Report{}, fmt.Errorf("restore: %w", err)
	}
	if err := rs.Commit(); err != nil {
		return Report{}, fmt.Errorf("restore: %w", err)
	}
	return rd.rep, nil
}

// restoreReader walks a backup document.
type restoreReader struct {
	dec  *json.Decoder
	rs   Restorer
	opts Options
	rep  Report
}

// document reads {header fields…, sections…} and the end of the input.
func (rd *restoreReader) document(ctx context.Context) error {
	if err := rd.delim('{', "the start of the backup"); err != nil {
		return err
	}
	var h header
	seen := map[string]bool{}
	for rd.dec.More() {
		key, err := rd.key()
		if err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("backup has %q twice", key)
		}
		seen[key] = true
		switch key {
		case "format":
			err = rd.value(&h.Format, key)
		case "version":
			err = rd.value(&h.Version, key)
		case "created":
			err = rd.value(&h.Created, key)
		case "schema":
			err = rd.value(&h.Schema, key)
		case secSessions, secEvents, secBlocks, secEntities, secTriples, secScenes, secSettings:
			if h.Format != Format || h.Version == 0 {
				return fmt.Errorf("not a hologram backup: section %q before the header (format %q, version %d)", key, h.Format, h.Version)
			}
			err = rd.section(ctx, key)
		default:
			return fmt.Errorf("unknown field %q in the backup (at byte %d)", key, rd.dec.InputOffset())
		}
		if err != nil {
			return err
		}
		if key == "format" && h.Format != Format {
			return fmt.Errorf("not a hologram backup (format %q, want %q)", h.Format, Format)
		}
		if key == "version" && h.Version != Version {
			return fmt.Errorf("backup version %d is not supported (this binary reads version %d)", h.Version, Version)
		}
	}
	if err := rd.delim('}', "the end of the backup"); err != nil {
		return err
	}
	if h.Format != Format {
		return fmt.Errorf("not a hologram backup (format %q, want %q)", h.Format, Format)
	}
	for _, sec := range []string{secSessions, secEvents, secBlocks, secEntities, secTriples, secScenes, secSettings} {
		if !seen[sec] {
			return fmt.Errorf("backup is incomplete: no %q section", sec)
		}
	}
	if tok, err := rd.dec.Token(); err != io.EOF {
		if err != nil {
			return fmt.Errorf("backup is corrupt after its end (byte %d): %w", rd.dec.InputOffset(), err)
		}
		return fmt.Errorf("backup is corrupt: data after its end (%v at byte %d)", tok, rd.dec.InputOffset())
	}
	return nil
}

// delim reads one delimiter token.
func (rd *restoreReader) delim(want json.Delim, what string) error {
	tok, err := rd.dec.Token()
	if err != nil {
		return rd.syntax(err, what)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("backup is corrupt: want %q at %s, found %v (byte %d)", want, what, tok, rd.dec.InputOffset())
	}
	return nil
}

// key reads an object key.
func (rd *restoreReader) key() (string, error) {
	tok, err := rd.dec.Token()
	if err != nil {
		return "", rd.syntax(err, "a field name")
	}
	k, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("backup is corrupt: want a field name, found %v (byte %d)", tok, rd.dec.InputOffset())
	}
	return k, nil
}

// value decodes one header value.
func (rd *restoreReader) value(v any, what string) error {
	if err := rd.dec.Decode(v); err != nil {
		return rd.syntax(err, fmt.Sprintf("%q", what))
	}
	return nil
}

// syntax explains a decoding error: truncation or corruption, and where.
func (rd *restoreReader) syntax(err error, where string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("backup is truncated (ends at byte %d, in %s)", rd.dec.InputOffset(), where)
	}
	return fmt.Errorf("backup is corrupt at byte %d, in %s: %w", rd.dec.InputOffset(), where, err)
}

// section reads one array of records and writes each to the restorer.
func (rd *restoreReader) section(ctx context.Context, name string) error {
	if err := rd.delim('[', fmt.Sprintf("the start of %q", name)); err != nil {
		return err
	}
	for i := 0; rd.dec.More(); i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		where := fmt.Sprintf("%s[%d]", name, i)
		var id any
		var err error
		switch name {
		case secSessions:
			var r sessionRecord
			if err = rd.record(&r, where); err == nil {
				id = r.ID
				err = rd.session(r)
			}
		case secEvents:
			var r eventRecord
			if err = rd.record(&r, where); err == nil {
				id = r.ID
				err = rd.event(r)
			}
		case secBlocks:
			var r blockRecord
			if err = rd.record(&r, where); err == nil {
				id = r.ID
				err = rd.block(r)
			}
		case secEntities:
			var r entityRecord
			if err = rd.record(&r, where); err == nil {
				id = r.ID
				err = rd.entity(r)
			}
		case secTriples:
			var r tripleRecord
			if err = rd.record(&r, where); err == nil {
				id = r.ID
				err = rd.triple(r)
			}
		case secScenes:
			var r sceneRecord
			if err = rd.record(&r, where); err == nil {
				id = r.ID
				err = rd.scene(r)
			}
		case secSettings:
			var r settingRecord
			if err = rd.record(&r, where); err == nil {
				id = r.Key
				err = rd.setting(r)
			}
		}
		if err != nil {
			if id != nil {
				return fmt.Errorf("%s (id %v): %w", where, id, err)
			}
			return err
		}
	}
	return rd.delim(']', fmt.Sprintf("the end of %q", name))
}

// record decodes one record; a decoding error names it.
func (rd *restoreReader) record(v any, where string) error {
	if err := rd.dec.Decode(v); err != nil {
		return rd.syntax(err, where)
	}
	return nil
}

func parseScope(s string) (memory.Scope, error) {
	sc, err := memory.ParseScope(s)
	if err != nil {
		return memory.Scope{}, err
	}
	if err := sc.Validate(); err != nil {
		return memory.Scope{}, err
	}
	return sc, nil
}

// needTimes fails unless every time given (name, value, name, value…) is set.
func needTimes(kv ...any) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if t, _ := kv[i+1].(time.Time); t.IsZero() {
			return fmt.Errorf("%q is missing: %w", kv[i], memory.ErrInvalid)
		}
	}
	return nil
}

func (rd *restoreReader) session(r sessionRecord) error {
	sc, err := parseScope(r.Scope)
	if err != nil {
		return err
	}
	if err := needTimes("created", r.Created, "updated", r.Updated); err != nil {
		return err
	}
	s := memory.Session{ID: r.ID, Title: r.Title, SystemPrompt: r.SystemPrompt, Model: r.Model,
		Channel: r.Channel, Partner: r.Partner, Scope: sc, Created: r.Created, Updated: r.Updated}
	if err := memory.ValidateSession(s); err != nil {
		return err
	}
	if err := rd.rs.Session(s); err != nil {
		return err
	}
	rd.rep.Sessions++
	return nil
}

func (rd *restoreReader) event(r eventRecord) error {
	sc, err := parseScope(r.Scope)
	if err != nil {
		return err
	}
	e := memory.Event{ID: r.ID, Session: r.Session, TurnID: r.TurnID, Time: r.Time, Role: memory.Role(r.Role),
		Content: r.Content, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls, ToolCallID: r.ToolCallID,
		ToolName: r.ToolName, ToolStatus: r.ToolStatus, Channel: r.Channel, Partner: r.Partner, Scene: r.Scene,
		Scope: sc, Tokens: r.Tokens, Meta: r.Meta, Layer: memory.Layer(r.Layer), Accesses: r.Accesses,
		LastAccess: r.LastAccess, Distilled: r.Distilled, Parent: r.Parent, OffBranch: r.OffBranch}
	if e.ID <= 0 {
		return fmt.Errorf("event id %d is not positive: %w", e.ID, memory.ErrInvalid)
	}
	if err := memory.ValidateEvent(e); err != nil {
		return err
	}
	if e.Layer != memory.LayerL1 && e.Layer != memory.LayerL2 {
		return fmt.Errorf("event layer %d is not 1 or 2: %w", r.Layer, memory.ErrInvalid)
	}
	if err := needTimes("time", r.Time); err != nil {
		return err
	}
	for _, id := range r.Blocks {
		e.Blocks = append(e.Blocks, memory.Block{ID: id})
	}
	if err := rd.rs.Event(e); err != nil {
		return err
	}
	rd.rep.Events++
	return nil
}

func (rd *restoreReader) block(r blockRecord) error {
	sc, err := parseScope(r.Scope)
	if err != nil {
		return err
	}
	if r.ID == "" {
		return fmt.Errorf("block without an id: %w", memory.ErrInvalid)
	}
	if err := needTimes("created", r.Created); err != nil {
		return err
	}
	switch memory.BlockKind(r.Kind) {
	case memory.BlockText, memory.BlockImage, memory.BlockAudio:
	default:
		return fmt.Errorf("block kind %q is not text, image or audio: %w", r.Kind, memory.ErrInvalid)
	}
	h := memory.BlockHolder{Layer: memory.Layer(r.Layer), Event: r.Event, Entity: r.Entity}
	switch {
	case (h.Layer == memory.LayerL1 || h.Layer == memory.LayerL2) && h.Event > 0 && h.Entity == 0:
	case h.Layer == memory.LayerL3 && h.Entity > 0 && h.Event == 0:
	default:
		return fmt.Errorf("block holder (layer %d, event %d, entity %d) is not an event in L1/L2 or an entity in L3: %w",
			r.Layer, r.Event, r.Entity, memory.ErrInvalid)
	}
	b := memory.Block{ID: r.ID, Kind: memory.BlockKind(r.Kind), Name: r.Name, MIME: r.MIME, Text: r.Text,
		Data: r.Data, Size: r.Size, Scope: sc, Holder: h, Created: r.Created}
	if err := rd.rs.Block(b); err != nil {
		return err
	}
	rd.rep.Blocks++
	return nil
}

func (rd *restoreReader) entity(r entityRecord) error {
	sc, err := parseScope(r.Scope)
	if err != nil {
		return err
	}
	if r.ID <= 0 || r.Name == "" {
		return fmt.Errorf("entity needs a positive id and a name: %w", memory.ErrInvalid)
	}
	if err := needTimes("created", r.Created, "updated", r.Updated); err != nil {
		return err
	}
	e := memory.Entity{ID: r.ID, Name: r.Name, Kind: r.Kind, BlockID: r.Block, Scope: sc, Pinned: r.Pinned,
		Origin: r.Origin, Created: r.Created, Updated: r.Updated, LastRecalled: r.LastRecalled}
	if err := rd.rs.Entity(e); err != nil {
		return err
	}
	rd.rep.Entities++
	return nil
}

func (rd *restoreReader) triple(r tripleRecord) error {
	sc, err := parseScope(r.Scope)
	if err != nil {
		return err
	}
	if r.ID <= 0 || r.Predicate == "" {
		return fmt.Errorf("triple needs a positive id and a predicate: %w", memory.ErrInvalid)
	}
	if err := needTimes("created", r.Created); err != nil {
		return err
	}
	t := memory.Triple{ID: r.ID, Subject: r.Subject, Predicate: r.Predicate, Object: r.Object,
		ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, Sources: r.Sources, Scope: sc, Pinned: r.Pinned,
		SupersededBy: r.SupersededBy, Origin: r.Origin, Created: r.Created}
	if err := rd.rs.Triple(t); err != nil {
		return err
	}
	rd.rep.Triples++
	return nil
}

func (rd *restoreReader) scene(r sceneRecord) error {
	if r.ID <= 0 || r.Key == "" {
		return fmt.Errorf("scene needs a positive id and a key: %w", memory.ErrInvalid)
	}
	if err := needTimes("seen", r.Seen, "created", r.Created); err != nil {
		return err
	}
	s := memory.Scene{ID: r.ID, Key: r.Key, Declared: r.Declared, Features: r.Features, Strength: r.Strength,
		Occurrences: r.Occurrences, Seen: r.Seen, Created: r.Created}
	if err := rd.rs.Scene(s); err != nil {
		return err
	}
	rd.rep.Scenes++
	return nil
}

func (rd *restoreReader) setting(r settingRecord) error {
	if r.Key == "" {
		return fmt.Errorf("setting without a key: %w", memory.ErrInvalid)
	}
	v := r.Value
	if rd.opts.Secrets != nil {
		var err error
		if v, err = rd.opts.Secrets.Import(r.Key, r.Value, r.Secret); err != nil {
			return err
		}
	} else if r.Secret {
		return errors.New("the setting is a secret in clear text, and no Secrets to seal it with were given")
	}
	if err := rd.rs.Setting(r.Key, v); err != nil {
		return err
	}
	rd.rep.Settings++
	return nil
}
