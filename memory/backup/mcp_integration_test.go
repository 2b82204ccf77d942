//go:build integration

package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
)

const memoryServer = "@modelcontextprotocol/server-memory"

// memoryServerEntry finds node and the pinned server-memory package (plugins/testdata/npm,
// installed by `make npm-peers`). Missing, the test skips, or fails under HOLOGRAM_CI=1.
func memoryServerEntry(t *testing.T) (node, entry string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed (make deps installs nodejs and npm)")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = filepath.Dir(dir)
	}
	pkgDir := filepath.Join(dir, "plugins", "testdata", "npm", "node_modules", filepath.FromSlash(memoryServer))
	raw, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		missing("npm peer %s is not installed (%v): run `make npm-peers`", memoryServer, err)
	}
	var meta struct {
		Bin map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || len(meta.Bin) != 1 {
		t.Fatalf("%s: package.json bin: %v %v", memoryServer, meta.Bin, err)
	}
	for _, rel := range meta.Bin {
		entry = filepath.Join(pkgDir, filepath.FromSlash(rel))
	}
	return node, entry
}

// mcpSession is the memory server over stdio: newline-delimited JSON-RPC 2.0.
type mcpSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	id    int
	close func()
}

func startMemoryServer(t *testing.T, file string) *mcpSession {
	t.Helper()
	node, entry := memoryServerEntry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cmd := exec.CommandContext(ctx, node, entry)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	m := &mcpSession{t: t, cmd: cmd, in: in, out: sc}
	done := false
	m.close = func() {
		if done {
			return
		}
		done = true
		in.Close() // the server exits when its input ends
		if err := cmd.Wait(); err != nil {
			t.Errorf("memory server: %v\n%s", err, stderr.String())
		}
		cancel()
	}
	t.Cleanup(m.close)

	m.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "hologram-backup-test", "version": "0"},
	})
	m.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return m
}

func (m *mcpSession) send(msg any) {
	m.t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := m.in.Write(append(b, '\n')); err != nil {
		m.t.Fatal(err)
	}
}

// call sends a request and returns its result, skipping notifications.
func (m *mcpSession) call(method string, params any) json.RawMessage {
	m.t.Helper()
	m.id++
	m.send(map[string]any{"jsonrpc": "2.0", "id": m.id, "method": method, "params": params})
	for m.out.Scan() {
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m.out.Bytes(), &resp); err != nil {
			m.t.Fatalf("%s: bad response %q: %v", method, m.out.Text(), err)
		}
		if resp.ID == nil || *resp.ID != m.id {
			continue
		}
		if resp.Error != nil {
			m.t.Fatalf("%s: error %d %s", method, resp.Error.Code, resp.Error.Message)
		}
		return resp.Result
	}
	m.t.Fatalf("%s: server closed its output: %v", method, m.out.Err())
	return nil
}

// tool calls a tool and returns its structured content.
func (m *mcpSession) tool(name string, args any) json.RawMessage {
	m.t.Helper()
	var res struct {
		IsError           bool            `json:"isError"`
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(m.call("tools/call", map[string]any{"name": name, "arguments": args}), &res); err != nil {
		m.t.Fatal(err)
	}
	if res.IsError {
		m.t.Fatalf("tool %s failed: %s", name, res.Content)
	}
	return res.StructuredContent
}

type mcpEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type mcpRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

type mcpGraph struct {
	Entities  []mcpEntity   `json:"entities"`
	Relations []mcpRelation `json:"relations"`
}

func (g mcpGraph) sorted() mcpGraph {
	slices.SortFunc(g.Entities, func(a, b mcpEntity) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(g.Relations, func(a, b mcpRelation) int {
		return strings.Compare(a.From+"\x00"+a.RelationType+"\x00"+a.To, b.From+"\x00"+b.RelationType+"\x00"+b.To)
	})
	for i := range g.Entities {
		if g.Entities[i].Observations == nil {
			g.Entities[i].Observations = []string{}
		}
	}
	return g
}

// TestJSONLWithMCPMemoryServer exchanges files with the real @modelcontextprotocol/server-memory:
// what it writes imports whole, and what we export it reads back as the same graph.
func TestJSONLWithMCPMemoryServer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	theirs := filepath.Join(dir, "theirs.jsonl")
	srv := startMemoryServer(t, theirs)
	srv.tool("create_entities", map[string]any{"entities": []mcpEntity{
		{Name: "Alice", EntityType: "person", Observations: []string{"likes green tea", "speaks French"}},
		{Name: "Bob", EntityType: "person", Observations: []string{"plays the cello"}},
		{Name: "Acme Corp", EntityType: "organization", Observations: []string{}},
		{Name: "北京", EntityType: "place", Observations: []string{"首都"}},
	}})
	srv.tool("create_relations", map[string]any{"relations": []mcpRelation{
		{From: "Alice", To: "Bob", RelationType: "knows"},
		{From: "Bob", To: "Acme Corp", RelationType: "works with"},
		{From: "Alice", To: "北京", RelationType: "visited"},
	}})
	srv.tool("add_observations", map[string]any{"observations": []map[string]any{
		{"entityName": "Alice", "contents": []string{"runs marathons"}},
		{"entityName": "Acme Corp", "contents": []string{"makes anvils", "founded in 1949"}},
	}})
	var want mcpGraph
	if err := json.Unmarshal(srv.tool("read_graph", map[string]any{}), &want); err != nil {
		t.Fatal(err)
	}
	srv.close()
	want = want.sorted()
	if len(want.Entities) != 4 || len(want.Relations) != 3 {
		t.Fatalf("the server's graph: %+v", want)
	}

	// Import the server's file into a real store.
	s := openStore(t)
	f, err := os.Open(theirs)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := backup.ImportJSONL(ctx, s, f)
	f.Close()
	if err != nil {
		t.Fatalf("ImportJSONL(server's file): %v", err)
	}
	if rep != (backup.Report{Entities: 4, Triples: 3}) {
		t.Errorf("import report %+v", rep)
	}
	for _, e := range want.Entities {
		got := entityNamed(t, s, e.Name)
		if got.Kind != e.EntityType || got.Text != strings.Join(e.Observations, "\n") {
			t.Errorf("entity %s: kind %q text %q, want %q %q", e.Name, got.Kind, got.Text, e.EntityType, e.Observations)
		}
	}
	ts, err := s.Triples(ctx, memory.TripleQuery{Viewer: memory.OwnerViewer})
	if err != nil {
		t.Fatal(err)
	}
	var rels []mcpRelation
	for _, tr := range ts {
		rels = append(rels, mcpRelation{From: tr.SubjectName, To: tr.ObjectName, RelationType: tr.Predicate})
	}
	if got := (mcpGraph{Entities: want.Entities, Relations: rels}).sorted(); !reflect.DeepEqual(got.Relations, want.Relations) {
		t.Errorf("triples %+v, want %+v", got.Relations, want.Relations)
	}

	// Export from the store; a fresh server reads the same graph from our file.
	ours := filepath.Join(dir, "ours.jsonl")
	var buf bytes.Buffer
	if err := backup.ExportJSONL(ctx, s, &buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ours, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	srv2 := startMemoryServer(t, ours)
	var got mcpGraph
	if err := json.Unmarshal(srv2.tool("read_graph", map[string]any{}), &got); err != nil {
		t.Fatal(err)
	}
	srv2.close()
	if got = got.sorted(); !reflect.DeepEqual(got, want) {
		t.Errorf("the server reads our export as\n%+v\nwant\n%+v", got, want)
	}
}
