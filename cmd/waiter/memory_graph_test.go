package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// step is one waiter command of a scripted scenario and what must come of it.
type step struct {
	args     []string
	wantCode int
	wantOut  []string // substrings of stdout
	wantErr  string   // substring of stderr
	wantReq  string   // "METHOD /path" of the last request; "" when no request may be sent
	wantBody string   // substring of the last request's body
}

func runSteps(t *testing.T, f *clienttest.Fake, env map[string]string, steps []step) {
	t.Helper()
	for _, st := range steps {
		t.Run(strings.Join(st.args, " "), func(t *testing.T) {
			before := len(f.Requests())
			r := waiter(t, env, nil, st.args...)
			if r.code != st.wantCode {
				t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", r.code, st.wantCode, r.stdout, r.stderr)
			}
			for _, s := range st.wantOut {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, st.wantErr) {
				t.Errorf("stderr %q lacks %q", r.stderr, st.wantErr)
			}
			reqs := f.Requests()
			if st.wantReq == "" {
				if len(reqs) != before {
					t.Errorf("a refused command reached the kernel: %+v", reqs[before:])
				}
				return
			}
			if len(reqs) == before {
				t.Fatalf("no request reached the kernel")
			}
			last := reqs[len(reqs)-1]
			if got := last.Method + " " + last.Path; got != st.wantReq {
				t.Errorf("request %q, want %q", got, st.wantReq)
			}
			if !strings.Contains(last.Body, st.wantBody) {
				t.Errorf("request body %s lacks %s", last.Body, st.wantBody)
			}
		})
	}
}

