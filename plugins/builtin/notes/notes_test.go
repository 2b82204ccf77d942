package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

func TestManifest(t *testing.T) {
	plugintest.CheckManifest(t, (&notes{}).plugin(), protocol.CapMemory)
}

func TestLoadConfig(t *testing.T) {
	home := t.TempDir()
	e := map[string]string{"HOME": home, plugconf.EnvDataDir: filepath.Join(home, "data"), plugconf.EnvConfigDir: filepath.Join(home, "conf")}
	dir, err := loadConfig(plugintest.Env(e))
	if err != nil || dir != filepath.Join(home, "data", "notes") {
		t.Fatalf("default %q %v", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir %v %v", fi, err)
	}
	file := filepath.Join(home, "conf", "plugins", "notes.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ body, want, wantErr string }{
		{`dir = "~/my notes"`, filepath.Join(home, "my notes"), ""},
		{`dir = "rel"`, "", "must be an absolute path"},
		{`folder = "/x"`, "", `unknown key "folder"`},
	} {
		if err := os.WriteFile(file, []byte(tt.body), 0o600); err != nil {
			t.Fatal(err)
		}
		dir, err := loadConfig(plugintest.Env(e))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("%s: %q %v, want %q", tt.body, dir, err, tt.wantErr)
			}
			continue
		}
		if err != nil || dir != tt.want {
			t.Fatalf("%s: %q %v", tt.body, dir, err)
		}
	}
}

// memory records the commits of the plugin; fail, when set, refuses them.
type memory struct {
	mu      sync.Mutex
	commits []protocol.MemoryCommitParams
	fail    error
}

func (m *memory) commit(_ context.Context, p protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return protocol.MemoryCommitResult{}, m.fail
	}
	m.commits = append(m.commits, p)
	return protocol.MemoryCommitResult{ID: int64(len(m.commits)), Session: "plugin:notes", Channel: "plugin:notes", Scope: "private"}, nil
}

func (m *memory) all() []protocol.MemoryCommitParams {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]protocol.MemoryCommitParams(nil), m.commits...)
}

