package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// schema is the subset of JSON Schema the agent checks before running a tool: the required
// properties and the JSON type of each declared property.
type schema struct {
	Properties map[string]propSchema `json:"properties"`
	Required   []string              `json:"required"`
}

type propSchema struct {
	Type json.RawMessage `json:"type"` // "string" or ["string","null"]
}

func (p propSchema) types() []string {
	if len(p.Type) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(p.Type, &many) == nil {
		return many
	}
	return nil
}

func parseSchema(raw json.RawMessage) (schema, error) {
	var s schema
	if len(bytes.TrimSpace(raw)) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("invalid parameters schema: %w", err)
	}
	return s, nil
}

// validateArgs checks args against the schema and returns the arguments to pass to the tool:
// "true"/"false" strings given for boolean properties are converted to booleans.
func validateArgs(params json.RawMessage, args string) (json.RawMessage, error) {
	s, err := parseSchema(params)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return nil, errors.New("arguments are not a JSON object")
	}
	var problems []string
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			problems = append(problems, fmt.Sprintf("missing required property %q", name))
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	coerced := false
	for _, name := range names {
		want := s.Properties[name].types()
		if len(want) == 0 {
			continue
		}
		got := jsonType(obj[name])
		if typeMatches(got, want) {
			continue
		}
		if got == "string" && contains(want, "boolean") {
			var str string
			if json.Unmarshal(obj[name], &str) == nil && (str == "true" || str == "false") {
				obj[name] = json.RawMessage(str)
				coerced = true
				continue
			}
		}
		problems = append(problems, fmt.Sprintf("property %q must be %s, got %s", name, strings.Join(want, " or "), got))
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if !coerced {
		return json.RawMessage(args), nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("re-encode arguments: %w", err)
	}
	return out, nil
}

// jsonType names the JSON type of a value; integral numbers are "integer".
func jsonType(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "null"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	var f float64
	if json.Unmarshal(v, &f) == nil && f == math.Trunc(f) {
		return "integer"
	}
	return "number"
}

func typeMatches(got string, want []string) bool {
	for _, w := range want {
		if w == got || (w == "number" && got == "integer") {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// ValidSchema reports whether the agent can read a tool's JSON Schema (to validate arguments).
func ValidSchema(raw json.RawMessage) bool {
	_, err := parseSchema(raw)
	return err == nil
}
