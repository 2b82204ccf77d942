//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestPluginConfigCommand: `waiter plugin config files` over the real homed and the real files
// plugin: show lists the schema's settings, set and add write files.toml (checked against the
// schema in plugin.json) and restart the plugin, which then reads the folder added; a value the
// schema refuses and an unknown key are errors that change nothing.
func TestPluginConfigCommand(t *testing.T) {
	e := newEnv(t)
	bp := filepath.Join(e.root, "builtin")
	buildBuiltins(t, bp, "files")
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)
	fake := startFakeOpenAI(t)
	e.start()
	e.addProvider(fake.url, "sk-config")
	e.waitPlugin("files", "running", func(p client.Plugin) bool { return p.State == "running" && len(p.Tools) > 0 })
	// plugin show: the permissions of its plugin.json, the data dir expanded by the host.
	if out, errOut, code := e.waiter("", nil, "plugin", "show", "files"); code != 0 || !strings.Contains(out, "plugin files: native (builtin), running, pid ") ||
		!strings.Contains(out, "  network:  no\n  programs: no\n  write:    "+filepath.Join(e.data, "files")+"\n") ||
		!strings.Contains(out, "  env:      HOME\n  also:     the roots of files.toml") {
		t.Fatalf("plugin show files: %d\n%s%s", code, out, errOut)
	}
	docs := filepath.Join(e.root, "docs")
	if err := os.MkdirAll(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "memo.txt"), []byte("memo 77"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := `CALL files_read {"path":"` + filepath.Join(docs, "memo.txt") + `"}`
	if got := e.ask(read); !strings.Contains(got, "outside the roots") {
		t.Fatalf("before: %q", got)
	}
	conf := filepath.Join(e.config, "hologram", "plugins", "files.toml")

	out, errOut, code := e.waiter("", nil, "plugin", "config", "files")
	if code != 0 || !strings.Contains(out, "plugin files settings ("+conf+"; the file does not exist yet") ||
		!strings.Contains(out, "roots            array of string") || !strings.Contains(out, "read_only        boolean            (default)") {
		t.Fatalf("show: %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		out, in string // in stdout / stderr
	}{
		{[]string{"add", "roots", docs}, 0, "settings written to " + conf, ""},
		{[]string{"set", "read_only", "true"}, 0, "settings written", ""},
		{[]string{"set", "max_read_bytes", "0"}, 1, "", "max_read_bytes"},
		{[]string{"set", "max_read_bytes", "lots"}, 2, "", `"lots" is not a number`},
		{[]string{"set", "colour", "red"}, 2, "", `plugin files has no setting "colour"`},
	} {
		out, errOut, code := e.waiter("", nil, append([]string{"plugin", "config", "files"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.in) {
			t.Errorf("config %v: %d\n%s%s", tc.args, code, out, errOut)
		}
	}
	raw, err := os.ReadFile(conf)
	if err != nil || !strings.Contains(string(raw), `roots = ["`+docs+`"]`) || !strings.Contains(string(raw), "read_only = true") || strings.Contains(string(raw), "max_read_bytes") {
		t.Fatalf("files.toml = %q, %v", raw, err)
	}
	if got := e.ask(read); !strings.Contains(got, "memo 77") {
		t.Fatalf("after add roots: %q", got)
	}
	e.waitPlugin("files", "running without files_write", func(p client.Plugin) bool {
		return p.State == "running" && contains(p.Tools, "files_read") && !contains(p.Tools, "files_write")
	})
	out, _, code = e.waiter("", nil, "plugin", "config", "files", "--json")
	var s client.PluginSettings
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || !s.Exists || s.Values["read_only"] != true {
		t.Fatalf("show --json: %d %s", code, out)
	}
}
