package main

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
	"github.com/hologramagent/hologram/plugins/sdk/sdktest"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	found := func(p string) (string, error) {
		if p == "/usr/lib/chromium/chromium" || p == "/opt/chrome" {
			return p, nil
		}
		return "", errors.New("not found")
	}
	none := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name    string
		env     map[string]string
		look    func(string) (string, error)
		check   func(t *testing.T, c Config)
		wantErr []string
	}{
		{name: "defaults", look: found, check: func(t *testing.T, c Config) {
			if c.Timeout != 30*time.Second || c.MaxBytes != 5<<20 || c.Chromium != "/usr/lib/chromium/chromium" || len(c.Allow)+len(c.Deny) != 0 {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "no chromium", look: none, check: func(t *testing.T, c Config) {
			if c.Chromium != "" {
				t.Fatalf("chromium %q", c.Chromium)
			}
		}},
		{name: "everything", look: found, env: map[string]string{"HOLOGRAM_WEB_ALLOW": "10.0.0.0/8, nas.lan 127.0.0.1:8080",
			"HOLOGRAM_WEB_DENY": "127.0.0.1:9999", "HOLOGRAM_LISTEN": "0.0.0.0:8765", "HOLOGRAM_WEB_TIMEOUT": "5s",
			"HOLOGRAM_WEB_MAX_BYTES": "2048", "HOLOGRAM_WEB_CHROMIUM": "/opt/chrome"},
			check: func(t *testing.T, c Config) {
				if len(c.Allow) != 3 || len(c.Deny) != 2 || c.Timeout != 5*time.Second || c.MaxBytes != 2048 || c.Chromium != "/opt/chrome" {
					t.Fatalf("%+v", c)
				}
				g := NewGuard(c.Allow, c.Deny, func() []netip.Addr { return nil })
				if err := g.Check("127.0.0.1", netip.MustParseAddrPort("127.0.0.1:8765")); err == nil || !strings.Contains(err.Error(), "HOLOGRAM_LISTEN") {
					t.Fatalf("the kernel's API on every address: %v", err)
				}
			}},
		{name: "all bad", look: none, env: map[string]string{"HOLOGRAM_WEB_ALLOW": "ok.lan,host!", "HOLOGRAM_WEB_DENY": "nohostport",
			"HOLOGRAM_LISTEN": "8765", "HOLOGRAM_WEB_TIMEOUT": "forever", "HOLOGRAM_WEB_MAX_BYTES": "12", "HOLOGRAM_WEB_CHROMIUM": "/nope"},
			wantErr: []string{"HOLOGRAM_WEB_ALLOW: allow entry \"host!\"", "HOLOGRAM_WEB_DENY: deny entry \"nohostport\"",
				"HOLOGRAM_LISTEN: deny entry \"8765\"", "HOLOGRAM_WEB_TIMEOUT \"forever\"", "HOLOGRAM_WEB_MAX_BYTES 12: must be from 1024",
				"HOLOGRAM_WEB_CHROMIUM \"/nope\": not found"}},
		{name: "timeout too long", look: none, env: map[string]string{"HOLOGRAM_WEB_TIMEOUT": "1h"}, wantErr: []string{"must be from 1s to 2m0s"}},
		{name: "max bytes not a number", look: none, env: map[string]string{"HOLOGRAM_WEB_MAX_BYTES": "5MB"}, wantErr: []string{"want a number of bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(func(k string) string { return tt.env[k] }, tt.look)
			if plugintest.WantErr(t, err, tt.wantErr...) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

// TestManifest keeps plugin.json in step with the plugin.
func TestManifest(t *testing.T) {
	t.Parallel()
	plugintest.CheckManifest(t, newWeb(Config{Timeout: time.Second, MaxBytes: 1024}, discard()).plugin())
}

func TestToolArguments(t *testing.T) {
	t.Parallel()
	w := newWeb(Config{Timeout: time.Second, MaxBytes: 1024}, discard())
	k := sdktest.Start(t, w.plugin(), sdktest.Options{Plugin: "web"})
	tests := []struct{ tool, args, wantErr string }{
		{"web_fetch", `{}`, "the url is empty"},
		{"web_fetch", `{"url":"https://example.com","extra":1}`, `unknown field "extra"`},
		{"web_fetch", `{"url":"https://example.com","max_chars":-3}`, "max_chars must be from 1 to 1000000, got -3"},
		{"web_fetch", `{"url":"javascript:alert(1)"}`, `scheme "javascript" is refused`},
		{"web_fetch", `{"url":"http://192.168.1.1/"}`, "a private-range address, not allow-listed"},
		{"web_browse", `{"url":"https://example.com","wait_for":"` + strings.Repeat("a", 600) + `"}`, "wait_for has 600 bytes, at most 512"},
		{"web_browse", `{"url":"file:///etc/passwd"}`, `scheme "file" is refused`},
		{"web_browse", `{"url":42}`, "bad arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args[:min(len(tt.args), 40)], func(t *testing.T) {
			_, err := k.ToolText(context.Background(), tt.tool, tt.args, "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}
