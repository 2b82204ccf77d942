package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// nopRegistry is a Registry that accepts everything.
type nopRegistry struct{}

func (nopRegistry) AddTool(plugin string, t ToolInfo, _ CallFunc) (string, error) {
	return plugin + "." + t.Name, nil
}
func (nopRegistry) RemoveTools(string) int { return 0 }

// writeNative writes a native plugin directory with the given manifest and entry files.
func writeNative(t *testing.T, manifest string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAddValidation(t *testing.T) {
	t.Parallel()
	good := writeNative(t, `{"name":"n","version":"1","entry":"bin/run","permissions":{"paths":["/tmp"]}}`,
		map[string]string{"bin/run": "#!/bin/sh\n"})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "evil"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlinked := writeNative(t, `{"name":"n","version":"1","entry":"link"}`, nil)
	if err := os.Symlink(filepath.Join(outside, "evil"), filepath.Join(symlinked, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want string // substring of the error; "" for success
	}{
		{"mcp ok", Spec{Name: "a.b_c-1", Command: []string{"true"}}, ""},
		{"native ok", Spec{Name: "nat", Dir: good}, ""},
		{"empty name", Spec{Command: []string{"true"}}, "name"},
		{"bad name", Spec{Name: "a/b", Command: []string{"true"}}, "name"},
		{"dotdot name", Spec{Name: "..", Command: []string{"true"}}, "name"},
		{"long name", Spec{Name: strings.Repeat("x", 65), Command: []string{"true"}}, "name"},
		{"both", Spec{Name: "x", Command: []string{"true"}, Dir: good}, "exactly one"},
		{"neither", Spec{Name: "x"}, "exactly one"},
		{"kind mismatch", Spec{Name: "x", Kind: KindNative, Command: []string{"true"}}, "needs a dir"},
		{"unknown kind", Spec{Name: "x", Kind: "wasm", Command: []string{"true"}}, "unknown kind"},
		{"empty argv0", Spec{Name: "x", Command: []string{""}}, "empty command"},
		{"bad env", Spec{Name: "x", Command: []string{"true"}, Env: []string{"NOEQUALS"}}, "KEY=VALUE"},
		{"negative frame", Spec{Name: "x", Command: []string{"true"}, MaxFrame: -1}, "negative"},
		{"no manifest", Spec{Name: "x", Dir: t.TempDir()}, "plugin.json"},
		{"escape", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"../evil"}`, nil)}, "relative path inside"},
		{"absolute", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"/bin/sh"}`, nil)}, "relative path inside"},
		{"symlink escape", Spec{Name: "x", Dir: symlinked}, "outside the plugin directory"},
		{"missing entry", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"nope"}`, nil)}, "no such file"},
		{"not executable", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"plugin.json"}`, nil)}, "not an executable"},
		{"no entry", Spec{Name: "x", Dir: writeNative(t, `{"name":"n"}`, nil)}, "entry is missing"},
		{"bad manifest name", Spec{Name: "x", Dir: writeNative(t, `{"name":"a b","entry":"x"}`, nil)}, "name"},
		{"bad json", Spec{Name: "x", Dir: writeNative(t, `{`, nil)}, "plugin.json"},
		{"mcp for anyone", Spec{Name: "x", Command: []string{"true"}, Visibility: VisibilityAny}, ""},
		{"unknown visibility", Spec{Name: "x", Command: []string{"true"}, Visibility: "public"}, `visibility "public" must be "owner" or "any"`},
		{"native visibility in the spec", Spec{Name: "x", Dir: good, Visibility: VisibilityAny}, "per tool in a native plugin's plugin.json"},
		{"manifest permissions", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"run","permissions":{"paths":[{"path":"${XDG_DATA_HOME}/x","access":"write"}]}}`,
			map[string]string{"run": "#!/bin/sh\n"})}, "plugin.json: permissions: paths[0]: path \"${XDG_DATA_HOME}/x\": unknown variable XDG_DATA_HOME"},
		{"manifest permissions access", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"run","permissions":{"paths":[{"path":"/x","access":"rw"}]}}`,
			map[string]string{"run": "#!/bin/sh\n"})}, `paths[0]: access "rw" must be`},
		{"manifest tool visibility", Spec{Name: "x", Dir: writeNative(t, `{"name":"n","entry":"run","tools":{"t":{"visibility":"all"}}}`,
			map[string]string{"run": "#!/bin/sh\n"})}, `tools.t.visibility "all" must be "owner" or "any"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := New(Options{Registry: nopRegistry{}})
			tt.spec.Disabled = true
			st, err := h.Add(context.Background(), tt.spec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Add: %v", err)
				}
				if st.State != StateDisabled {
					t.Fatalf("state %q, want disabled", st.State)
				}
				if _, err := h.Add(context.Background(), tt.spec); !errors.Is(err, ErrExists) {
					t.Fatalf("second Add: %v, want ErrExists", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Add: %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestNativeStatusAndManagement(t *testing.T) {
	t.Parallel()
	dir := writeNative(t, `{"name":"n","version":"1","entry":"run","permissions":{"paths":[{"path":"${HOLOGRAM_DATA_DIR}/n","access":"write"},`+
		`{"path":"${PLUGIN_DIR}/share","access":"read"},{"path":"~/.cache/n","access":"read"},"the folders of n.toml"],"env":["N_URL"],"network":true,"exec":true}}`,
		map[string]string{"run": "#!/bin/sh\n"})
	h := New(Options{Registry: nopRegistry{}})
	ctx := context.Background()
	st, err := h.Add(ctx, Spec{Name: "n", Dir: dir, Disabled: true, Env: []string{"HOLOGRAM_DATA_DIR=/var/lib/h"}})
	if err != nil {
		t.Fatal(err)
	}
	home := os.Getenv("HOME")
	wantPaths := []PathPermission{{Path: "/var/lib/h/n", Access: "write"}, {Path: dir + "/share", Access: "read"}, {Path: home + "/.cache/n", Access: "read"}}
	if st.Kind != KindNative || !st.Permissions.Exec || !st.Permissions.Network || fmt.Sprint(st.Permissions.Paths) != fmt.Sprint(wantPaths) ||
		fmt.Sprint(st.Permissions.Env, st.Permissions.Notes) != "[N_URL] [the folders of n.toml]" || st.Dir != dir {
		t.Fatalf("status %+v", st)
	}
	if _, err := h.Add(ctx, Spec{Name: "a", Command: []string{"x"}, Disabled: true}); err != nil {
		t.Fatal(err)
	}
	if l := h.List(); len(l) != 2 || l[0].Name != "a" || l[1].Name != "n" {
		t.Fatalf("List: %+v", l)
	}
	for _, f := range []func() error{
		func() error { _, err := h.Get("zz"); return err },
		func() error { _, err := h.Logs("zz", 1); return err },
		func() error { _, err := h.Enable(ctx, "zz"); return err },
		func() error { _, err := h.Disable(ctx, "zz"); return err },
		func() error { _, err := h.Restart(ctx, "zz"); return err },
		func() error { _, err := h.Remove(ctx, "zz"); return err },
	} {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
	}
	if st, err := h.Remove(ctx, "a"); err != nil || st.State != StateStopped {
		t.Fatalf("Remove: %+v %v", st, err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Add(ctx, Spec{Name: "b", Command: []string{"x"}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
}

func TestResultText(t *testing.T) {
	t.Parallel()
	img := base64.StdEncoding.EncodeToString(make([]byte, 1234))
	tests := []struct {
		name string
		res  protocol.CallToolResult
		want string
	}{
		{"texts", protocol.CallToolResult{Content: []protocol.Content{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}}}, "a\nb"},
		{"image", protocol.CallToolResult{Content: []protocol.Content{{Type: "image", MimeType: "image/png", Data: img}}}, "[image image/png, 1234 bytes]"},
		{"audio unpadded", protocol.CallToolResult{Content: []protocol.Content{{Type: "audio", MimeType: "audio/wav", Data: "AAAA" + "AA"}}}, "[audio audio/wav, 4 bytes]"},
		{"link", protocol.CallToolResult{Content: []protocol.Content{{Type: "resource_link", URI: "file:///x", Name: "x"}}}, "[resource file:///x (x)]"},
		{"embedded text", protocol.CallToolResult{Content: []protocol.Content{{Type: "resource", Resource: []byte(`{"uri":"file:///y","text":"你好"}`)}}}, "[resource file:///y]\n你好"},
		{"embedded blob", protocol.CallToolResult{Content: []protocol.Content{{Type: "resource", Resource: []byte(`{"uri":"file:///z","blob":"AAAA"}`)}}}, "[resource file:///z, 3 bytes]"},
		{"structured", protocol.CallToolResult{StructuredContent: []byte(`{"n":1}`)}, `{"n":1}`},
		{"unknown", protocol.CallToolResult{Content: []protocol.Content{{Type: "video"}}}, "[video content]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resultText(&tt.res); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRing(t *testing.T) {
	t.Parallel()
	r := newRing(3)
	for i := range 5 {
		r.add(LogLine{Line: string(rune('a' + i))})
	}
	got := ""
	for _, l := range r.last(0) {
		got += l.Line
	}
	if got != "cde" {
		t.Fatalf("all: %q", got)
	}
	if l := r.last(2); len(l) != 2 || l[0].Line != "d" || l[1].Line != "e" {
		t.Fatalf("last 2: %+v", l)
	}
}

// TestBreakerMath checks the window arithmetic without processes: the 4th crash within the
// window trips and holds however much time passes; crashes older than the window do not count.
func TestBreakerMath(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := breaker{window: 5 * time.Minute, max: 4}
	for i, want := range []int{1, 2, 3} {
		if n, tripped := b.record(t0.Add(time.Duration(i) * time.Second)); n != want || tripped {
			t.Fatalf("crash %d: n=%d tripped=%v", i+1, n, tripped)
		}
	}
	if n, tripped := b.record(t0.Add(5*time.Minute + 3*time.Second)); n != 1 || tripped {
		t.Fatalf("late 4th crash: n=%d tripped=%v, want 1 false", n, tripped)
	}
	for range 3 {
		b.record(t0.Add(6 * time.Minute))
	}
	if !b.tripped {
		t.Fatal("4 crashes within the window did not trip")
	}
	if _, tripped := b.record(t0.Add(24 * time.Hour)); !tripped {
		t.Fatal("the breaker let go with time")
	}
	b.reset()
	if n, tripped := b.record(t0.Add(24 * time.Hour)); n != 1 || tripped {
		t.Fatalf("after reset: n=%d tripped=%v", n, tripped)
	}
}

func TestCapabilityFor(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]string{
		"sampling/createMessage": "llm", "llm/complete": "llm", "memory/search": "memory",
		"owner/notify": "notify", "events/subscribe": "events", "kernel/paused": "lifecycle", "channel/input": "channels",
		"hooks/run": "hooks", "frobnicate": "",
	} {
		if got := protocol.CapabilityFor(method); got != want {
			t.Errorf("%s: %q, want %q", method, got, want)
		}
	}
}

// TestToolVisibility: an MCP server's tools have the visibility the owner gave the server,
// whatever the server claims; a native plugin's, its manifest's, else its own declaration; a
// tool nobody declares is owner-only.
func TestToolVisibility(t *testing.T) {
	manifest := &Manifest{Tools: map[string]ToolDecl{"declared_any": {VisibilityAny}, "declared_owner": {VisibilityOwner}}}
	for _, tt := range []struct {
		name string
		spec Spec
		m    *Manifest
		tool protocol.Tool
		want string
	}{
		{"mcp default", Spec{Kind: KindMCP}, nil, protocol.Tool{Name: "t"}, VisibilityOwner},
		{"mcp claims any", Spec{Kind: KindMCP, Visibility: VisibilityOwner}, nil, protocol.Tool{Name: "t", Visibility: VisibilityAny}, VisibilityOwner},
		{"mcp added for anyone", Spec{Kind: KindMCP, Visibility: VisibilityAny}, nil, protocol.Tool{Name: "t"}, VisibilityAny},
		{"native undeclared", Spec{Kind: KindNative}, manifest, protocol.Tool{Name: "t"}, VisibilityOwner},
		{"native sdk any", Spec{Kind: KindNative}, manifest, protocol.Tool{Name: "t", Visibility: VisibilityAny}, VisibilityAny},
		{"native sdk nonsense", Spec{Kind: KindNative}, manifest, protocol.Tool{Name: "t", Visibility: "everyone"}, VisibilityOwner},
		{"native manifest any", Spec{Kind: KindNative}, manifest, protocol.Tool{Name: "declared_any"}, VisibilityAny},
		{"the manifest wins", Spec{Kind: KindNative}, manifest, protocol.Tool{Name: "declared_owner", Visibility: VisibilityAny}, VisibilityOwner},
	} {
		p := &plugin{prep: &prepared{spec: tt.spec, manifest: tt.m}}
		if got := p.toolVisibility(tt.tool); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestBuiltinManifestPermissions: every built-in plugin's plugin.json declares its permissions
// in the machine-readable form (its paths expand; network said either way), which the plugins
// confine themselves to.
func TestBuiltinManifestPermissions(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../builtin/*/plugin.json")
	if err != nil || len(files) < 9 {
		t.Fatalf("built-in manifests: %v %v", files, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var generic struct {
			Permissions map[string]json.RawMessage `json:"permissions"`
		}
		json.Unmarshal(raw, &generic)
		if m.Name == "echo" {
			continue // the test plugin: no permissions
		}
		if _, ok := generic.Permissions["network"]; !ok || string(generic.Permissions["network"])[0] == '[' {
			t.Errorf("%s: network must be declared true or false", f)
		}
		exp, err := m.Permissions.Expand(permissionVars(Spec{Dir: filepath.Dir(f), Env: []string{"HOLOGRAM_DATA_DIR=/data", "HOME=/home/o"}}))
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		for _, p := range exp.Paths {
			if strings.HasPrefix(p.Path, "/home/o") && p.Access == "write" {
				t.Errorf("%s: writes in the home itself: %v", f, p)
			}
		}
	}
}