func TestMemoryGraphCommands(t *testing.T) {
	f, env := kernel(t, false)
	f.AddBlocks(
		client.Block{ID: "b1", Kind: "text", Name: "recipe", Text: "咖啡 recipe", Size: 13, Scope: "private", HolderLayer: 2, HolderEvent: 9},
		client.Block{ID: "b2", Kind: "image", Name: "menu.png", MIME: "image/png", Size: 100, Scope: "private", HolderLayer: 2, HolderEvent: 9},
	)
	runSteps(t, f, env, []step{
		{args: []string{"memory", "graph"}, wantErr: "the graph is empty", wantReq: "GET /api/v1/memory/graph"},
		{args: []string{"memory", "entity", "add", "Alice", "--kind", "person", "--text", "喜欢咖啡", "--scope", "group:1"},
			wantOut: []string{"entity 1 added: Alice (person, group:1)\n"}, wantReq: "POST /api/v1/memory/entities",
			wantBody: `{"name":"Alice","kind":"person","text":"喜欢咖啡","scope":"group:1"}`},
		{args: []string{"memory", "triple", "add", "Alice", "lives in", "Paris", "--object-kind", "place"},
			wantOut: []string{"triple 3 added: Alice —lives in→ Paris\n"}, wantReq: "POST /api/v1/memory/triples",
			wantBody: `"object_kind":"place"`},
		{args: []string{"memory", "graph"}, wantOut: []string{
			"entities 2 of 2  triples 1\n",
			"ID", "NAME", "KIND", "SCOPE", "PINNED", "MENTIONS", "TEXT", "Alice", "person", "group:1", "喜欢咖啡", "Paris", "place",
			"SUBJECT", "PREDICATE", "OBJECT", "SINCE", "STATE", "SOURCES", "lives in", "current"},
			wantReq: "GET /api/v1/memory/graph"},
		{args: []string{"memory", "triple", "edit", "3", "Alice", "lives in", "Berlin"},
			wantOut: []string{"triple 3 superseded by 5: Alice —lives in→ Berlin\n"}, wantReq: "PUT /api/v1/memory/triples/3",
			wantBody: `"object":"Berlin"`},
		{args: []string{"memory", "graph", "--scope", "private"}, wantOut: []string{"entities 2 of 2  triples 1\n", "Berlin"},
			wantReq: "GET /api/v1/memory/graph?scope=private"},
		{args: []string{"memory", "graph", "--history"}, wantOut: []string{"triples 2", "superseded by 5", "current"},
			wantReq: "GET /api/v1/memory/graph?history=1"},
		{args: []string{"memory", "entity", "1"}, wantOut: []string{"entity 1: Alice\n", "kind", "person", "scope", "group:1",
			"recalled  never", "text:\n    喜欢咖啡\n", "Paris", "Berlin", "superseded by 5"}, wantReq: "GET /api/v1/memory/entities/1"},
		{args: []string{"memory", "pin", "entity", "1"}, wantOut: []string{"entity 1 pinned\n"}, wantReq: "POST /api/v1/memory/pin",
			wantBody: `{"kind":"entity","id":1,"pinned":true}`},
		{args: []string{"memory", "unpin", "triple", "5"}, wantOut: []string{"triple 5 unpinned\n"}, wantReq: "POST /api/v1/memory/pin",
			wantBody: `{"kind":"triple","id":5,"pinned":false}`},
		{args: []string{"memory", "pin", "block", "b1", "--entity", "1"}, wantOut: []string{"block b1 pinned to entity 1\n"},
			wantReq: "POST /api/v1/memory/pin", wantBody: `{"kind":"block","block":"b1","entity":1,"pinned":true}`},
		{args: []string{"memory", "pin", "block", "b2"}, wantOut: []string{"block b2 pinned as a new note\n"},
			wantReq: "POST /api/v1/memory/pin", wantBody: `{"kind":"block","block":"b2","pinned":true}`},
		{args: []string{"memory", "entity", "1"}, wantOut: []string{"pinned    yes", "BLOCK", "b1", "recipe", "咖啡 recipe"},
			wantReq: "GET /api/v1/memory/entities/1"},
		{args: []string{"memory", "entity", "edit", "1", "--text", "喜欢茶", "--name", "Alice B"},
			wantOut: []string{"entity 1 updated: Alice B (person, group:1)\n"}, wantReq: "PUT /api/v1/memory/entities/1",
			wantBody: `"text":"喜欢茶"`},
		{args: []string{"memory", "entity", "add", "Alicia"}, wantOut: []string{"entity 7 added: Alicia (thing, private)\n"},
			wantReq: "POST /api/v1/memory/entities"},
		{args: []string{"memory", "triple", "add", "Alicia", "likes", "tea", "--scope", "public", "--replaces"},
			wantOut: []string{"added: Alicia —likes→ tea"}, wantReq: "POST /api/v1/memory/triples",
			wantBody: `"replaces":true,"scope":"public"`},
		{args: []string{"memory", "merge", "1", "7"}, wantOut: []string{"entity 7 merged into 1: Alice B\n"},
			wantReq: "POST /api/v1/memory/entities/1/merge", wantBody: `{"from":7}`},
		{args: []string{"memory", "entity", "7"}, wantCode: 1, wantErr: "no entity 7 (HTTP 404)", wantReq: "GET /api/v1/memory/entities/7"},
		{args: []string{"memory", "entity", "1"}, wantOut: []string{"Alice B", "likes", "tea"}, wantReq: "GET /api/v1/memory/entities/1"},
		{args: []string{"memory", "entity", "delete", "1"}, wantOut: []string{"entity 1 deleted\n"}, wantReq: "DELETE /api/v1/memory/entities/1"},
		{args: []string{"memory", "entity", "delete", "1"}, wantCode: 1, wantErr: "(HTTP 404)", wantReq: "DELETE /api/v1/memory/entities/1"},
		{args: []string{"memory", "entity", "add", "Paris"}, wantCode: 1, wantErr: `an entity named "Paris" exists (id 2) (HTTP 409)`,
			wantReq: "POST /api/v1/memory/entities"},

		// Usage errors: exit 2, nothing sent.
		{args: []string{"memory", "entity"}, wantCode: 2, wantErr: "memory entity needs an entity id or a subcommand"},
		{args: []string{"memory", "entity", "Alice"}, wantCode: 2, wantErr: `entity id must be a positive integer, got "Alice"`},
		{args: []string{"memory", "entity", "0"}, wantCode: 2, wantErr: `entity id must be a positive integer, got "0"`},
		{args: []string{"memory", "entity", "add"}, wantCode: 2, wantErr: "usage: waiter memory entity add NAME"},
		{args: []string{"memory", "entity", "add", "Two", "Words"}, wantCode: 2, wantErr: "quote a name with spaces"},
		{args: []string{"memory", "entity", "add", "X", "--scope", "friends"}, wantCode: 2, wantErr: `--scope must be private, public or group:<id>, got "friends"`},
		{args: []string{"memory", "entity", "edit", "2"}, wantCode: 2, wantErr: "needs at least one of --name, --kind, --text and --scope"},
		{args: []string{"memory", "entity", "edit", "2", "--name", " "}, wantCode: 2, wantErr: "--name must not be empty"},
		{args: []string{"memory", "entity", "delete"}, wantCode: 2, wantErr: "usage: waiter memory entity delete ID"},
		{args: []string{"memory", "merge", "2"}, wantCode: 2, wantErr: "usage: waiter memory merge INTO FROM"},
		{args: []string{"memory", "merge", "2", "2"}, wantCode: 2, wantErr: "cannot merge entity 2 into itself"},
		{args: []string{"memory", "merge", "2", "x"}, wantCode: 2, wantErr: `FROM must be a positive integer, got "x"`},
		{args: []string{"memory", "triple"}, wantCode: 2, wantErr: "memory triple needs a subcommand: add or edit"},
		{args: []string{"memory", "triple", "add", "Alice", "likes"}, wantCode: 2, wantErr: "quote words with spaces"},
		{args: []string{"memory", "triple", "add", "Alice", " ", "tea"}, wantCode: 2, wantErr: "the triple's predicate is empty"},
		{args: []string{"memory", "triple", "edit", "x", "a", "b", "c"}, wantCode: 2, wantErr: `triple id must be a positive integer, got "x"`},
		{args: []string{"memory", "triple", "drop", "3"}, wantCode: 2, wantErr: `unknown memory triple subcommand "drop"`},
		{args: []string{"memory", "pin"}, wantCode: 2, wantErr: "usage: waiter memory pin entity|triple ID"},
		{args: []string{"memory", "pin", "scene", "3"}, wantCode: 2, wantErr: `kind must be entity, triple or block, got "scene"`},
		{args: []string{"memory", "pin", "entity"}, wantCode: 2, wantErr: "usage: waiter memory pin entity ID"},
		{args: []string{"memory", "unpin", "block", "b1"}, wantCode: 2, wantErr: "a block cannot be unpinned"},
		{args: []string{"memory", "unpin", "entity", "2", "--entity", "3"}, wantCode: 2, wantErr: "flag provided but not defined: -entity"},
		{args: []string{"memory", "pin", "block", "b1", "--entity", "0"}, wantCode: 2, wantErr: "--entity must be a positive integer, got 0"},
		{args: []string{"memory", "graph", "--limit", "0"}, wantCode: 2, wantErr: "--limit must be from 1 to 10000, got 0"},
		{args: []string{"memory", "graph", "--scope", "group:"}, wantCode: 2, wantErr: "--scope must be private, public or group:<id>"},
		{args: []string{"memory", "graph", "extra"}, wantCode: 2, wantErr: "memory graph takes no arguments"},
	})
}

