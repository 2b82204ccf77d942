package plugintest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/plugins/sdk"
)

func TestManifest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin.json")
	if err := os.WriteFile(path, []byte(`{"name":"demo","version":"1.2.0","entry":"demo","capabilities":["memory","llm"],"permissions":{"exec":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(path)
	if err != nil || m.Name != "demo" || m.Version != "1.2.0" || m.Entry != "demo" || !m.Permissions.Exec || len(m.Capabilities) != 2 {
		t.Fatalf("ReadManifest = %+v, %v", m, err)
	}
	p := sdk.Plugin{Name: "demo", Version: "1.2.0"}
	tests := []struct {
		name string
		p    sdk.Plugin
		caps []string
		want string // in the problem; "" for none
	}{
		{"agrees, in another order", p, []string{"llm", "memory"}, ""},
		{"another version", sdk.Plugin{Name: "demo", Version: "1.3.0"}, []string{"llm", "memory"}, "plugin demo 1.3.0"},
		{"another name", sdk.Plugin{Name: "other", Version: "1.2.0"}, []string{"llm", "memory"}, "plugin other 1.2.0 (the entry must be the plugin's name)"},
		{"a capability too many", p, []string{"llm"}, "declares the capabilities [memory llm]; the plugin uses [llm]"},
		{"a capability missing", p, []string{"llm", "memory", "notify"}, "the plugin uses [llm memory notify]"},
		{"a valid schema", withSchema(p, `{"type":"object","properties":{"q":{"type":"array","items":{"type":"string"}}},"required":["q"]}`), []string{"llm", "memory"}, ""},
		{"required null", withSchema(p, `{"type":"object","properties":{},"required":null}`), []string{"llm", "memory"}, "$.required is null"},
		{"required not an array", withSchema(p, `{"type":"object","required":"q"}`), []string{"llm", "memory"}, "$.required is not an array"},
		{"a nested null", withSchema(p, `{"type":"object","properties":{"q":{"type":"array","items":{"enum":null}}}}`), []string{"llm", "memory"}, "$.properties.q.items.enum is null"},
		{"not an object root", withSchema(p, `{"type":"string"}`), []string{"llm", "memory"}, "the root is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mismatch(m, tt.p, tt.caps)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("mismatch = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := ReadManifest(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing manifest: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"name":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(path); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("a broken manifest: %v", err)
	}
}

// withSchema returns p with one tool whose input schema is schema.
func withSchema(p sdk.Plugin, schema string) sdk.Plugin {
	p.Tools = []sdk.Tool{{Name: "t", InputSchema: []byte(schema)}}
	return p
}

func TestArgsAndEnv(t *testing.T) {
	if got := Args("path", "a.txt", "max", 3, "tags", []string{"x"}); got != `{"max":3,"path":"a.txt","tags":["x"]}` {
		t.Fatalf("Args = %s", got)
	}
	if got := Args(); got != `{}` {
		t.Fatalf("Args() = %s", got)
	}
	for _, kv := range [][]any{{"odd"}, {3, "not a key"}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "plugintest.Args: ") {
					t.Fatalf("Args(%v) did not panic with a message: %v", kv, r)
				}
			}()
			Args(kv...)
		}()
	}
	getenv := Env(map[string]string{"HOME": "/h"})
	if getenv("HOME") != "/h" || getenv("PATH") != "" {
		t.Fatal("Env")
	}
}

func TestErrProblem(t *testing.T) {
	boom := errors.New("config x: bad root, bad limit")
	tests := []struct {
		name       string
		err        error
		want       []string
		problem    string
		wantWanted bool
	}{
		{"nothing wanted", boom, nil, "", false},
		{"only empty strings", nil, []string{""}, "", false},
		{"all there", boom, []string{"bad root", "bad limit"}, "", true},
		{"no error", nil, []string{"bad root"}, `no error, want one containing ["bad root"]`, true},
		{"one lacking", boom, []string{"bad root", "bad mode"}, `error "config x: bad root, bad limit" lacks ["bad mode"]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problem, wanted := errProblem(tt.err, tt.want)
			if problem != tt.problem || wanted != tt.wantWanted {
				t.Fatalf("errProblem = %q %v, want %q %v", problem, wanted, tt.problem, tt.wantWanted)
			}
		})
	}
	if WantErr(t, boom) || !WantErr(t, boom, "bad root") {
		t.Fatal("WantErr")
	}
}
