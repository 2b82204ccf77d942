package kernel

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"

	"github.com/hologramagent/hologram/plugins/host"
)

// fakeBuiltins makes dir hold a plugin.json for each name.
func fakeBuiltins(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, "plugin.json"), []byte(`{"name":"`+n+`","entry":"`+n+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuiltinPlaces(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "cmd", "homed", "homed")
	got := builtinPlaces("", exe)
	want := []string{systemPluginsDir, filepath.Join(base, "cmd", "homed", "plugins"),
		filepath.Join(base, "cmd", "homed", "..", "lib", "hologram", "plugins"), filepath.Join(base, "bin", "plugins")}
	if len(got) != len(want) {
		t.Fatalf("places %+v", got)
	}
	for i := range want {
		if got[i].dir != want[i] {
			t.Errorf("place %d: %s, want %s", i, got[i].dir, want[i])
		}
	}
	if got := builtinPlaces("/opt/p", exe); len(got) != 1 || got[0].dir != "/opt/p" {
		t.Fatalf("explicit: %+v", got)
	}
	if got := builtinPlaces("", ""); len(got) != 1 || got[0].dir != systemPluginsDir {
		t.Fatalf("no executable: %+v", got)
	}

	// The first place holding a built-in plugin wins; one holding none, or only unknown
	// plugins, is passed over with the reason.
	empty, unknown, good, later := filepath.Join(base, "empty"), filepath.Join(base, "unknown"), filepath.Join(base, "good"), filepath.Join(base, "later")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeBuiltins(t, unknown, "echo")
	fakeBuiltins(t, good, "shell", "files", "echo")
	fakeBuiltins(t, later, "notes")
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir, names, tried := findBuiltin([]builtinPlace{{"a", filepath.Join(base, "missing")}, {"b", file}, {"c", empty}, {"d", unknown},
		{"e", good}, {"f", later}})
	if dir != good || !slices.Equal(names, []string{"files", "shell"}) {
		t.Fatalf("found %s %v", dir, names)
	}
	for i, w := range []string{"does not exist", "not a directory", "holds no built-in plugin", "holds no built-in plugin"} {
		if !strings.Contains(tried[i], w) {
			t.Errorf("tried[%d] = %q, want %q", i, tried[i], w)
		}
	}
}

func TestBuiltinSpecs(t *testing.T) {
	dir := t.TempDir()
	fakeBuiltins(t, dir, "files", "notes", "calendar", "rss", "web", "shell", "qq", "echo")
	store := testStore(t)
	ctx := context.Background()
	if err := store.SetSetting(ctx, builtinPrefix+"rss", "disabled"); err != nil { // the owner's earlier choices
		t.Fatal(err)
	}
	if err := store.SetSetting(ctx, builtinPrefix+"shell", "enabled"); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = "/data"
	cfg.ConfigFile = "/conf/config.toml"
	cfg.Builtin = config.BuiltinConfig{Dir: dir, Enable: []string{"qq"}, Disable: []string{"web"},
		Env: map[string][]string{"qq": {"QQ_WS=ws://127.0.0.1:3001"}}}
	cfg.Plugins = []config.PluginConfig{{Name: "calendar", Command: []string{"my-calendar"}}} // shadows the built-in one
	k, h := pluginKernel(t, store, cfg, nil, nil)

	got := map[string]host.Spec{}
	for _, s := range h.added {
		got[s.Name] = s
	}
	if _, ok := got["echo"]; ok {
		t.Fatal("a plugin that is not a built-in one was added")
	}
	if s := got["calendar"]; s.Kind != host.KindMCP {
		t.Fatalf("the configured calendar must win: %+v", s)
	}
	for _, tt := range []struct {
		name     string
		disabled bool
	}{
		{"files", false}, {"notes", false}, // defaults
		{"rss", true},    // the owner disabled it
		{"shell", false}, // the owner enabled it
		{"web", true},    // the config file disables it
		{"qq", false},    // the config file enables it
	} {
		s, ok := got[tt.name]
		if !ok || s.Kind != host.KindNative || s.Dir != filepath.Join(dir, tt.name) || s.Disabled != tt.disabled {
			t.Errorf("%s: %+v (added %v), want disabled %v", tt.name, s, ok, tt.disabled)
			continue
		}
		if !slices.Contains(s.Env, EnvPluginDataDir+"=/data") || !slices.Contains(s.Env, EnvPluginConfigDir+"=/conf") {
			t.Errorf("%s: env %q", tt.name, s.Env)
		}
	}
	if !slices.Contains(got["qq"].Env, "QQ_WS=ws://127.0.0.1:3001") {
		t.Errorf("qq env %q", got["qq"].Env)
	}

	ps, err := k.Service().Plugins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Builtin != (p.Name != "calendar") {
			t.Errorf("%s: builtin %v", p.Name, p.Builtin)
		}
	}
	if _, err := k.Service().PluginAction(ctx, "files", client.PluginRemove); err == nil || !strings.Contains(err.Error(), "plugin files is built in: disable it instead") {
		t.Fatalf("remove: %v", err)
	}
	p, err := k.Service().PluginAction(ctx, "files", client.PluginDisable)
	if err != nil || !p.Builtin || p.State != host.StateDisabled {
		t.Fatalf("disable: %+v %v", p, err)
	}
	if v, err := store.GetSetting(ctx, builtinPrefix+"files"); err != nil || v != "disabled" {
		t.Fatalf("setting %q %v", v, err)
	}
	if _, err := k.Service().AddPlugin(ctx, client.PluginConfig{Name: "notes", Command: []string{"x"}}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("adding over a built-in plugin: %v", err)
	}
}

// TestBuiltinMusicDetected: the music plugin starts by default only when it has a player to
// control: a session bus in the kernel's environment, or an mpd that answers.
func TestBuiltinMusicDetected(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
	free.Close()
	t.Setenv("MPD_HOST", "127.0.0.1")
	t.Setenv("MPD_PORT", closed)
	for _, tc := range []struct {
		bus      string
		disabled bool
	}{{"", true}, {"unix:path=/run/user/1000/bus", false}} {
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", tc.bus)
		dir := t.TempDir()
		fakeBuiltins(t, dir, "files", "music")
		cfg := config.Default(func(string) string { return "" })
		cfg.DataDir = t.TempDir()
		cfg.Builtin = config.BuiltinConfig{Dir: dir}
		_, h := pluginKernel(t, testStore(t), cfg, nil, nil)
		i := slices.IndexFunc(h.added, func(s host.Spec) bool { return s.Name == "music" })
		if i < 0 || h.added[i].Disabled != tc.disabled {
			t.Errorf("bus %q: music %+v, want disabled %v", tc.bus, h.added, tc.disabled)
		}
	}
}