func TestMemoryGraphJSONAndPaging(t *testing.T) {
	f, env := kernel(t, false)
	f.SetGraphPageSize(2)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if r := waiter(t, env, nil, "memory", "entity", "add", name); r.code != 0 {
			t.Fatalf("entity add: %+v", r)
		}
	}
	for _, tr := range [][]string{{"a", "knows", "e"}, {"b", "knows", "c"}} {
		if r := waiter(t, env, nil, append([]string{"memory", "triple", "add"}, tr...)...); r.code != 0 {
			t.Fatalf("triple add: %+v", r)
		}
	}
	graphRequests := func(from int) []string {
		var out []string
		for _, r := range f.Requests()[from:] {
			out = append(out, r.Path)
		}
		return out
	}
	t.Run("every page", func(t *testing.T) {
		before := len(f.Requests())
		r := waiter(t, env, nil, "memory", "graph", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var page client.GraphPage
		decodeStrict(t, r.stdout, &page)
		var names []string
		for _, e := range page.Entities {
			names = append(names, e.Name)
		}
		if !reflect.DeepEqual(names, []string{"a", "b", "c", "d", "e"}) || len(page.Triples) != 2 || page.Total != 5 || page.Next != "" {
			t.Errorf("graph %+v", page)
		}
		want := []string{"/api/v1/memory/graph", "/api/v1/memory/graph?after=2", "/api/v1/memory/graph?after=4"}
		if got := graphRequests(before); !reflect.DeepEqual(got, want) {
			t.Errorf("requests %q, want %q", got, want)
		}
	})
	t.Run("one page with --limit", func(t *testing.T) {
		before := len(f.Requests())
		r := waiter(t, env, nil, "memory", "graph", "--limit", "3", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var page client.GraphPage
		decodeStrict(t, r.stdout, &page)
		if len(page.Entities) != 3 || page.Next != "3" || page.Total != 5 || len(page.Triples) != 1 {
			t.Errorf("graph %+v", page)
		}
		if got := graphRequests(before); !reflect.DeepEqual(got, []string{"/api/v1/memory/graph?limit=3"}) {
			t.Errorf("requests %q", got)
		}
		r = waiter(t, env, nil, "memory", "graph", "--limit", "3")
		if r.code != 0 || !strings.Contains(r.stdout, "entities 3 of 5") || !strings.Contains(r.stderr, "2 more entities: drop --limit") {
			t.Errorf("table: %+v", r)
		}
	})
	t.Run("empty graph as JSON", func(t *testing.T) {
		r := waiter(t, env, nil, "memory", "graph", "--scope", "public", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var page client.GraphPage
		decodeStrict(t, r.stdout, &page)
		if page.Entities == nil || page.Triples == nil || len(page.Entities) != 0 {
			t.Errorf("empty graph %+v from %s", page, r.stdout)
		}
	})
	t.Run("entity as JSON", func(t *testing.T) {
		r := waiter(t, env, nil, "memory", "entity", "2", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var d client.EntityDetail
		decodeStrict(t, r.stdout, &d)
		if d.Entity.Name != "b" || len(d.Triples) != 1 || d.Triples[0].ObjectName != "c" || d.Blocks == nil {
			t.Errorf("detail %+v", d)
		}
	})
	t.Run("a repeated cursor stops the paging", func(t *testing.T) {
		n := 0
		sock := clienttest.ServeUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"entities":[{"id":1,"name":"x"}],"triples":[],"next":"same","total":9}`)
		}))
		r := waiter(t, map[string]string{"HOLOGRAM_SOCKET": sock}, nil, "memory", "graph")
		if r.code != 1 || !strings.Contains(r.stderr, `the kernel sent paging cursor "same" twice`) || n != 2 {
			t.Errorf("exit %d after %d requests: %s", r.code, n, r.stderr)
		}
	})
}

func TestMemoryForgetScenesAndGC(t *testing.T) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	f, env := kernel(t, false)
	f.AddMemory(
		client.MemoryHit{ID: 11, Session: "main", Time: at, Role: "user", Scope: "private", Layer: 2, Content: "the key is under the pot"},
		client.MemoryHit{ID: 12, Session: "main", Time: at, Role: "assistant", Scope: "private", Layer: 2, Content: "noted"},
		client.MemoryHit{ID: 13, Session: "main", Time: at, Role: "user", Scope: "private", Layer: 2, Content: "keep me"},
	)
	runSteps(t, f, env, []step{
		{args: []string{"memory", "scenes"}, wantErr: "no scenes yet", wantReq: "GET /api/v1/memory/scenes"},
		{args: []string{"memory", "forget", "11", "12", "11"}, wantOut: []string{
			"forgot 2 events and 0 blocks; deleted 0 triples (0 more lost a source) and 0 entities left with nothing\n"},
			wantReq: "POST /api/v1/memory/forget", wantBody: `{"events":[11,12]}`},
		{args: []string{"memory", "forget", "11"}, wantCode: 1, wantErr: "no event 11 (HTTP 404)", wantReq: "POST /api/v1/memory/forget"},
		{args: []string{"memory", "forget", "13", "--json"}, wantOut: []string{`"events": 1`}, wantReq: "POST /api/v1/memory/forget"},
		{args: []string{"memory", "forget"}, wantCode: 2, wantErr: "usage: waiter memory forget EVENTID..."},
		{args: []string{"memory", "forget", "1", "x"}, wantCode: 2, wantErr: `event id must be a positive integer, got "x"`},
		{args: []string{"memory", "forget", "-5"}, wantCode: 2, wantErr: "flag provided but not defined: -5"},
		{args: []string{"memory", "forget", "--", "-5"}, wantCode: 2, wantErr: `event id must be a positive integer, got "-5"`},
		{args: []string{"memory", "gc", "now"}, wantCode: 2, wantErr: "memory gc takes no arguments"},
		{args: []string{"memory", "scenes", "x"}, wantCode: 2, wantErr: "memory scenes takes no arguments"},
	})

	f.SetScenes(
		client.Scene{ID: 1, Key: "chan:qq/peer:group_1", Declared: true, Features: map[string]float64{"partner:group_1": 1, "channel:qq": 1, "tod:evening": 0.2},
			Strength: 3.25, Occurrences: 5, Seen: at},
		client.Scene{ID: 2, Key: "s-7f3a", Features: map[string]float64{"topic:hiking": 0.4}, Strength: 1, Occurrences: 2, Seen: at},
	)
	f.SetGCReport(client.GCReport{Cooled: 3, Distilled: 7, Entities: 2, Triples: 4, Confirmed: 1, Superseded: 1, Extractor: "llm+rules",
		Decayed: 1, Took: 1500 * time.Millisecond})
	runSteps(t, f, env, []step{
		{args: []string{"memory", "scenes"}, wantOut: []string{"ID", "KEY", "KIND", "STRENGTH", "SEEN", "TIMES", "FEATURES",
			"chan:qq/peer:group_1", "declared", "3.25", shortTime(at), "channel:qq 1.0, partner:group_1 1.0, tod:evening 0.2",
			"s-7f3a", "emergent", "topic:hiking 0.4"}, wantReq: "GET /api/v1/memory/scenes"},
		{args: []string{"memory", "gc"}, wantOut: []string{"cooled          3\n", "distilled       7\n", "extractor       llm+rules\n",
			"decayed scenes  1\n", "took            1.5s\n"}, wantReq: "POST /api/v1/memory/gc"},
	})
	for _, tt := range []struct {
		args []string
		into any
		want any
	}{
		{[]string{"memory", "scenes", "--json"}, &[]client.Scene{}, &[]client.Scene{
			{ID: 1, Key: "chan:qq/peer:group_1", Declared: true, Features: map[string]float64{"partner:group_1": 1, "channel:qq": 1, "tod:evening": 0.2},
				Strength: 3.25, Occurrences: 5, Seen: at},
			{ID: 2, Key: "s-7f3a", Features: map[string]float64{"topic:hiking": 0.4}, Strength: 1, Occurrences: 2, Seen: at}}},
		{[]string{"memory", "gc", "--json"}, &client.GCReport{}, &client.GCReport{Cooled: 3, Distilled: 7, Entities: 2, Triples: 4, Confirmed: 1,
			Superseded: 1, Extractor: "llm+rules", Decayed: 1, Took: 1500 * time.Millisecond}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := waiter(t, env, nil, tt.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			decodeStrict(t, r.stdout, tt.into)
			if !reflect.DeepEqual(tt.into, tt.want) {
				t.Errorf("got %+v, want %+v", tt.into, tt.want)
			}
		})
	}
}

// tarOf builds a tar stream of entries (a name ending in "/" is a directory; a "->" in the body
// makes a symlink to what follows it).
func tarOf(t *testing.T, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e[1]))}
		switch {
		case strings.HasSuffix(e[0], "/"):
			h.Typeflag, h.Size = tar.TypeDir, 0
		case strings.HasPrefix(e[1], "->"):
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, strings.TrimPrefix(e[1], "->"), 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.WriteString(tw, e[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tree lists the files under dir with their contents ("name/" for directories).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMemoryExport(t *testing.T) {
	f, env := kernel(t, false)
	for _, args := range [][]string{{"entity", "add", "Alice", "--text", "喜欢咖啡"}, {"triple", "add", "Alice", "lives in", "Paris"}} {
		if r := waiter(t, env, nil, append([]string{"memory"}, args...)...); r.code != 0 {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	dir := t.TempDir()

	var stdoutJSON string
	t.Run("json to stdout", func(t *testing.T) {
		r := waiter(t, env, nil, "memory", "export")
		if r.code != 0 || !json.Valid([]byte(r.stdout)) || !strings.Contains(r.stdout, `"Alice"`) {
			t.Fatalf("export: %+v", r)
		}
		stdoutJSON = r.stdout
		if p, q := lastQuery(t, f); p != "/api/v1/memory/export" || !reflect.DeepEqual(q, url.Values{"format": {"json"}}) {
			t.Errorf("request %s %v", p, q)
		}
	})
	t.Run("secrets are asked for", func(t *testing.T) {
		r := waiter(t, env, nil, "memory", "export", "--include-secrets", "--out", "-")
		if r.code != 0 {
			t.Fatalf("export: %+v", r)
		}
		if _, q := lastQuery(t, f); !reflect.DeepEqual(q, url.Values{"format": {"json"}, "include_secrets": {"1"}}) {
			t.Errorf("query %v", q)
		}
	})
	t.Run("jsonl to stdout", func(t *testing.T) {
		r := waiter(t, env, nil, "memory", "export", "--format", "jsonl")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) != 3 || !strings.Contains(r.stdout, `{"type":"relation","from":"Alice","to":"Paris","relationType":"lives in"}`) {
			t.Fatalf("export: %+v", r)
		}
	})

	file := filepath.Join(dir, "backup.json")
	runSteps(t, f, env, []step{
		{args: []string{"memory", "export", "--out", file}, wantErr: "exported to " + file, wantReq: "GET /api/v1/memory/export?format=json"},
		{args: []string{"memory", "export", "--out", file}, wantCode: 1, wantErr: "refusing to overwrite " + file + " (use --force)"},
		{args: []string{"memory", "export", "--out", file, "--force", "--format", "jsonl"}, wantErr: "exported to",
			wantReq: "GET /api/v1/memory/export?format=jsonl"},
		{args: []string{"memory", "export", "--format", "csv"}, wantCode: 2, wantErr: `--format must be json, jsonl or markdown, got "csv"`},
		{args: []string{"memory", "export", "--format", "jsonl", "--include-secrets"}, wantCode: 2, wantErr: "--include-secrets is only for --format json"},
		{args: []string{"memory", "export", "backup.json"}, wantCode: 2, wantErr: "memory export takes no arguments"},
		{args: []string{"memory", "export", "--out", ""}, wantCode: 2, wantErr: "--out must not be empty"},
		{args: []string{"memory", "export", "--out", filepath.Join(dir, "missing", "x.json")}, wantCode: 1, wantErr: "no such file or directory"},
	})
	t.Run("the file is private and whole", func(t *testing.T) {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v", fi.Mode().Perm())
		}
		if r := waiter(t, env, nil, "memory", "export", "--out", file, "--force"); r.code != 0 {
			t.Fatalf("export: %+v", r)
		}
		if b, _ := os.ReadFile(file); string(b) != stdoutJSON {
			t.Errorf("file %q, want the stdout export %q", b, stdoutJSON)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("temporary files left: %v", ents)
		}
	})
	t.Run("a failed export leaves no file", func(t *testing.T) {
		broken := clienttest.ServeUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"entities":[`) // then the connection closes early
		}))
		out := filepath.Join(dir, "broken.json")
		r := waiter(t, map[string]string{"HOLOGRAM_SOCKET": broken}, nil, "memory", "export", "--out", out)
		if r.code != 1 {
			t.Fatalf("exit %d: %+v", r.code, r)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("a broken export left %s (%v)", out, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("files left: %v", ents)
		}
	})

	t.Run("markdown into a directory", func(t *testing.T) {
		md := filepath.Join(dir, "md")
		r := waiter(t, env, nil, "memory", "export", "--format", "markdown", "--out", md)
		if r.code != 0 || !strings.Contains(r.stderr, "exported 2 files into "+md) {
			t.Fatalf("export: %+v", r)
		}
		got := tree(t, md)
		if len(got) != 3 || !strings.Contains(got["entities/Alice.md"], "喜欢咖啡") || !strings.Contains(got["entities/Alice.md"], "- lives in Paris") ||
			!strings.Contains(got["entities/Paris.md"], "# Paris") {
			t.Errorf("tree %v", got)
		}
		r = waiter(t, env, nil, "memory", "export", "--format", "markdown", "--out", md)
		if r.code != 1 || !strings.Contains(r.stderr, "refusing to overwrite entities/Alice.md (use --force)") {
			t.Errorf("second export: %+v", r)
		}
		if r = waiter(t, env, nil, "memory", "export", "--format", "markdown", "--out", md, "--force"); r.code != 0 {
			t.Errorf("forced export: %+v", r)
		}
	})
	t.Run("markdown as a tar file", func(t *testing.T) {
		out := filepath.Join(dir, "memory.tar")
		if r := waiter(t, env, nil, "memory", "export", "--format", "markdown", "--out", out); r.code != 0 {
			t.Fatalf("export: %+v", r)
		}
		fh, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		h, err := tar.NewReader(fh).Next()
		if err != nil || h.Name != "entities/Alice.md" {
			t.Errorf("tar: %+v %v", h, err)
		}
	})

	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	hostile := []struct {
		name    string
		setup   func(out string) // prepares the output directory
		tar     []byte
		wantErr string
	}{
		{name: "absolute path", tar: tarOf(t, [2]string{"ok.md", "x"}, [2]string{outside + "/evil.md", "x"}),
			wantErr: `refusing tar entry "` + outside + `/evil.md": an absolute path`},
		{name: "dot dot", tar: tarOf(t, [2]string{"../outside/evil.md", "x"}), wantErr: `refusing tar entry "../outside/evil.md": it climbs out with ".."`},
		{name: "dot dot inside", tar: tarOf(t, [2]string{"a/../../outside/evil.md", "x"}), wantErr: `it climbs out with ".."`},
		{name: "symlink entry", tar: tarOf(t, [2]string{"link", "->" + outside}), wantErr: `refusing tar entry "link" of type '2'`},
		{name: "symlink in the directory", tar: tarOf(t, [2]string{"esc/evil.md", "x"}),
			setup:   func(out string) { os.MkdirAll(out, 0o700); os.Symlink(outside, filepath.Join(out, "esc")) },
			wantErr: "esc: path escapes from parent"},
		{name: "the directory itself", tar: tarOf(t, [2]string{"./", ""}), wantErr: `refusing tar entry "./": it names the directory itself`},
		{name: "not a tar", tar: []byte("<html>proxy error</html>"), wantErr: "export into"},
	}
	for i, tt := range hostile {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "hostile", strings.Repeat("d", i+1))
			if tt.setup != nil {
				tt.setup(out)
			}
			f.SetExport("markdown", tt.tar)
			r := waiter(t, env, nil, "memory", "export", "--format", "markdown", "--out", out)
			if r.code != 1 || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q, want %q", r.code, r.stderr, tt.wantErr)
			}
			if got := tree(t, outside); len(got) != 0 {
				t.Errorf("files written outside the output directory: %v", got)
			}
		})
	}
	t.Run("directories and files in order", func(t *testing.T) {
		out := filepath.Join(dir, "ordered")
		f.SetExport("markdown", tarOf(t, [2]string{"log/", ""}, [2]string{"log/2026-01-02.md", "# day"}, [2]string{"./entities/x.md", "x"}))
		r := waiter(t, env, nil, "memory", "export", "--format", "markdown", "--out", out)
		if r.code != 0 {
			t.Fatalf("export: %+v", r)
		}
		want := map[string]string{"log/": "", "log/2026-01-02.md": "# day", "entities/": "", "entities/x.md": "x"}
		if got := tree(t, out); !reflect.DeepEqual(got, want) {
			t.Errorf("tree %v, want %v", got, want)
		}
		if fi, err := os.Stat(filepath.Join(out, "log", "2026-01-02.md")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode: %v %v", fi, err)
		}
	})
}

