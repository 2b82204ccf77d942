package clienttest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// The fake's memory export and import.

// fakeBackup is the fake's JSON export.
type fakeBackup struct {
	Version  int             `json:"version"`
	Entities []client.Entity `json:"entities"`
	Triples  []client.Triple `json:"triples"`
	Scenes   []client.Scene  `json:"scenes"`
}

// mcpRecord is one line of the MCP memory server's JSONL format.
type mcpRecord struct {
	Type         string   `json:"type"`
	Name         string   `json:"name,omitempty"`
	EntityType   string   `json:"entityType,omitempty"`
	Observations []string `json:"observations,omitempty"`
	From         string   `json:"from,omitempty"`
	To           string   `json:"to,omitempty"`
	RelationType string   `json:"relationType,omitempty"`
}

func (f *Fake) export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !checkQuery(w, q, "format", "include_secrets") {
		return
	}
	format := q.Get("format")
	if format == "" {
		format = client.FormatJSON
	}
	types := map[string]string{client.FormatJSON: "application/json", client.FormatJSONL: "application/x-ndjson",
		client.FormatMarkdown: "application/x-tar"}
	ct, ok := types[format]
	if !ok {
		WriteError(w, http.StatusBadRequest, "format must be json, jsonl or markdown, got "+strconv.Quote(format))
		return
	}
	f.mu.Lock()
	g := f.g()
	body, canned := g.exports[format]
	ents, triples := g.sortedEntities(), g.sortedTriples()
	scenes := append([]client.Scene{}, g.scenes...)
	f.mu.Unlock()
	if !canned {
		var buf bytes.Buffer
		switch format {
		case client.FormatJSON:
			_ = json.NewEncoder(&buf).Encode(fakeBackup{Version: 1, Entities: ents, Triples: triples, Scenes: scenes})
		case client.FormatJSONL:
			enc := json.NewEncoder(&buf)
			for _, e := range ents {
				rec := mcpRecord{Type: "entity", Name: e.Name, EntityType: e.Kind, Observations: []string{}}
				if e.Text != "" {
					rec.Observations = []string{e.Text}
				}
				_ = enc.Encode(rec)
			}
			for _, t := range triples {
				if current(t) {
					_ = enc.Encode(mcpRecord{Type: "relation", From: t.SubjectName, To: t.ObjectName, RelationType: t.Predicate})
				}
			}
		case client.FormatMarkdown:
			tw := tar.NewWriter(&buf)
			for _, e := range ents {
				md := "# " + e.Name + "\n\nkind: " + e.Kind + "\n\n" + e.Text + "\n"
				for _, t := range triples {
					if t.Subject == e.ID && current(t) {
						md += "\n- " + t.Predicate + " " + t.ObjectName
					}
				}
				name := "entities/" + strings.NewReplacer("/", "_", "\\", "_").Replace(e.Name) + ".md"
				_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(md)), ModTime: e.Updated, Typeflag: tar.TypeReg})
				_, _ = tw.Write([]byte(md))
			}
			_ = tw.Close()
		}
		body = buf.Bytes()
	}
	w.Header().Set("Content-Type", ct)
	ext := map[string]string{client.FormatJSON: "json", client.FormatJSONL: "jsonl", client.FormatMarkdown: "tar"}[format]
	w.Header().Set("Content-Disposition", `attachment; filename="hologram-memory.`+ext+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (f *Fake) importMemory(w http.ResponseWriter, r *http.Request, body []byte) {
	q := r.URL.Query()
	if !checkQuery(w, q, "format") {
		return
	}
	format := q.Get("format")
	if format == "" {
		format = client.FormatJSON
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.g()
	var rep client.ImportReport
	switch format {
	case client.FormatJSON:
		var b fakeBackup
		if err := json.Unmarshal(body, &b); err != nil {
			WriteError(w, http.StatusBadRequest, "import json: "+err.Error())
			return
		}
		if len(g.entities) > 0 {
			WriteError(w, http.StatusBadRequest, "import json: memory is not empty")
			return
		}
		for _, e := range b.Entities {
			e := e
			g.entities[e.ID] = &e
			g.nextID = max(g.nextID, e.ID)
			rep.Entities++
		}
		for _, t := range b.Triples {
			t := t
			g.triples[t.ID] = &t
			g.nextID = max(g.nextID, t.ID)
			rep.Triples++
		}
		g.scenes = append(g.scenes, b.Scenes...)
		rep.Scenes = len(b.Scenes)
	case client.FormatJSONL:
		sc := bufio.NewScanner(bytes.NewReader(body))
		for line := 1; sc.Scan(); line++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var rec mcpRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				WriteError(w, http.StatusBadRequest, fmt.Sprintf("import jsonl: line %d: %v", line, err))
				return
			}
			switch rec.Type {
			case "entity":
				if g.byName(rec.Name) != nil {
					rep.Skipped++
					continue
				}
				f.newEntity(rec.Name, rec.EntityType, strings.Join(rec.Observations, "\n"), "", "import")
				rep.Entities++
			case "relation":
				if s, o := g.byName(rec.From), g.byName(rec.To); s != nil && o != nil && slices.ContainsFunc(g.sortedTriples(), func(t client.Triple) bool {
					return current(t) && t.Subject == s.ID && t.Object == o.ID && t.Predicate == rec.RelationType
				}) {
					rep.Skipped++
					continue
				}
				before := len(g.entities)
				f.storeTriple(client.TripleInput{Subject: rec.From, Predicate: rec.RelationType, Object: rec.To}, nil, "import")
				rep.Entities += len(g.entities) - before // entities a relation names are created when missing
				rep.Triples++
			default:
				WriteError(w, http.StatusBadRequest, fmt.Sprintf("import jsonl: line %d: unknown type %q", line, rec.Type))
				return
			}
		}
	default:
		WriteError(w, http.StatusBadRequest, "format must be json or jsonl, got "+strconv.Quote(format))
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
