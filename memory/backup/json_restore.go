package backup

// Restoring the full JSON backup (json.go writes it): a streaming, all-or-nothing reader.

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
