package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestA2AConfig(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "c.toml")
	writeFile(t, path, `
[a2a]
rate_per_minute = 30

[[a2a.peers]]
name = "alpha"
url = "https://alpha.example:8443"
token_file = "~/alpha.token"
`)
	c, _, err := Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.A2A.Peers) != 1 || c.A2A.Peers[0].TokenFile != filepath.Join(home, "alpha.token") || c.A2A.RatePerMinute != 30 {
		t.Fatalf("a2a %+v", c.A2A)
	}
	off := false
	for _, tt := range []struct {
		a      A2AConfig
		listen string
		on     bool
	}{
		{A2AConfig{}, "127.0.0.1:7777", true},
		{A2AConfig{}, "", false},
		{A2AConfig{Enabled: &off}, "127.0.0.1:7777", false},
	} {
		if got := tt.a.On(tt.listen); got != tt.on {
			t.Errorf("On(%q) with enabled=%v = %v", tt.listen, tt.a.Enabled, got)
		}
	}
	for _, tt := range []struct{ body, want string }{
		{"[a2a]\nenabled = false", ""},
		{"[a2a]\nrate_per_minute = -1", "a2a.rate_per_minute must be >= 0"},
		{"[[a2a.peers]]\nname = \"a b\"\nurl = \"http://x\"\ntoken_file = \"/t\"", "a2a.peers[0]: name must be"},
		{"[[a2a.peers]]\nname = \"a\"\nurl = \"ftp://x\"\ntoken_file = \"/t\"", `a2a peer "a": url "ftp://x" must be an http:// or https:// URL`},
		{"[[a2a.peers]]\nname = \"a\"\nurl = \"http://x\"", `a2a peer "a": token_file must be set`},
		{"[[a2a.peers]]\nname = \"a\"\nurl = \"http://x\"\ntoken_file = \"/t\"\n[[a2a.peers]]\nname = \"a\"\nurl = \"http://y\"\ntoken_file = \"/t\"", `a second peer named "a"`},
		{"[a2a]\nport = 1", `unknown key "a2a.port"`},
	} {
		writeFile(t, path, tt.body)
		_, _, err := Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home}))
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%q: %v, want %q", tt.body, err, tt.want)
		}
	}
}
