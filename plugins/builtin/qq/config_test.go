package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/protocol"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(good, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(open, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, c Config)
		wantErr []string
	}{
		{name: "forward", env: map[string]string{"HOLOGRAM_QQ_URL": "ws://127.0.0.1:3001", "HOLOGRAM_QQ_TOKEN": " t ",
			"HOLOGRAM_QQ_OWNER": "20002", "HOLOGRAM_QQ_KEYWORDS": "Hologram, 小助手", "HOLOGRAM_QQ_GROUPS": "42 group_7", "HOLOGRAM_QQ_RATE": "10/30s"},
			check: func(t *testing.T, c Config) {
				if c.Mode() != "forward" || c.Token != "t" || c.Owner != "20002" || !slices.Equal(c.Keywords, []string{"hologram", "小助手"}) ||
					!c.Groups["42"] || !c.Groups["7"] || c.Rate != 10 || c.Per != 30*time.Second {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "reverse on loopback without a token", env: map[string]string{"HOLOGRAM_QQ_LISTEN": "127.0.0.1:6700"},
			check: func(t *testing.T, c Config) {
				if c.Mode() != "reverse" || c.Rate != 5 || c.Per != time.Minute {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "a token file", env: map[string]string{"HOLOGRAM_QQ_LISTEN": "0.0.0.0:6700", "HOLOGRAM_QQ_TOKEN_FILE": good},
			check: func(t *testing.T, c Config) {
				if c.Token != "from-file" {
					t.Fatalf("token %q", c.Token)
				}
			}},
		{name: "nothing", env: nil, wantErr: []string{"set HOLOGRAM_QQ_URL (forward"}},
		{name: "both", env: map[string]string{"HOLOGRAM_QQ_URL": "ws://a:1", "HOLOGRAM_QQ_LISTEN": "127.0.0.1:1"}, wantErr: []string{"not both"}},
		{name: "not a websocket", env: map[string]string{"HOLOGRAM_QQ_URL": "http://127.0.0.1:3001"}, wantErr: []string{"want ws://host:port"}},
		{name: "reverse off loopback without a token", env: map[string]string{"HOLOGRAM_QQ_LISTEN": "0.0.0.0:6700"},
			wantErr: []string{"is not a loopback address: set an access token"}},
		{name: "a readable token file", env: map[string]string{"HOLOGRAM_QQ_URL": "ws://a:1", "HOLOGRAM_QQ_TOKEN_FILE": open},
			wantErr: []string{"mode 0644 lets others read the token: chmod 600 it"}},
		{name: "a missing token file", env: map[string]string{"HOLOGRAM_QQ_URL": "ws://a:1", "HOLOGRAM_QQ_TOKEN_FILE": filepath.Join(dir, "none")},
			wantErr: []string{"HOLOGRAM_QQ_TOKEN_FILE: open"}},
		{name: "everything bad", env: map[string]string{"HOLOGRAM_QQ_LISTEN": "6700", "HOLOGRAM_QQ_OWNER": "me", "HOLOGRAM_QQ_GROUPS": "42,x",
			"HOLOGRAM_QQ_RATE": "5 per minute", "HOLOGRAM_QQ_TOKEN": "a\nb"},
			wantErr: []string{"HOLOGRAM_QQ_LISTEN \"6700\": want host:port", `HOLOGRAM_QQ_OWNER: "me" is not a QQ number`,
				`HOLOGRAM_QQ_GROUPS: "x" is not a QQ number`, `HOLOGRAM_QQ_RATE "5 per minute": want N/duration`, "contains a line break"}},
		{name: "a rate too fast", env: map[string]string{"HOLOGRAM_QQ_URL": "ws://a:1", "HOLOGRAM_QQ_RATE": "5/10ms"}, wantErr: []string{`"10ms" is not a duration from 1s to 24h`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(func(k string) string { return tt.env[k] }, readTokenFile)
			if plugintest.WantErr(t, err, tt.wantErr...) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
	if _, err := LoadConfig(func(k string) string {
		return map[string]string{"HOLOGRAM_QQ_URL": "ws://a:1", "HOLOGRAM_QQ_TOKEN_FILE": dir}[k]
	}, readTokenFile); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory as the token file: %v", err)
	}
}

// TestManifest keeps plugin.json in step with the plugin: name, entry and every capability it
// uses (channels, hooks, lifecycle).
func TestManifest(t *testing.T) {
	t.Parallel()
	p := newQQ(Config{Rate: 1, Per: time.Minute}, NewBridge(nil), nil, time.Now).plugin()
	plugintest.CheckManifest(t, p, protocol.CapChannels, protocol.CapHooks, protocol.CapLifecycle)
}
