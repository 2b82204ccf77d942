package backup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// jsonlEntity and jsonlRelation are the lines of the MCP memory server's file
// (@modelcontextprotocol/server-memory, MEMORY_FILE_PATH), field for field and in its order.
type jsonlEntity struct {
	Type         string   `json:"type"` // "entity"
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type jsonlRelation struct {
	Type         string `json:"type"` // "relation"
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// jsonlLine is any line, as read.
type jsonlLine struct {
	Type         string    `json:"type"`
	Name         *string   `json:"name"`
	EntityType   *string   `json:"entityType"`
	Observations *[]string `json:"observations"`
	From         *string   `json:"from"`
	To           *string   `json:"to"`
	RelationType *string   `json:"relationType"`
}

// importOrigin is the origin of what an import creates.
const importOrigin = "import"

// ExportJSONL writes the graph of src in the MCP memory server's JSONL format: one line per
// entity, {"type":"entity","name":…,"entityType":kind,"observations":[the non-empty lines of
// its text]}, then one line per current triple, {"type":"relation","from":subject name,
// "to":object name,"relationType":predicate}. Superseded and ended triples, events, blocks and
// scopes are not part of that format.
func ExportJSONL(ctx context.Context, src Source, w io.Writer) (err error) {
	snap, err := src.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("export jsonl: %w", err)
	}
	defer func() {
		if cerr := snap.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("export jsonl: %w", cerr)
		}
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := snap.Entities(ctx, func(e memory.Entity) error {
		return enc.Encode(jsonlEntity{Type: "entity", Name: e.Name, EntityType: e.Kind, Observations: observations(e.Text)})
	}); err != nil {
		return fmt.Errorf("export jsonl: entities: %w", err)
	}
	if err := snap.Triples(ctx, func(t memory.Triple) error {
		if !t.Current() {
			return nil
		}
		return enc.Encode(jsonlRelation{Type: "relation", From: t.SubjectName, To: t.ObjectName, RelationType: t.Predicate})
	}); err != nil {
		return fmt.Errorf("export jsonl: triples: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export jsonl: %w", err)
	}
	return nil
}

// observations are the non-empty lines of an entity's text, trimmed.
func observations(text string) []string {
	out := []string{}
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// observation is an observation as stored: one line, trimmed ("" is dropped).
func observation(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxJSONLLine bounds one line of a JSONL import.
const maxJSONLLine = 64 << 20

// ImportJSONL merges a file in the MCP memory server's JSONL format into g. Every line is
// validated first: a malformed one (not JSON, an unknown type, a missing name, from, to or
// relationType) fails the import, naming its line number, and nothing is imported. Blank lines
// are skipped.
//
// An entity is found by name (case-insensitive) and kind (its entityType, lower-cased; "thing"
// when empty). A missing one is created with origin "import", private, its observations as the
// lines of its text; an existing one counts as skipped and gains the observations its text does
// not have yet (an observation is one line: inner line breaks become spaces). A relation becomes a
// triple between the entities named (created when missing, the kind taken from the file's entity
// lines when it has them) through [memory.Graph.AddTriple] with origin "import"; one equal to a
// current triple counts as skipped.
func ImportJSONL(ctx context.Context, g memory.Graph, r io.Reader) (Report, error) {
	var ents []jsonlEntity
	var rels []jsonlRelation
	kinds := map[string]string{} // name key → kind of the file's first entity line with that name
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return Report{}, fmt.Errorf("import jsonl: line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			ent, rel, perr := parseJSONLLine(line)
			if perr != nil {
				return Report{}, fmt.Errorf("import jsonl: line %d: %w (nothing was imported)", n, perr)
			}
			if ent != nil {
				ents = append(ents, *ent)
				if _, ok := kinds[memory.NameKey(ent.Name)]; !ok {
					kinds[memory.NameKey(ent.Name)] = ent.EntityType
				}
			} else {
				rels = append(rels, *rel)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}

	var rep Report
	for _, je := range ents {
		created, err := mergeEntity(ctx, g, je)
		if err != nil {
			return rep, fmt.Errorf("import jsonl: entity %q: %w", je.Name, err)
		}
		if created {
			rep.Entities++
		} else {
			rep.Skipped++
		}
	}
	for _, jr := range rels {
		created, err := addRelation(ctx, g, jr, kinds)
		if err != nil {
			return rep, fmt.Errorf("import jsonl: relation %q %q %q: %w", jr.From, jr.RelationType, jr.To, err)
		}
		if created {
			rep.Triples++
		} else {
			rep.Skipped++
		}
	}
	return rep, nil
}

// readLine reads one line (without its end); io.EOF comes with the last line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxJSONLLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxJSONLLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// parseJSONLLine validates one line and returns it as an entity or a relation.
func parseJSONLLine(line []byte) (*jsonlEntity, *jsonlRelation, error) {
	var l jsonlLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&l); err != nil {
		return nil, nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, nil, errors.New("more than one JSON value on the line")
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch l.Type {
	case "entity":
		name := strings.TrimSpace(str(l.Name))
		if name == "" {
			return nil, nil, errors.New(`entity without a "name"`)
		}
		kind := strings.ToLower(strings.TrimSpace(str(l.EntityType)))
		if kind == "" {
			kind = "thing"
		}
		e := &jsonlEntity{Type: l.Type, Name: name, EntityType: kind}
		if l.Observations != nil {
			for _, o := range *l.Observations {
				if o = observation(o); o != "" {
					e.Observations = append(e.Observations, o)
				}
			}
		}
		return e, nil, nil
	case "relation":
		r := &jsonlRelation{Type: l.Type, From: strings.TrimSpace(str(l.From)), To: strings.TrimSpace(str(l.To)),
			RelationType: strings.TrimSpace(str(l.RelationType))}
		switch {
		case r.From == "":
			return nil, nil, errors.New(`relation without "from"`)
		case r.To == "":
			return nil, nil, errors.New(`relation without "to"`)
		case memory.NormalizePredicate(r.RelationType) == "":
			return nil, nil, errors.New(`relation without "relationType"`)
		}
		return nil, r, nil
	case "":
		return nil, nil, errors.New(`no "type" (want "entity" or "relation")`)
	}
	return nil, nil, fmt.Errorf(`unknown type %q (want "entity" or "relation")`, l.Type)
}

// findEntity returns the entity the graph resolves name and kind to (see
// [memory.Graph.AddTriple]): the one with the same name key and kind, else the single one with
// that name key where either kind is "thing".
func findEntity(ctx context.Context, g memory.Graph, name, kind string) (memory.Entity, bool, error) {
	es, err := g.Entities(ctx, memory.EntityQuery{Viewer: memory.OwnerViewer, Name: name, Limit: 10_000})
	if err != nil {
		return memory.Entity{}, false, err
	}
	key := memory.NameKey(name)
	var loose []memory.Entity
	for _, e := range es {
		if memory.NameKey(e.Name) != key {
			continue
		}
		if strings.EqualFold(e.Kind, kind) {
			return e, true, nil
		}
		if e.Kind == "thing" || kind == "thing" {
			loose = append(loose, e)
		}
	}
	if len(loose) == 1 {
		return loose[0], true, nil
	}
	return memory.Entity{}, false, nil
}

// mergeEntity creates an entity or adds the observations it lacks; created reports which.
func mergeEntity(ctx context.Context, g memory.Graph, je jsonlEntity) (created bool, err error) {
	e, ok, err := findEntity(ctx, g, je.Name, je.EntityType)
	if err != nil {
		return false, err
	}
	if !ok {
		_, err := g.PutEntity(ctx, memory.Entity{Name: je.Name, Kind: je.EntityType,
			Text: strings.Join(je.Observations, "\n"), Origin: importOrigin})
		return err == nil, err
	}
	have := map[string]bool{}
	for _, o := range observations(e.Text) {
		have[observation(o)] = true
	}
	var add []string
	for _, o := range je.Observations {
		if !have[o] {
			have[o] = true
			add = append(add, o)
		}
	}
	if len(add) == 0 {
		return false, nil
	}
	text := strings.TrimRight(e.Text, "\n")
	if text != "" {
		text += "\n"
	}
	e.Text = text + strings.Join(add, "\n")
	_, err = g.PutEntity(ctx, e)
	return false, err
}

// addRelation adds a relation as a triple; created is false when an equal current triple was
// there already.
func addRelation(ctx context.Context, g memory.Graph, jr jsonlRelation, kinds map[string]string) (created bool, err error) {
	f := memory.Fact{Subject: jr.From, SubjectKind: kinds[memory.NameKey(jr.From)], Predicate: jr.RelationType,
		Object: jr.To, ObjectKind: kinds[memory.NameKey(jr.To)]}
	// The subject's current triples before: AddTriple returns the existing triple for a fact
	// equal to one of them.
	before := map[int64]bool{}
	if subj, ok, err := findEntity(ctx, g, f.Subject, kindOr(f.SubjectKind)); err != nil {
		return false, err
	} else if ok {
		ts, err := g.Triples(ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, Entity: subj.ID, Limit: 20_000})
		if err != nil {
			return false, err
		}
		for _, t := range ts {
			before[t.ID] = true
		}
	}
	t, err := g.AddTriple(ctx, f, importOrigin, memory.Scope{})
	if err != nil {
		return false, err
	}
	return !before[t.ID], nil
}

func kindOr(kind string) string {
	if kind == "" {
		return "thing"
	}
	return kind
}
