package plugsettings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hologramagent/hologram/plugins/host"
)

// TestBuiltinSettingsSchemas: the config_schema of each built-in plugin's plugin.json resolves,
// and accepts and refuses what the plugin's own configuration check does.
func TestBuiltinSettingsSchemas(t *testing.T) {
	cases := map[string][]struct {
		values string
		ok     bool
	}{
		"files": {
			{`{}`, true},
			{`{"roots": ["/srv/docs", "~/Documents"], "read_only": true, "max_read_bytes": 1024}`, true},
			{`{"max_read_bytes": 0}`, false},
			{`{"max_write_bytes": 921601}`, false},
			{`{"roots": ["/a", "/a"]}`, false},
			{`{"roots": "/a"}`, false},
			{`{"colour": "red"}`, false},
		},
		"notes": {
			{`{"dir": "~/notes"}`, true},
			{`{"dir": ""}`, false},
		},
		"shell": {
			{`{"allow": [{"program": "echo"}, {"program": "git", "args": ["status"]}, {"shell": "ls -l"}], "timeout": "30s", "max_timeout": "1h30m"}`, true},
			{`{"allow": [{"program": "echo", "shell": "ls"}]}`, false},
			{`{"allow": [{"args": ["x"]}]}`, false},
			{`{"timeout": "soon"}`, false},
			{`{"max_output_bytes": 16777217}`, false},
		},
	}
	for name, tcs := range cases {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "plugins", "builtin", name, "plugin.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m host.Manifest
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			var s jsonschema.Schema
			if err := json.Unmarshal(m.ConfigSchema, &s); err != nil {
				t.Fatal(err)
			}
			rs, err := s.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range tcs {
				var v map[string]any
				if err := json.Unmarshal([]byte(tc.values), &v); err != nil {
					t.Fatal(err)
				}
				if err := rs.Validate(v); (err == nil) != tc.ok {
					t.Errorf("%s: validate = %v, want ok %v", tc.values, err, tc.ok)
				}
			}
		})
	}
}

func TestTOMLValues(t *testing.T) {
	got := tomlValues(map[string]any{"n": 1024.0, "f": 1.5, "l": []any{2.0, "x"}})
	m := got.(map[string]any)
	if m["n"] != int64(1024) || m["f"] != 1.5 || m["l"].([]any)[0] != int64(2) {
		t.Errorf("tomlValues = %#v", got)
	}
}