func TestMemoryImport(t *testing.T) {
	f, env := kernel(t, false)
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "memory.jsonl")
	data := `{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"]}` + "\n" +
		`{"type":"relation","from":"Alice","to":"Bob","relationType":"knows"}` + "\n"
	if err := os.WriteFile(jsonl, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.bin")
	if err := os.WriteFile(backup, []byte(`{"version":1,"entities":[{"id":1,"name":"Zed","kind":"person","scope":"private"}],"triples":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runSteps(t, f, env, []step{
		{args: []string{"memory", "import", jsonl}, wantOut: []string{"imported 0 sessions, 0 events, 0 blocks, 2 entities, 1 triple, 0 scenes and 0 settings; 0 already present\n"},
			wantReq: "POST /api/v1/memory/import?format=jsonl", wantBody: data},
		{args: []string{"memory", "import", jsonl, "--json"}, wantOut: []string{`"skipped": 2`, `"triples": 0`},
			wantReq: "POST /api/v1/memory/import?format=jsonl"},
		{args: []string{"memory", "import", "--format", "json", backup}, wantCode: 1, wantErr: "import json: memory is not empty (HTTP 400)",
			wantReq: "POST /api/v1/memory/import?format=json"},
		{args: []string{"memory", "import", "--format", "markdown", backup}, wantCode: 2, wantErr: "markdown is an export format only"},
		{args: []string{"memory", "import", "--format", "xml", backup}, wantCode: 2, wantErr: `--format must be json, jsonl, chatgpt or openwebui, got "xml"`},
		{args: []string{"memory", "import"}, wantCode: 2, wantErr: "usage: waiter memory import [--format json|jsonl|chatgpt|openwebui] FILE|-"},
		{args: []string{"memory", "import", filepath.Join(dir, "nope.json")}, wantCode: 1, wantErr: "no such file or directory"},
		{args: []string{"memory", "import", "--format", "chatgpt", filepath.Join(dir, "nope.zip")}, wantCode: 1, wantErr: "no such file or directory"},
		{args: []string{"memory", "import", "--format", "openwebui", dir}, wantCode: 1, wantErr: "is a directory"},
		{args: []string{"memory", "gc", "--cool-all", "now"}, wantCode: 2, wantErr: "memory gc takes no arguments"},
	})
	t.Run("stdin into an empty memory", func(t *testing.T) {
		f2, env2 := kernel(t, false)
		r := waiter(t, env2, strings.NewReader(`{"version":1,"entities":[{"id":4,"name":"Zed","kind":"person","scope":"private"}],"triples":[]}`),
			"memory", "import", "-")
		if r.code != 0 || !strings.Contains(r.stdout, "1 entity") {
			t.Fatalf("import: %+v", r)
		}
		if reqs := f2.Requests(); reqs[len(reqs)-1].Path != "/api/v1/memory/import?format=json" {
			t.Errorf("request %+v", reqs[len(reqs)-1])
		}
		if r := waiter(t, env2, nil, "memory", "entity", "4"); r.code != 0 || !strings.Contains(r.stdout, "entity 4: Zed") {
			t.Errorf("imported entity: %+v", r)
		}
	})
}

func TestMemoryUsage(t *testing.T) {
	r := waiter(t, nil, nil, "memory", "help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, s := range []string{"graph [--scope S] [--history] [--limit N] [--json]", "entity add NAME", "merge INTO FROM",
		"triple add SUBJ PRED OBJ", "pin block BLOCKID [--entity ID]", "forget EVENTID...", "export [--format json|jsonl|markdown]",
		"import [--format json|jsonl|chatgpt|openwebui] FILE|-", "gc [--cool-all] [--json]"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("memory help lacks %q", s)
		}
	}
	r = waiter(t, nil, nil, "memory")
	if r.code != 2 || !strings.Contains(r.stderr, "memory needs a subcommand: search, graph, entity") {
		t.Errorf("memory alone: %+v", r)
	}
}
