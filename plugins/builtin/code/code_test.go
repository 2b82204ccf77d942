package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugconf"
	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
)

func TestManifest(t *testing.T) {
	m := plugintest.CheckManifest(t, (&code{box: &box{}}).plugin())
	if !m.Permissions.Exec {
		t.Fatal("plugin.json must grant exec: the plugin runs interpreters")
	}
}

func TestLoadConfig(t *testing.T) {
	home := t.TempDir()
	data, conf := filepath.Join(home, "data"), filepath.Join(home, "conf")
	e := plugintest.Env(map[string]string{"HOME": home, plugconf.EnvDataDir: data, plugconf.EnvConfigDir: conf})
	c, err := loadConfig(e)
	if err != nil || c.Unsafe || c.MemoryBytes != defaultMemory || c.Pids != defaultPids || c.Cache != filepath.Join(data, "code", "cache") ||
		c.data != filepath.Join(data, "code") {
		t.Fatalf("defaults %+v %v", c, err)
	}
	file := filepath.Join(conf, "plugins", "code.toml")
	os.MkdirAll(filepath.Dir(file), 0o700)
	for _, tt := range []struct{ body, want string }{
		{"unsafe = true\nmemory_bytes = 134217728\nnetwork_sessions = [\"main\"]", ""},
		{"memory_bytes = 1000", "memory_bytes must be at least 64 MiB"},
		{"pids = 2", "pids must be at least 8"},
		{"cache = \"rel\"", "cache must be an absolute path"},
		{"unsafee = true", `unknown key "unsafee"`},
	} {
		if err := os.WriteFile(file, []byte(tt.body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig(e)
		if !plugintest.WantErr(t, err, tt.want) && tt.want == "" && (!c.Unsafe || c.MemoryBytes != 128<<20 || c.NetworkSessions[0] != "main") {
			t.Errorf("%q loaded %+v", tt.body, c)
		}
	}
}

func TestFindLanguage(t *testing.T) {
	c := Config{GoRoot: "/nowhere"}
	for _, tt := range []struct{ name, want, err string }{
		{"Python3", "python", ""}, {"py", "python", ""}, {"bash", "bash", ""}, {"sh", "bash", ""},
		{"go", "", "go is not installed here (/nowhere/bin/go is missing)"},
		{"cobol", "", `unknown language "cobol": code_languages lists them (python (python3, py)`},
	} {
		l, err := findLanguage(c, tt.name)
		if !plugintest.WantErr(t, err, tt.err) && l.name != tt.want {
			t.Errorf("%s: %q", tt.name, l.name)
		}
	}
}

// TestRefusal: without bubblewrap and without Landlock, code_run refuses unless the owner
// said unsafe = true.
func TestRefusal(t *testing.T) {
	for _, tt := range []struct {
		b    *box
		want string
	}{
		{&box{bwrap: "/usr/bin/bwrap"}, ""},
		{&box{landlock: true}, ""},
		{&box{cfg: Config{Unsafe: true}}, ""},
		{&box{cfg: Config{path: "/c/code.toml"}}, "refused: neither bubblewrap (install the bubblewrap package) nor Landlock"},
	} {
		got := tt.b.refusal()
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%+v: %q, want %q", tt.b, got, tt.want)
		}
	}
	c := &code{box: &box{cfg: Config{path: "/c/code.toml"}}}
	_, err := c.run(context.Background(), nil, []byte(`{"language":"python","code":"print(1)"}`))
	plugintest.WantErr(t, err, "unsafe = true in /c/code.toml")
}

// TestWorkspaceFiles: the call's files land inside the workspace only, and what comes back
// never follows a link the code made.
func TestWorkspaceFiles(t *testing.T) {
	work := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET"), 0o600)
	for _, tt := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"a/b.txt": "hi"}, ""},
		{map[string]string{"../x": "no"}, "give a path inside the workspace"},
		{map[string]string{"/etc/x": "no"}, "give a path inside the workspace"},
	} {
		plugintest.WantErr(t, writeFiles(work, tt.files), tt.want)
	}
	if raw, _ := os.ReadFile(filepath.Join(work, "a", "b.txt")); string(raw) != "hi" {
		t.Fatalf("a/b.txt: %q", raw)
	}
	os.Symlink(outside, filepath.Join(work, "out"))
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "link.txt"))
	os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(work, "hard.txt"))
	plugintest.WantErr(t, writeFiles(work, map[string]string{"out/planted": "x"}), "symbolic link")
	for _, rel := range []string{"link.txt", "hard.txt", "out/secret.txt"} {
		if item, _, kind := fileItem(work, rel); kind != "" || strings.Contains(item.Text, "SECRET") {
			t.Errorf("%s came back: %q %q", rel, kind, item.Text)
		}
	}
	if item, _, kind := fileItem(work, "a/b.txt"); kind != "text" || !strings.Contains(item.Text, "hi") {
		t.Errorf("a/b.txt: %q %+v", kind, item)
	}
	before := snapshot(work)
	os.WriteFile(filepath.Join(work, "new.png"), []byte("\x89PNG"), 0o600)
	if got := changedFiles(work, before); len(got) != 1 || got[0] != "new.png" {
		t.Errorf("changed %v", got)
	}
	o := &outcome{status: "exit 0"}
	res := result(languages[0], o, work, []string{"new.png"}, maxOutput)
	if len(res.Content) != 2 || res.Content[1].Type != "image" || res.Content[1].MIME != "image/png" || string(res.Content[1].Data) != "\x89PNG" {
		t.Errorf("result %+v", res)
	}
}
