// Package plugintest holds the helpers the built-in plugins' unit tests share: the check that
// plugin.json agrees with the plugin, tool arguments built from key/value pairs, a getenv over
// a map, and the error check of table-driven cases. Import it from tests only.
//
// The tests that build a plugin and run it under the real host and kernel use
// kernel/kerneltest/hosttest instead.
package plugintest

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/plugins/sdk"
)

// Manifest is what the tests read of a plugin.json.
type Manifest struct {
	Name, Version, Entry string
	Capabilities         []string
	Permissions          struct{ Exec bool }
}

// ReadManifest reads the manifest at path.
func ReadManifest(path string) (Manifest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// CheckManifest keeps plugin.json (in the test's directory, the plugin's) in step with the
// plugin p: the same name and version, the binary named after the plugin (the entry `make
// build` and the kernel use), and exactly the capabilities given, in any order. It returns
// the manifest for further checks.
func CheckManifest(t testing.TB, p sdk.Plugin, capabilities ...string) Manifest {
	t.Helper()
	m, err := ReadManifest("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	if problem := mismatch(m, p, capabilities); problem != "" {
		t.Fatal(problem)
	}
	return m
}

// mismatch says how m disagrees with p and its capabilities ("" when it does not).
func mismatch(m Manifest, p sdk.Plugin, capabilities []string) string {
	if m.Name != p.Name || m.Version != p.Version || m.Entry != p.Name {
		return fmt.Sprintf("manifest %+v, plugin %s %s (the entry must be the plugin's name)", m, p.Name, p.Version)
	}
	got, want := slices.Sorted(slices.Values(m.Capabilities)), slices.Sorted(slices.Values(capabilities))
	if !slices.Equal(got, want) {
		return fmt.Sprintf("plugin.json declares the capabilities %v; the plugin uses %v", m.Capabilities, capabilities)
	}
	for _, tool := range p.Tools {
		if problem := schemaProblem(tool.InputSchema); problem != "" {
			return fmt.Sprintf("tool %s: input schema %s: %s", tool.Name, tool.InputSchema, problem)
		}
	}
	return ""
}

// schemaProblem says what an OpenAI-compatible server would refuse in a tool's input schema
// ("" when nothing): the root must be an object schema, no keyword may be null, "required"
// must be an array of strings and "properties" an object whose values are schemas.
func schemaProblem(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return err.Error()
	}
	obj, ok := root.(map[string]any)
	if !ok || obj["type"] != "object" {
		return `the root is not {"type":"object",…}`
	}
	var walk func(path string, v any) string
	walk = func(path string, v any) string {
		m, ok := v.(map[string]any)
		if !ok {
			return path + " is not a schema object"
		}
		for k, val := range m {
			switch {
			case val == nil:
				return fmt.Sprintf("%s.%s is null", path, k)
			case k == "required":
				list, ok := val.([]any)
				if !ok {
					return path + ".required is not an array"
				}
				for _, r := range list {
					if _, ok := r.(string); !ok {
						return path + ".required holds a non-string"
					}
				}
			case k == "properties":
				props, ok := val.(map[string]any)
				if !ok {
					return path + ".properties is not an object"
				}
				for name, sub := range props {
					if problem := walk(path+".properties."+name, sub); problem != "" {
						return problem
					}
				}
			case k == "items":
				if problem := walk(path+".items", val); problem != "" {
					return problem
				}
			}
		}
		return ""
	}
	return walk("$", obj)
}

// Args returns the JSON object of the key/value pairs kv, a tool call's arguments:
// Args("path", "a.txt", "max", 3) is {"max":3,"path":"a.txt"}. It panics on an odd count or a
// key that is not a string, a mistake in the test.
func Args(kv ...any) string {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("plugintest.Args: %d values, want key/value pairs", len(kv)))
	}
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			panic(fmt.Sprintf("plugintest.Args: key %v is not a string", kv[i]))
		}
		m[k] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("plugintest.Args: %v", err))
	}
	return string(b)
}

// Env returns a getenv over m (a missing variable is "").
func Env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// WantErr checks err against a table case's expected error: want lists what the error's text
// must contain (empty strings do not count). When something is wanted, err must contain all of
// it (else t fails) and WantErr returns true, the case being done; when nothing is, it returns
// false and leaves err to the caller.
func WantErr(t testing.TB, err error, want ...string) bool {
	t.Helper()
	if problem, wanted := errProblem(err, want); problem != "" {
		t.Fatal(problem)
	} else if wanted {
		return true
	}
	return false
}

// errProblem says how err misses want ("" when it does not) and whether anything is wanted.
func errProblem(err error, want []string) (problem string, wanted bool) {
	want = slices.DeleteFunc(slices.Clone(want), func(w string) bool { return w == "" })
	switch {
	case len(want) == 0:
		return "", false
	case err == nil:
		return fmt.Sprintf("no error, want one containing %q", want), true
	}
	var lacking []string
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			lacking = append(lacking, w)
		}
	}
	if len(lacking) > 0 {
		return fmt.Sprintf("error %q lacks %q", err, lacking), true
	}
	return "", true
}
