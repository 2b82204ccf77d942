package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
)

// mcpLine is a line of the MCP memory server's file, either kind.
type mcpLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name,omitempty"`
	EntityType   string   `json:"entityType,omitempty"`
	Observations []string `json:"observations,omitempty"`
	From         string   `json:"from,omitempty"`
	To           string   `json:"to,omitempty"`
	RelationType string   `json:"relationType,omitempty"`
}

func parseJSONL(t *testing.T, doc []byte) []mcpLine {
	t.Helper()
	var out []mcpLine
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		var l mcpLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func TestExportJSONL(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	fill(t, s)
	var buf bytes.Buffer
	if err := backup.ExportJSONL(ctx, s, &buf); err != nil {
		t.Fatal(err)
	}
	lines := parseJSONL(t, buf.Bytes())
	ents := map[string]mcpLine{}
	var rels []string
	for _, l := range lines {
		switch l.Type {
		case "entity":
			ents[l.Name] = l
		case "relation":
			rels = append(rels, l.From+" | "+l.RelationType+" | "+l.To)
		default:
			t.Errorf("line of type %q", l.Type)
		}
	}
	if got := ents["Project X"]; got.EntityType != "project" || !reflect.DeepEqual(got.Observations, []string{"first line", "second line"}) {
		t.Errorf("Project X = %+v, want kind project and two observations", got)
	}
	if got := ents["Alice"]; got.EntityType != "person" || len(got.Observations) != 1 || !strings.Contains(got.Observations[0], "Oberkampf") {
		t.Errorf("Alice = %+v", got)
	}
	// Entities without text still have an observations array.
	if !bytes.Contains(buf.Bytes(), []byte(`{"type":"entity","name":"Berlin","entityType":"place","observations":[]}`)) {
		t.Errorf("Berlin's line is not the server's shape:\n%s", buf.Bytes())
	}
	slices.Sort(rels)
	want := []string{"Alice | knows | Bob", "Alice | likes | tea", "Alice | lives in | Berlin", "Bob | likes | hiking"}
	if !reflect.DeepEqual(rels, want) {
		t.Errorf("relations = %q, want only the current triples %q", rels, want)
	}
}

func TestImportJSONL(t *testing.T) {
	ctx := context.Background()
	doc := `{"type":"entity","name":"Alice","entityType":"Person","observations":["likes tea","speaks\nFrench"]}
{"type":"entity","name":"Acme","entityType":"organization","observations":[]}

{"type":"relation","from":"Alice","to":"Acme","relationType":"works_with"}
{"type":"relation","from":"Alice","to":"Carol","relationType":"knows"}
`
	s := openStore(t)
	rep, err := backup.ImportJSONL(ctx, s, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want := (backup.Report{Entities: 2, Triples: 2}); rep != want {
		t.Errorf("first import: %+v, want %+v", rep, want)
	}
	alice := entityNamed(t, s, "alice")
	if alice.Kind != "person" || alice.Text != "likes tea\nspeaks French" || alice.Origin != "import" {
		t.Errorf("Alice = %+v", alice)
	}
	if carol := entityNamed(t, s, "Carol"); carol.Origin != "import" {
		t.Errorf("Carol (named only by a relation) = %+v", carol)
	}
	ts, err := s.Triples(ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, Entity: alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range ts {
		got = append(got, tr.SubjectName+" | "+tr.Predicate+" | "+tr.ObjectName+" | "+tr.Origin)
	}
	slices.Sort(got)
	if want := []string{"Alice | knows | Carol | import", "Alice | works with | Acme | import"}; !reflect.DeepEqual(got, want) {
		t.Errorf("triples = %q, want %q", got, want)
	}

	// The same file again adds nothing; new observations merge into the existing text.
	rep, err = backup.ImportJSONL(ctx, s, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want := (backup.Report{Skipped: 4}); rep != want {
		t.Errorf("second import: %+v, want %+v", rep, want)
	}
	more := `{"type":"entity","name":"ALICE","entityType":"person","observations":["likes tea","plays go"]}` + "\n"
	if rep, err = backup.ImportJSONL(ctx, s, strings.NewReader(more)); err != nil || rep != (backup.Report{Skipped: 1}) {
		t.Fatalf("merge: %+v, %v", rep, err)
	}
	if a := entityNamed(t, s, "alice"); a.Text != "likes tea\nspeaks French\nplays go" {
		t.Errorf("merged text = %q", a.Text)
	}
}

func entityNamed(t *testing.T, s memory.Graph, name string) memory.Entity {
	t.Helper()
	es, err := s.Entities(context.Background(), memory.EntityQuery{Viewer: memory.OwnerViewer, Name: name})
	if err != nil || len(es) != 1 {
		t.Fatalf("entities named %q: %+v, %v", name, es, err)
	}
	return es[0]
}

func TestImportJSONLMalformed(t *testing.T) {
	good := `{"type":"entity","name":"Alice","entityType":"person","observations":["x"]}` + "\n"
	cases := []struct{ name, line, want string }{
		{"not json", `{"type":"entity",`, "line 3: invalid JSON"},
		{"no type", `{"name":"Bob"}`, `line 3: no "type"`},
		{"unknown type", `{"type":"node","name":"Bob"}`, `line 3: unknown type "node"`},
		{"entity without name", `{"type":"entity","entityType":"person"}`, `line 3: entity without a "name"`},
		{"observations not strings", `{"type":"entity","name":"Bob","observations":[1]}`, "line 3: invalid JSON"},
		{"relation without to", `{"type":"relation","from":"Alice","relationType":"knows"}`, `line 3: relation without "to"`},
		{"relation without type", `{"type":"relation","from":"Alice","to":"Bob","relationType":"  "}`, `line 3: relation without "relationType"`},
		{"two values", `{"type":"entity","name":"Bob"} {}`, "line 3: more than one JSON value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			doc := good + "\n" + tc.line + "\n" + `{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}` + "\n"
			_, err := backup.ImportJSONL(context.Background(), s, strings.NewReader(doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ImportJSONL = %v, want an error containing %q", err, tc.want)
			}
			es, err := s.Entities(context.Background(), memory.EntityQuery{Viewer: memory.OwnerViewer})
			if err != nil || len(es) != 0 {
				t.Errorf("after a malformed file the store has entities %+v (%v)", es, err)
			}
		})
	}
}
