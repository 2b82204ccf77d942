package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// envMap returns an env lookup over m.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultXDG(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	tests := []struct {
		name                                 string
		env                                  map[string]string
		data, socket, key, configFile, token string
	}{
		{
			name:       "xdg variables",
			env:        map[string]string{"HOME": "/home/me", "XDG_DATA_HOME": "/xd", "XDG_CONFIG_HOME": "/xc", "XDG_RUNTIME_DIR": "/run/user/1000"},
			data:       "/xd/hologram",
			socket:     "/run/user/1000/hologram/homed.sock",
			key:        "/xc/hologram/key",
			configFile: "/xc/hologram/config.toml",
			token:      "/xc/hologram/token",
		},
		{
			name:       "home fallbacks",
			env:        map[string]string{"HOME": "/home/me"},
			data:       "/home/me/.local/share/hologram",
			socket:     "/tmp/hologram-" + uid + "/homed.sock",
			key:        "/home/me/.config/hologram/key",
			configFile: "/home/me/.config/hologram/config.toml",
			token:      "/home/me/.config/hologram/token",
		},
		{
			name:       "relative xdg values ignored",
			env:        map[string]string{"HOME": "/home/me", "XDG_DATA_HOME": "rel", "XDG_CONFIG_HOME": "rel", "XDG_RUNTIME_DIR": "rel"},
			data:       "/home/me/.local/share/hologram",
			socket:     "/tmp/hologram-" + uid + "/homed.sock",
			key:        "/home/me/.config/hologram/key",
			configFile: "/home/me/.config/hologram/config.toml",
			token:      "/home/me/.config/hologram/token",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default(envMap(tt.env))
			got := []string{c.DataDir, c.Socket, c.KeyFile, c.ConfigFile, c.TokenFile}
			want := []string{tt.data, tt.socket, tt.key, tt.configFile, tt.token}
			if !slices.Equal(got, want) {
				t.Fatalf("got %q\nwant %q", got, want)
			}
			if s := DefaultSocket(envMap(tt.env)); s != tt.socket {
				t.Fatalf("DefaultSocket = %q, want %q", s, tt.socket)
			}
			if c.Agent.MaxRounds != 25 || c.Agent.MaxWall.Duration != 10*time.Minute || c.Agent.ToolTimeout.Duration != time.Minute ||
				c.Agent.TokenBudget != 0 || c.Agent.HistoryLimit != 200 || c.API.MaxBodyBytes != 4<<20 || c.LogLevel != "info" {
				t.Fatalf("limits: %+v %+v %q", c.Agent, c.API, c.LogLevel)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("defaults invalid: %v", err)
			}
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	home := t.TempDir()
	defaultConfig := filepath.Join(home, ".config", "hologram", "config.toml")
	writeFile(t, defaultConfig, `
data_dir = "/file/data"
socket = "/file/sock"
listen = "127.0.0.1:1111"
log_level = "warn"
token_file = "/file/token"
tls_cert = "/file/cert.pem"
tls_key = "/file/key.pem"
key_file = "/file/key"
insecure = true

[agent]
max_rounds = 7
max_wall = "90s"
tool_timeout = "5s"
token_budget = 1000
history_limit = 50

[api]
max_body_bytes = 1024
allowed_origins = ["https://example.com"]
`)
	otherConfig := filepath.Join(t.TempDir(), "other.toml")
	writeFile(t, otherConfig, "data_dir = \"/other/data\"\n")

	type want struct {
		data, socket, listen, level, token, config string
		rounds                                     int
	}
	tests := []struct {
		name     string
		noFile   bool
		env      map[string]string
		args     []string
		want     want
		wantRest []string
	}{
		{
			name:   "defaults",
			noFile: true,
			want:   want{data: filepath.Join(home, ".local/share/hologram"), socket: "/run/u/hologram/homed.sock", level: "info", token: filepath.Join(home, ".config/hologram/token"), config: defaultConfig, rounds: 25},
		},
		{
			name: "file over defaults",
			want: want{data: "/file/data", socket: "/file/sock", listen: "127.0.0.1:1111", level: "warn", token: "/file/token", config: defaultConfig, rounds: 7},
		},
		{
			name: "env over file",
			env:  map[string]string{"HOLOGRAM_DATA": "/env/data", "HOLOGRAM_SOCKET": "/env/sock", "HOLOGRAM_LISTEN": "[::1]:2222", "HOLOGRAM_LOG_LEVEL": "DEBUG", "HOLOGRAM_TOKEN_FILE": "/env/token"},
			want: want{data: "/env/data", socket: "/env/sock", listen: "[::1]:2222", level: "debug", token: "/env/token", config: defaultConfig, rounds: 7},
		},
		{
			name:     "flags over env",
			env:      map[string]string{"HOLOGRAM_DATA": "/env/data", "HOLOGRAM_SOCKET": "/env/sock", "HOLOGRAM_LOG_LEVEL": "debug"},
			args:     []string{"--data", "/flag/data", "-socket=/flag/sock", "--listen", "0.0.0.0:3333", "--log-level", "error", "--token-file", "/flag/token", "bench", "--n", "3"},
			want:     want{data: "/flag/data", socket: "/flag/sock", listen: "0.0.0.0:3333", level: "error", token: "/flag/token", config: defaultConfig, rounds: 7},
			wantRest: []string{"bench", "--n", "3"},
		},
		{
			name: "env names config file",
			env:  map[string]string{"HOLOGRAM_CONFIG": otherConfig},
			want: want{data: "/other/data", socket: "/run/u/hologram/homed.sock", level: "info", token: filepath.Join(home, ".config/hologram/token"), config: otherConfig, rounds: 25},
		},
		{
			name: "flag config over env config",
			env:  map[string]string{"HOLOGRAM_CONFIG": "/does/not/exist.toml"},
			args: []string{"--config", otherConfig},
			want: want{data: "/other/data", socket: "/run/u/hologram/homed.sock", level: "info", token: filepath.Join(home, ".config/hologram/token"), config: otherConfig, rounds: 25},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": home, "XDG_RUNTIME_DIR": "/run/u"}
			if tt.noFile {
				env["HOME"] = t.TempDir()
				tt.want.data = filepath.Join(env["HOME"], ".local/share/hologram")
				tt.want.token = filepath.Join(env["HOME"], ".config/hologram/token")
				tt.want.config = filepath.Join(env["HOME"], ".config/hologram/config.toml")
			}
			for k, v := range tt.env {
				env[k] = v
			}
			c, rest, err := Load("homed", tt.args, envMap(env))
			if err != nil {
				t.Fatal(err)
			}
			got := want{c.DataDir, c.Socket, c.Listen, c.LogLevel, c.TokenFile, c.ConfigFile, c.Agent.MaxRounds}
			if got != tt.want {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if !slices.Equal(rest, tt.wantRest) && len(rest)+len(tt.wantRest) > 0 {
				t.Fatalf("rest = %q, want %q", rest, tt.wantRest)
			}
		})
	}
}

func TestLoadFileFields(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "c.toml")
	writeFile(t, path, `
data_dir = "~/mydata"
key_file = "/k"
tls_cert = "/c.pem"
tls_key = "/k.pem"
insecure = true
[agent]
max_wall = "90s"
tool_timeout = "1m30s"
token_budget = 1000
history_limit = 50
[api]
max_body_bytes = 1024
allowed_origins = ["https://example.com", "http://localhost:8080"]
`)
	c, _, err := Load("homed", []string{"--config", path}, envMap(map[string]string{"HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != filepath.Join(home, "mydata") || c.KeyFile != "/k" || c.TLSCert != "/c.pem" || c.TLSKey != "/k.pem" || !c.Insecure {
		t.Errorf("paths: %+v", c)
	}
	if c.Agent.MaxWall.Duration != 90*time.Second || c.Agent.ToolTimeout.Duration != 90*time.Second ||
		c.Agent.TokenBudget != 1000 || c.Agent.HistoryLimit != 50 || c.Agent.MaxRounds != 25 {
		t.Errorf("agent: %+v", c.Agent)
	}
	if c.API.MaxBodyBytes != 1024 || !slices.Equal(c.API.AllowedOrigins, []string{"https://example.com", "http://localhost:8080"}) {
		t.Errorf("api: %+v", c.API)
	}
}

func TestLoadRelativePaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := Load("homed", []string{"--data", "rel/data", "--socket", "s.sock"}, envMap(map[string]string{"HOME": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != filepath.Join(wd, "rel/data") || c.Socket != filepath.Join(wd, "s.sock") {
		t.Fatalf("DataDir %q Socket %q not made absolute", c.DataDir, c.Socket)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.toml")
	writeFile(t, unknown, "data_dir = \"/d\"\nlisten_addr = \":1\"\n[agent]\nmax_round = 3\n")
	badDur := filepath.Join(dir, "dur.toml")
	writeFile(t, badDur, "[agent]\nmax_wall = \"ten minutes\"\n")
	badSyntax := filepath.Join(dir, "syntax.toml")
	writeFile(t, badSyntax, "data_dir = \n")
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantErr  []string
		wantHelp bool
	}{
		{name: "unknown keys", args: []string{"--config", unknown}, wantErr: []string{"unknown key", `"listen_addr"`, `"agent.max_round"`, unknown}},
		{name: "missing explicit config flag", args: []string{"--config", filepath.Join(dir, "nope.toml")}, wantErr: []string{"nope.toml", "no such file"}},
		{name: "missing explicit config env", env: map[string]string{"HOLOGRAM_CONFIG": filepath.Join(dir, "gone.toml")}, wantErr: []string{"gone.toml"}},
		{name: "bad duration", args: []string{"--config", badDur}, wantErr: []string{"ten minutes", "duration"}},
		{name: "bad toml", args: []string{"--config", badSyntax}, wantErr: []string{badSyntax}},
		{name: "unknown flag", args: []string{"--frobnicate"}, wantErr: []string{"frobnicate", "Usage: homed"}},
		{name: "help", args: []string{"--help"}, wantErr: []string{"Usage: homed", "-data", "-log-level"}, wantHelp: true},
		{name: "short help", args: []string{"-h"}, wantErr: []string{"Usage: homed"}, wantHelp: true},
		{name: "invalid value from flags", args: []string{"--log-level", "loud"}, wantErr: []string{`log level "loud"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			_, _, err := Load("homed", tt.args, envMap(env))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if errors.Is(err, flag.ErrHelp) != tt.wantHelp {
				t.Errorf("errors.Is(err, flag.ErrHelp) = %v, want %v", !tt.wantHelp, tt.wantHelp)
			}
		})
	}
}

func TestLoadVersion(t *testing.T) {
	// --version skips a broken config file and validation.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	writeFile(t, bad, "nonsense = 1\n")
	c, rest, err := Load("homed", []string{"--version", "--config", bad, "--log-level", "loud"}, envMap(map[string]string{"HOME": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Version || len(rest) != 0 {
		t.Fatalf("Version = %v, rest = %q", c.Version, rest)
	}
}

func TestValidate(t *testing.T) {
	base := func() Config {
		c := Default(envMap(map[string]string{"HOME": "/home/me", "XDG_RUNTIME_DIR": "/run/u"}))
		return c
	}
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr []string
	}{
		{"valid", func(c *Config) {}, nil},
		{"valid listen and tls", func(c *Config) { c.Listen = "[::1]:8765"; c.TLSCert = "/c"; c.TLSKey = "/k" }, nil},
		{"valid listen all interfaces", func(c *Config) { c.Listen = ":8765" }, nil},
		{"cert without key", func(c *Config) { c.TLSCert = "/c" }, []string{"--tls-cert is set but --tls-key is not"}},
		{"key without cert", func(c *Config) { c.TLSKey = "/k" }, []string{"--tls-key is set but --tls-cert is not"}},
		{"listen without port", func(c *Config) { c.Listen = "localhost" }, []string{`listen address "localhost"`, "host:port"}},
		{"listen bad port", func(c *Config) { c.Listen = "localhost:http" }, []string{`port "http"`}},
		{"listen port too large", func(c *Config) { c.Listen = "localhost:70000" }, []string{`port "70000"`}},
		{"unknown log level", func(c *Config) { c.LogLevel = "verbose" }, []string{`log level "verbose"`}},
		{"non-positive limits", func(c *Config) {
			c.Agent.MaxRounds = 0
			c.Agent.MaxWall.Duration = 0
			c.Agent.ToolTimeout.Duration = -time.Second
			c.Agent.TokenBudget = -1
			c.Agent.HistoryLimit = 0
			c.Agent.MaxResultBytes = 100
			c.Agent.MaxTools = 129
			c.API.MaxBodyBytes = 0
		}, []string{"agent.max_rounds", "agent.max_wall", "agent.tool_timeout", "agent.token_budget", "agent.history_limit",
			"agent.max_result_bytes must be 0 (the default, 64 KiB) or at least 4096, got 100", "agent.max_tools must be 0 (the default, 64) to 127", "api.max_body_bytes"}},
		{"relative path", func(c *Config) { c.DataDir = "data" }, []string{`data dir "data" must be an absolute path`}},
		{"empty data dir", func(c *Config) { c.DataDir = "" }, []string{"data dir (--data) must be set"}},
		{"bad origin", func(c *Config) { c.API.AllowedOrigins = []string{"example.com"} }, []string{`"example.com" is not an origin`}},
		{"plugin visibility", func(c *Config) {
			c.Plugins = []PluginConfig{{Name: "a", Command: []string{"x"}, Visibility: "all"}, {Name: "b", Dir: "/p", Visibility: "any"}}
		}, []string{`plugin "a": visibility "all" must be "owner" (the default) or "any"`, `plugin "b": visibility is for MCP servers`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mutate(&c)
			err := c.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		text    string
		want    time.Duration
		wantErr bool
	}{
		{"90s", 90 * time.Second, false},
		{"10m", 10 * time.Minute, false},
		{"1h30m", 90 * time.Minute, false},
		{"250ms", 250 * time.Millisecond, false},
		{"90", 0, true},
		{"soon", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var d Duration
			err := d.UnmarshalText([]byte(tt.text))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && d.Duration != tt.want {
				t.Fatalf("got %v, want %v", d.Duration, tt.want)
			}
		})
	}
	t.Run("toml round trip", func(t *testing.T) {
		var buf strings.Builder
		in := AgentConfig{MaxRounds: 3, MaxWall: Duration{90 * time.Second}, ToolTimeout: Duration{time.Minute}}
		if err := toml.NewEncoder(&buf).Encode(in); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `max_wall = "1m30s"`) {
			t.Fatalf("encoded:\n%s", buf.String())
		}
		var out AgentConfig
		if _, err := toml.Decode(buf.String(), &out); err != nil {
			t.Fatal(err)
		}
		if out != in {
			t.Fatalf("round trip %+v != %+v", out, in)
		}
	})
}

func TestAddFlags(t *testing.T) {
	c := Default(envMap(map[string]string{"HOME": "/home/me"}))
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	AddFlags(fs, &c)
	for _, n := range []string{"data", "socket", "listen", "token-file", "tls-cert", "tls-key", "key-file", "insecure", "config", "log-level", "version"} {
		f := fs.Lookup(n)
		if f == nil {
			t.Fatalf("flag %q not defined", n)
		}
		if _, ok := flagFields[n]; !ok {
			t.Fatalf("flag %q not applied by Load", n)
		}
	}
	if got := fs.Lookup("data").DefValue; got != "/home/me/.local/share/hologram" {
		t.Fatalf("data default %q", got)
	}
	if err := fs.Parse([]string{"-insecure", "--key-file", "/k"}); err != nil {
		t.Fatal(err)
	}
	if !c.Insecure || c.KeyFile != "/k" {
		t.Fatalf("flags not bound: %+v", c)
	}
}

func TestSlogLevel(t *testing.T) {
	for _, lvl := range []string{"debug", "info", "warn", "error", "bogus"} {
		t.Run(lvl, func(t *testing.T) {
			c := Config{LogLevel: lvl}
			want := map[string]string{"debug": "DEBUG", "info": "INFO", "warn": "WARN", "error": "ERROR", "bogus": "INFO"}[lvl]
			if got := c.SlogLevel().String(); got != want {
				t.Fatalf("SlogLevel() = %s, want %s", got, want)
			}
		})
	}
}
