package gui

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestPluginSettingsForm: the form follows the schema's order and types, shows the file's
// values, and gives back what the fields hold (empty ones left out, keys it cannot edit kept,
// numbers checked).
func TestPluginSettingsForm(t *testing.T) {
	schema := `{"type": "object", "properties": {
		"roots": {"title": "Folders", "type": "array", "items": {"type": "string", "format": "directory"}},
		"read_only": {"type": "boolean"},
		"max_read_bytes": {"title": "Largest read", "type": "integer"},
		"dir": {"type": "string", "format": "directory"},
		"mode": {"type": "string", "enum": ["fast", "safe"]},
		"tags": {"type": "array", "items": {"type": "string"}},
		"allow": {"type": "array", "items": {"type": "object"}}}}`
	values := map[string]any{"roots": []any{"/srv/a"}, "max_read_bytes": 1024.0, "allow": []any{map[string]any{"program": "echo"}}}
	f, err := newPluginSettingsForm(client.PluginSettings{Plugin: "files", Schema: json.RawMessage(schema), Values: values})
	if err != nil {
		t.Fatal(err)
	}
	var keys, kinds []string
	for _, fd := range f.Fields {
		keys, kinds = append(keys, fd.Key), append(kinds, fd.Kind)
	}
	if want := []string{"roots", "read_only", "max_read_bytes", "dir", "mode", "tags"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("fields %v, want %v (allow, a list of objects, is not editable here)", keys, want)
	}
	if want := []string{fieldFolders, fieldBool, fieldNumber, fieldText, fieldText, fieldList}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if !f.Fields[3].Folder || f.Fields[0].Title != "Folders" || f.Fields[1].Title != "read_only" {
		t.Errorf("titles or folder flag: %+v %+v %+v", f.Fields[0], f.Fields[1], f.Fields[3])
	}
	if got := uiGet[string](t, f.Fields[2].Text); got != "1024" {
		t.Errorf("max_read_bytes shown as %q", got)
	}
	f.Fields[0].AddFolder("/srv/b")
	f.Fields[0].AddFolder("/srv/b")
	f.Fields[0].RemoveFolder("/srv/a")
	_ = f.Fields[1].Bool.Set(true)
	_ = f.Fields[5].Text.Set("x\n\n y \n")
	got, err := f.Values(values)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"roots": []string{"/srv/b"}, "read_only": true, "max_read_bytes": 1024.0, "tags": []string{"x", "y"},
		"allow": []any{map[string]any{"program": "echo"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("values %#v, want %#v", got, want)
	}
	_ = f.Fields[2].Text.Set("1.5")
	if _, err := f.Values(values); err == nil || !strings.Contains(err.Error(), "Largest read") {
		t.Errorf("1.5 for an integer: %v", err)
	}
	if _, err := newPluginSettingsForm(client.PluginSettings{Plugin: "x", Schema: json.RawMessage(`{"type": "string"}`)}); err == nil {
		t.Error("a schema that is not an object with properties made a form")
	}
}
