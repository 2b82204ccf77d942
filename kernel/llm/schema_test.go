package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalizeTool(t *testing.T) {
	tests := []struct {
		name, params string
		want         string // the parameters after normalisation ("" = unchanged)
		fixes        int
		err          string
	}{
		{"valid kept byte for byte", `{"type":"object", "properties":{"q":{"type":"string"}},"required":["q"]}`, "", 0, ""},
		{"empty", ``, `{"type":"object","properties":{}}`, 1, ""},
		{"null", `null`, `{"type":"object","properties":{}}`, 1, ""},
		{"required null", `{"type":"object","properties":{},"required":null}`, `{"properties":{},"type":"object"}`, 1, ""},
		{"required a string", `{"type":"object","required":"q"}`, `{"type":"object"}`, 1, ""},
		{"required with a number", `{"type":"object","required":["q",1]}`, `{"required":["q"],"type":"object"}`, 1, ""},
		{"nested null", `{"type":"object","properties":{"q":{"type":"array","items":{"enum":null,"type":"string"}}}}`,
			`{"properties":{"q":{"items":{"type":"string"},"type":"array"}},"type":"object"}`, 1, ""},
		{"array without items", `{"type":"object","properties":{"tags":{"type":["array","null"]}}}`,
			`{"properties":{"tags":{"items":{},"type":["array","null"]}},"type":"object"}`, 1, ""},
		{"properties not an object", `{"type":"object","properties":[]}`, `{"type":"object"}`, 1, ""},
		{"property true and false", `{"type":"object","properties":{"a":true,"b":false,"c":3}}`, `{"properties":{"a":{}},"type":"object"}`, 3, ""},
		{"missing root type", `{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`, 1, ""},
		{"anyOf with a null", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},null]}}}`,
			`{"properties":{"a":{"anyOf":[{"type":"string"}]}},"type":"object"}`, 1, ""},
		{"big numbers kept", `{"type":"object","properties":{"n":{"type":"integer","maximum":18446744073709551615,"default":null}}}`,
			`{"properties":{"n":{"maximum":18446744073709551615,"type":"integer"}},"type":"object"}`, 1, ""},
		{"bad name", `{"type":"object"}`, "", 0, "does not match"},
		{"not JSON", `{"type":`, "", 0, "not JSON"},
		{"two values", `{} {}`, "", 0, "more than one JSON value"},
		{"an array", `[]`, "", 0, "an array, not a JSON Schema object"},
		{"type string", `{"type":"string"}`, "", 0, `of type "object", not "string"`},
		{"too deep", `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, 40) + `{}` + strings.Repeat(`}}`, 40) + `}}`, "", 0, "deeper than 32"},
		{"too big", `{"type":"object","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`, "", 0, "over the 65536-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "t_1-x"
			if tt.name == "bad name" {
				name = "notes.list"
			}
			in := Tool{Name: name, Parameters: json.RawMessage(tt.params)}
			got, fixes, err := NormalizeTool(in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.params
			}
			if string(got.Parameters) != want {
				t.Errorf("parameters = %s\nwant %s", got.Parameters, want)
			}
			if len(fixes) != tt.fixes {
				t.Errorf("fixes = %q, want %d", fixes, tt.fixes)
			}
			if err := CheckTool(got); err != nil {
				t.Errorf("CheckTool after NormalizeTool: %v", err)
			}
		})
	}
}

func TestCheckTool(t *testing.T) {
	tests := []struct{ name, tool, params, err string }{
		{"valid", "notes_list", `{"type":"object","properties":{"q":{"type":"array","items":{"type":"string"}}},"required":["q"]}`, ""},
		{"required null", "notes_list", `{"type":"object","properties":{},"required":null}`, "'notes_list': $.required: None is not of type"},
		{"required a string", "x", `{"type":"object","required":"q"}`, "$.required is not of type 'array'"},
		{"nested null", "x", `{"type":"object","properties":{"q":{"items":{"enum":null},"type":"array"}}}`, "$.properties.q.items.enum: None"},
		{"array without items", "x", `{"type":"object","properties":{"q":{"type":"array"}}}`, "$.properties.q: array schema missing items"},
		{"property not a schema", "x", `{"type":"object","properties":{"q":"string"}}`, "$.properties.q is a string"},
		{"root not object", "x", `{"type":"string"}`, `not a schema of type "object"`},
		{"name with a dot", "a.b", `{"type":"object"}`, "does not match"},
		{"name too long", strings.Repeat("a", 65), `{"type":"object"}`, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTool(Tool{Name: tt.tool, Parameters: json.RawMessage(tt.params)})
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestCheckTools(t *testing.T) {
	ok := Tool{Name: "a", Parameters: json.RawMessage(`{"type":"object"}`)}
	many := make([]Tool, MaxTools+1)
	for i := range many {
		many[i] = ok
		many[i].Name = "t" + strings.Repeat("x", i%60) + string(rune('a'+i%26))
	}
	tests := []struct {
		name  string
		tools []Tool
		err   string
	}{
		{"none", nil, ""},
		{"one", []Tool{ok}, ""},
		{"129", many, "129 tools offered; servers accept at most 128"},
		{"duplicate", []Tool{ok, ok}, "tool a offered twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTools(tt.tools)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
		})
	}
}