func TestNotes(t *testing.T) {
	dir := t.TempDir()
	clk := clocktest.New(time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC))
	n, err := newNotes(dir, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	mem := &memory{}
	k := sdktest.Start(t, n.plugin(), sdktest.Options{Plugin: "notes", Capabilities: []string{protocol.CapMemory}, Commit: mem.commit})
	ctx := context.Background()
	run := func(tool, a string) string {
		t.Helper()
		// Every call belongs to a turn, as from the agent: commits must still leave it out.
		out, err := k.ToolText(ctx, tool, a, "turn-in-a-group")
		if err != nil {
			t.Fatalf("%s %s: %v", tool, a, err)
		}
		return out
	}

	if got := run("notes_create", plugintest.Args("title", "Shopping list", "body", "- milk\n- bread")); got != "created note shopping-list ("+dir+"/shopping-list.md); remembered (memory event 1, private)" {
		t.Fatalf("create: %q", got)
	}
	clk.Advance(time.Minute)
	run("notes_create", plugintest.Args("title", "Shopping list", "body", "second one"))
	clk.Advance(time.Minute)
	run("notes_create", plugintest.Args("title", "  旅行 计划！ ", "body", "去杭州看西湖，带上雨伞"))
	raw, err := os.ReadFile(filepath.Join(dir, "shopping-list.md"))
	if err != nil || string(raw) != "# Shopping list\n\n- milk\n- bread\n" {
		t.Fatalf("file %q %v", raw, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "shopping-list-2.md")); err != nil {
		t.Fatal("the second note of the same title did not get its own id")
	}

	commits := mem.all()
	if len(commits) != 3 || commits[0].Turn != "" || commits[0].Text != "Note “Shopping list” (notes:shopping-list)\n\n- milk\n- bread" ||
		commits[0].Meta["note"] != "shopping-list" || commits[0].Meta["action"] != "create" || commits[2].Meta["note"] != "旅行-计划" {
		t.Fatalf("commits %+v", commits)
	}

	clk.Advance(time.Minute)
	if got := run("notes_edit", plugintest.Args("id", "shopping-list", "append", "- eggs")); got != "edited note shopping-list; remembered (memory event 4, private)" {
		t.Fatalf("edit: %q", got)
	}
	if got := run("notes_read", plugintest.Args("id", "shopping-list.md")); got != "# Shopping list\n\n- milk\n- bread\n- eggs\n" {
		t.Fatalf("read after append: %q", got)
	}
	run("notes_edit", plugintest.Args("id", "shopping-list", "title", "Groceries", "body", "cheese"))
	if got := run("notes_read", plugintest.Args("id", "shopping-list")); got != "# Groceries\n\ncheese\n" {
		t.Fatalf("read after edit: %q", got)
	}
	if c := mem.all(); c[len(c)-1].Meta["action"] != "edit" || !strings.Contains(c[len(c)-1].Text, "cheese") {
		t.Fatalf("edit commit %+v", c[len(c)-1])
	}

	if got := run("notes_list", "{}"); got != "shopping-list  2026-03-04 05:09  Groceries\n旅行-计划  2026-03-04 05:08  旅行 计划！\nshopping-list-2  2026-03-04 05:07  Shopping list" {
		t.Fatalf("list:\n%s", got)
	}
	if got := run("notes_search", plugintest.Args("query", "西湖")); got != "旅行-计划  旅行 计划！\n  去杭州看西湖，带上雨伞" {
		t.Fatalf("search cjk: %q", got)
	}
	if got := run("notes_search", plugintest.Args("query", "SHOPPING one")); !strings.HasPrefix(got, "shopping-list-2  Shopping list\n  second one") {
		t.Fatalf("search: %q", got)
	}
	if got := run("notes_search", plugintest.Args("query", "shopping cheese")); got != `no note contains "shopping cheese"` {
		t.Fatalf("search needs every word: %q", got)
	}

	if got := run("notes_delete", plugintest.Args("id", "shopping-list-2")); !strings.HasPrefix(got, "deleted note shopping-list-2; remembered") {
		t.Fatalf("delete: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "shopping-list-2.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the deleted note's file remains")
	}

	for _, tt := range []struct{ tool, args, want string }{
		{"notes_create", plugintest.Args("title", " ", "body", "x"), "the title is empty"},
		{"notes_create", plugintest.Args("title", strings.Repeat("t", 201), "body", "x"), "the title has 201 characters, at most 200"},
		{"notes_create", plugintest.Args("title", "big", "body", strings.Repeat("b", maxNoteBytes+1)), "the body has 262145 bytes"},
		{"notes_create", plugintest.Args("title", "x", "body", "y", "tags", "z"), `unknown field "tags"`},
		{"notes_read", plugintest.Args("id", "../../etc/passwd"), `note id "../../etc/passwd" is not valid`},
		{"notes_read", plugintest.Args("id", "shopping-list-2"), `no note "shopping-list-2"`},
		{"notes_edit", plugintest.Args("id", "shopping-list"), "nothing to change"},
		{"notes_edit", plugintest.Args("id", "shopping-list", "body", "a", "append", "b"), "not both"},
		{"notes_edit", plugintest.Args("id", "ghost", "body", "a"), `no note "ghost"`},
		{"notes_delete", plugintest.Args("id", "/tmp/x"), "is not valid"},
		{"notes_search", plugintest.Args("query", "  "), "query is required"},
		{"notes_search", plugintest.Args("query", "x", "max_results", 101), "max_results must be from 1 to 100"},
	} {
		if got, err := k.ToolText(ctx, tt.tool, tt.args, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %.60s: %q %v, want %q", tt.tool, tt.args, got, err, tt.want)
		}
	}

	// A note the owner writes by hand is found too; a failing memory does not lose a note.
	if err := os.WriteFile(filepath.Join(dir, "ideas.md"), []byte("kite festival in May\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run("notes_search", plugintest.Args("query", "kite")); got != "ideas  ideas\n  kite festival in May" {
		t.Fatalf("hand-written note: %q", got)
	}
	mem.mu.Lock()
	mem.fail = errors.New("memory features need an indexed store")
	mem.mu.Unlock()
	if got := run("notes_create", plugintest.Args("title", "Offline", "body", "still saved")); !strings.Contains(got, "created note offline") ||
		!strings.Contains(got, "not remembered: memory/commit: jsonrpc error -32603: memory features need an indexed store") {
		t.Fatalf("create without memory: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "offline.md")); err != nil {
		t.Fatal(err)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Shopping list": "shopping-list", "  旅行 计划！ ": "旅行-计划", "!!!": "note", "A/B\\C..D": "a-b-c-d",
		strings.Repeat("x", 80): strings.Repeat("x", 60),
	} {
		if got := slug(in); got != want || !idRe.MatchString(got) {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
