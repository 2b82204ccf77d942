package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBuiltinConfig(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "c.toml")
	writeFile(t, path, `
[agent]
approval_timeout = "5m"

[builtin]
dir = "~/plugins"
enable = ["shell"]
disable = ["rss", "web"]
env = {qq = ["QQ_WS=ws://127.0.0.1:3001"]}
`)
	c, _, err := Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Builtin.Dir != filepath.Join(home, "plugins") || !slices.Equal(c.Builtin.Enable, []string{"shell"}) ||
		!slices.Equal(c.Builtin.Disable, []string{"rss", "web"}) || c.Builtin.Env["qq"][0] != "QQ_WS=ws://127.0.0.1:3001" ||
		c.Agent.ApprovalTimeout.Duration != 5*time.Minute {
		t.Fatalf("config %+v %+v", c.Builtin, c.Agent)
	}
	// HOLOGRAM_PLUGINS_DIR sets the directory, over the file.
	c, _, err = Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home, "HOLOGRAM_PLUGINS_DIR": "/opt/hp"}))
	if err != nil || c.Builtin.Dir != "/opt/hp" {
		t.Fatalf("env: %q %v", c.Builtin.Dir, err)
	}
	if d := Default(envMap(nil)); d.Agent.ApprovalTimeout.Duration != 0 || d.Builtin.Dir != "" {
		t.Fatalf("defaults %+v %+v", d.Agent, d.Builtin)
	}

	for _, tt := range []struct{ body, want string }{
		{"[builtin]\nenable = [\"fils\"]", `builtin.enable: unknown built-in plugin "fils" (known: files, notes, calendar, rss, web, code, shell, qq, a2a)`},
		{"[builtin]\ndisable = [\"echo\"]", `builtin.disable: unknown built-in plugin "echo"`},
		{"[builtin]\nenable = [\"shell\"]\ndisable = [\"shell\"]", `builtin: plugin "shell" is both enabled and disabled`},
		{"[builtin]\nenv = {nope = [\"A=1\"]}", `builtin.env: unknown built-in plugin "nope"`},
		{"[builtin]\nenv = {qq = [\"A\"]}", `builtin.env.qq: "A" must be KEY=VALUE`},
		{"[builtin]\ndirectory = \"/x\"", `unknown key "builtin.directory"`},
		{"[agent]\napproval_timeout = \"-1s\"", "agent.approval_timeout must be from 0 (the default, 2m0s) to 1h0m0s, got -1s"},
		{"[agent]\napproval_timeout = \"2h\"", "agent.approval_timeout must be from 0"},
	} {
		writeFile(t, path, tt.body)
		_, _, err := Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home}))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.body, err, tt.want)
		}
	}
}
