package plugconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/plugintest"
)

// conf is a configuration file's shape.
type conf struct {
	Roots []string `toml:"roots"`
	Limit int      `toml:"limit"`
}

func TestLoad(t *testing.T) {
	home := t.TempDir()
	writeConf := func(t *testing.T, dir, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "plugins", "demo.toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kdata, kconf := filepath.Join(home, "kdata"), filepath.Join(home, "kconf")
	writeConf(t, kconf, "roots = [\"/srv\"]\nlimit = 3\n")
	bad := filepath.Join(home, "bad")
	writeConf(t, bad, "limit = \"three\"\n")
	unknown := filepath.Join(home, "unknown")
	writeConf(t, unknown, "limit = 3\nlimmit = 4\n")
	tests := []struct {
		name    string
		env     map[string]string
		want    File
		wantC   conf
		wantErr string
	}{
		{name: "the XDG directories, no file", env: map[string]string{"HOME": home},
			want: File{Data: filepath.Join(home, ".local", "share", "hologram"), Path: filepath.Join(home, ".config", "hologram", "plugins", "demo.toml")}},
		{name: "absolute XDG variables", env: map[string]string{"XDG_DATA_HOME": "/x/data", "XDG_CONFIG_HOME": "/x/conf"},
			want: File{Data: "/x/data/hologram", Path: "/x/conf/hologram/plugins/demo.toml"}},
		{name: "relative XDG variables are ignored", env: map[string]string{"HOME": home, "XDG_DATA_HOME": "rel"},
			want: File{Data: filepath.Join(home, ".local", "share", "hologram"), Path: filepath.Join(home, ".config", "hologram", "plugins", "demo.toml")}},
		{name: "the kernel's directories and a file", env: map[string]string{EnvDataDir: kdata, EnvConfigDir: kconf},
			want: File{Data: kdata, Path: filepath.Join(kconf, "plugins", "demo.toml"), Found: true}, wantC: conf{Roots: []string{"/srv"}, Limit: 3}},
		{name: "no HOME", env: map[string]string{},
			wantErr: "cannot tell the data and config directories (data \".local/share/hologram\", config \".config/hologram\"): set HOLOGRAM_DATA_DIR and HOLOGRAM_CONFIG_DIR, or HOME"},
		{name: "a bad value", env: map[string]string{EnvDataDir: kdata, EnvConfigDir: bad},
			wantErr: "config " + filepath.Join(bad, "plugins", "demo.toml") + ": toml: line 1 (last key \"limit\"): incompatible types"},
		{name: "an unknown key", env: map[string]string{EnvDataDir: kdata, EnvConfigDir: unknown},
			wantErr: "config " + filepath.Join(unknown, "plugins", "demo.toml") + ": unknown key \"limmit\" (roots, limit)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c conf
			f, err := Load(plugintest.Env(tt.env), "demo", &c, "roots, limit")
			if plugintest.WantErr(t, err, tt.wantErr) {
				return
			}
			if err != nil || f != tt.want || strings.Join(c.Roots, ",") != strings.Join(tt.wantC.Roots, ",") || c.Limit != tt.wantC.Limit {
				t.Fatalf("Load = %+v %+v %v, want %+v %+v", f, c, err, tt.want, tt.wantC)
			}
		})
	}
}

func TestStateDir(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"the override", map[string]string{"HOLOGRAM_DEMO_DIR": "/srv/demo/", "HOME": "/h"}, "/srv/demo", ""},
		{"a relative override", map[string]string{"HOLOGRAM_DEMO_DIR": "demo"}, "", `HOLOGRAM_DEMO_DIR="demo" must be an absolute path`},
		{"the override beats the kernel's data dir", map[string]string{"HOLOGRAM_DEMO_DIR": "/srv/demo", "HOLOGRAM_DATA_DIR": "/var/lib/hologram"}, "/srv/demo", ""},
		{"the kernel's data dir", map[string]string{"HOLOGRAM_DATA_DIR": "/var/lib/hologram", "XDG_DATA_HOME": "/d", "HOME": "/h"}, "/var/lib/hologram/demo", ""},
		{"a relative kernel data dir", map[string]string{"HOLOGRAM_DATA_DIR": "data", "HOME": "/h"}, "", `HOLOGRAM_DATA_DIR="data" must be an absolute path`},
		{"XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/h"}, "/d/hologram/demo", ""},
		{"HOME", map[string]string{"XDG_DATA_HOME": "d", "HOME": "/h"}, "/h/.local/share/hologram/demo", ""},
		{"neither", map[string]string{"HOME": "h"}, "", "neither XDG_DATA_HOME nor HOME is an absolute path: set HOLOGRAM_DEMO_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StateDir(plugintest.Env(tt.env), "HOLOGRAM_DEMO_DIR", "demo")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("StateDir = %q %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestExpandHome(t *testing.T) {
	tests := []struct {
		path, home, want, wantErr string
	}{
		{"~", "/h", "/h", ""},
		{"~/notes", "/h", "/h/notes", ""},
		{"/srv/notes", "", "/srv/notes", ""},
		{"~/notes", "", "", `dir "~/notes": HOME is not set`},
		{"~/notes", "rel", "", `dir "rel/notes" must be an absolute path (or start with ~/)`},
		{"notes", "/h", "", `dir "notes" must be an absolute path (or start with ~/)`},
		{"~bob/notes", "/h", "", `dir "~bob/notes" must be an absolute path (or start with ~/)`},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.home, func(t *testing.T) {
			got, err := ExpandHome("dir", tt.path, tt.home)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ExpandHome = %q %v, want %q", got, err, tt.want)
			}
		})
	}
}
