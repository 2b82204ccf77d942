package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Limits OpenAI-compatible servers put on the tools of one request (api.openai.com answers HTTP
// 400 past them; most compatible servers copy its validator).
const (
	// MaxTools is the most tools one request may offer.
	MaxTools = 128
	// MaxSchemaBytes bounds one tool's parameters schema as the kernel accepts it. Servers have
	// no documented limit; 64 KiB is a hundred times the largest built-in schema and keeps a
	// plugin from sending megabytes of schema with every request.
	MaxSchemaBytes = 64 << 10
	// maxSchemaDepth bounds how deep schemas nest (recursion in the walkers below).
	maxSchemaDepth = 32
)

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidToolName reports whether name is a function name servers accept: ^[a-zA-Z0-9_-]{1,64}$.
func ValidToolName(name string) bool { return toolNameRE.MatchString(name) }

// emptySchema is the parameters of a tool that takes no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// NormalizeTool returns t with Parameters made a schema that OpenAI-compatible servers accept,
// and what it changed, in words for a log. Only safe repairs are made, ones that cannot change
// what a valid call looks like: empty parameters become an empty object schema, a null keyword is
// omitted ("required": null, the nil slice a Go plugin marshals), a "required" that is not an
// array of strings is dropped (or keeps its strings), a malformed "properties", "items",
// "anyOf"… is dropped, an array schema without "items" gets "items": {} and a root without a
// type gets "type": "object". Everything else that servers refuse is an error, naming the place:
// an invalid name, parameters that are not JSON, not an object or not of type object, a schema
// over [MaxSchemaBytes] or nested deeper than 32. The caller leaves such a tool out and logs why.
//
// A tool whose schema needed no change keeps its Parameters byte for byte.
func NormalizeTool(t Tool) (Tool, []string, error) {
	if !ValidToolName(t.Name) {
		return t, nil, fmt.Errorf("tool name %q does not match ^[a-zA-Z0-9_-]{1,64}$", t.Name)
	}
	raw := bytes.TrimSpace(t.Parameters)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		t.Parameters = emptySchema
		return t, []string{"no parameters schema: an empty object schema is sent"}, nil
	}
	if len(raw) > MaxSchemaBytes {
		return t, nil, fmt.Errorf("tool %s: parameters schema of %d bytes is over the %d-byte limit", t.Name, len(raw), MaxSchemaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return t, nil, fmt.Errorf("tool %s: parameters are not JSON: %w", t.Name, err)
	}
	if dec.More() {
		return t, nil, fmt.Errorf("tool %s: parameters hold more than one JSON value", t.Name)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return t, nil, fmt.Errorf("tool %s: parameters are %s, not a JSON Schema object", t.Name, jsonKind(root))
	}
	n := &normalizer{}
	switch typ := obj["type"]; {
	case typ == nil:
		obj["type"] = "object"
		n.fix("$.type", "missing: set to \"object\"")
	case typ != "object":
		return t, nil, fmt.Errorf("tool %s: parameters must be a schema of type \"object\", not %s", t.Name, compact(typ))
	}
	if err := n.schema("$", obj, 0); err != nil {
		return t, nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	if len(n.fixes) == 0 {
		return t, nil, nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return t, nil, fmt.Errorf("tool %s: re-encode parameters: %w", t.Name, err)
	}
	t.Parameters = out
	return t, n.fixes, nil
}

type normalizer struct{ fixes []string }

func (n *normalizer) fix(path, what string) { n.fixes = append(n.fixes, path+" "+what) }

// schemaLists are the keywords whose value is a list of schemas; schemaMaps those whose value is
// an object of schemas.
var (
	schemaLists = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
	schemaMaps  = []string{"properties", "$defs", "definitions", "patternProperties"}
	schemaOnes  = []string{"not", "if", "then", "else", "contains", "propertyNames"}
)

// schema repairs one schema object in place (keys visited in sorted order, so the fixes read
// the same on every run).
func (n *normalizer) schema(path string, m map[string]any, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%s: schema nested deeper than %d levels", path, maxSchemaDepth)
	}
	for _, k := range sortedKeys(m) {
		if m[k] == nil {
			delete(m, k)
			n.fix(path+"."+k, "is null: omitted")
		}
	}
	if v, ok := m["required"]; ok {
		list, ok := v.([]any)
		if !ok {
			delete(m, "required")
			n.fix(path+".required", "is "+jsonKind(v)+", not an array: omitted")
		} else {
			strs := list[:0:0]
			for _, x := range list {
				if _, ok := x.(string); ok {
					strs = append(strs, x)
				}
			}
			if len(strs) != len(list) {
				m["required"] = strs
				n.fix(path+".required", "holds non-strings: only its strings are kept")
			}
		}
	}
	if v, ok := m["type"]; ok && !validType(v) {
		delete(m, "type")
		n.fix(path+".type", "is "+compact(v)+", not a type name or a list of them: omitted")
	}
	for _, k := range schemaMaps {
		v, ok := m[k]
		if !ok {
			continue
		}
		props, ok := v.(map[string]any)
		if !ok {
			delete(m, k)
			n.fix(path+"."+k, "is "+jsonKind(v)+", not an object: omitted")
			continue
		}
		for _, name := range sortedKeys(props) {
			sub, err := n.sub(path+"."+k+"."+name, props[name], depth)
			if err != nil {
				return err
			}
			if sub == nil {
				delete(props, name)
				continue
			}
			props[name] = sub
		}
	}
	for _, k := range schemaLists {
		v, ok := m[k]
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			delete(m, k)
			n.fix(path+"."+k, "is "+jsonKind(v)+", not an array: omitted")
			continue
		}
		kept := list[:0]
		for i, x := range list {
			sub, err := n.sub(fmt.Sprintf("%s.%s[%d]", path, k, i), x, depth)
			if err != nil {
				return err
			}
			if sub != nil {
				kept = append(kept, sub)
			}
		}
		m[k] = kept
	}
	for _, k := range schemaOnes {
		if v, ok := m[k]; ok {
			sub, err := n.sub(path+"."+k, v, depth)
			if err != nil {
				return err
			}
			if sub == nil {
				delete(m, k)
			} else {
				m[k] = sub
			}
		}
	}
	if v, ok := m["additionalProperties"]; ok {
		if _, isBool := v.(bool); !isBool {
			sub, err := n.sub(path+".additionalProperties", v, depth)
			if err != nil {
				return err
			}
			if sub == nil {
				delete(m, "additionalProperties")
			} else {
				m["additionalProperties"] = sub
			}
		}
	}
	if v, ok := m["items"]; ok {
		switch it := v.(type) {
		case map[string]any:
			if err := n.schema(path+".items", it, depth+1); err != nil {
				return err
			}
		case []any: // draft-04 tuple form
			kept := it[:0]
			for i, x := range it {
				sub, err := n.sub(fmt.Sprintf("%s.items[%d]", path, i), x, depth)
				if err != nil {
					return err
				}
				if sub != nil {
					kept = append(kept, sub)
				}
			}
			m["items"] = kept
		default:
			delete(m, "items")
			n.fix(path+".items", "is "+jsonKind(v)+", not a schema: omitted")
		}
	}
	if hasType(m["type"], "array") {
		if _, ok := m["items"]; !ok {
			m["items"] = map[string]any{}
			n.fix(path+".items", "missing for an array: set to {}")
		}
	}
	return nil
}

// sub repairs a schema found under a keyword: an object is walked, true becomes {} and false or
// anything else is dropped (nil is returned).
func (n *normalizer) sub(path string, v any, depth int) (any, error) {
	switch s := v.(type) {
	case map[string]any:
		return s, n.schema(path, s, depth+1)
	case bool:
		if s {
			n.fix(path, "is true: set to {}")
			return map[string]any{}, nil
		}
	}
	n.fix(path, "is "+jsonKind(v)+", not a schema: omitted")
	return nil, nil
}

func validType(v any) bool {
	switch t := v.(type) {
	case string:
		return t != ""
	case []any:
		for _, x := range t {
			if s, ok := x.(string); !ok || s == "" {
				return false
			}
		}
		return len(t) > 0
	}
	return false
}

func hasType(v any, want string) bool {
	switch t := v.(type) {
	case string:
		return t == want
	case []any:
		for _, x := range t {
			if x == want {
				return true
			}
		}
	}
	return false
}

// CheckTool reports the first thing about t an OpenAI-compatible server refuses, nil when none:
// the name, and a parameters schema that is not an object of type "object", holds a null
// keyword, a "required" that is not an array of strings, "properties" that is not an object of
// schemas, an "items" that is not a schema, or an array without "items". It is the validator the
// kernel's tests hold every tool to after [NormalizeTool]; it changes nothing.
func CheckTool(t Tool) error {
	if !ValidToolName(t.Name) {
		return fmt.Errorf("tool name %q does not match ^[a-zA-Z0-9_-]{1,64}$", t.Name)
	}
	var root any
	if err := json.Unmarshal(t.Parameters, &root); err != nil {
		return fmt.Errorf("tool %s: parameters are not JSON: %w", t.Name, err)
	}
	obj, ok := root.(map[string]any)
	if !ok || obj["type"] != "object" {
		return fmt.Errorf("tool %s: parameters are not a schema of type \"object\"", t.Name)
	}
	if problem := checkSchema("$", obj, 0); problem != "" {
		return fmt.Errorf("invalid schema for function '%s': %s", t.Name, problem)
	}
	return nil
}

func checkSchema(path string, v any, depth int) string {
	m, ok := v.(map[string]any)
	if !ok {
		return path + " is " + jsonKind(v) + ", not a schema object"
	}
	if depth > maxSchemaDepth {
		return path + " nests deeper than 32 levels"
	}
	for _, k := range sortedKeys(m) {
		val := m[k]
		switch {
		case val == nil:
			return path + "." + k + ": None is not of type 'array' or 'object' (null keyword)"
		case k == "required":
			list, ok := val.([]any)
			if !ok {
				return path + ".required is not of type 'array'"
			}
			for _, x := range list {
				if _, ok := x.(string); !ok {
					return path + ".required holds a non-string"
				}
			}
		case k == "properties":
			props, ok := val.(map[string]any)
			if !ok {
				return path + ".properties is not of type 'object'"
			}
			for _, name := range sortedKeys(props) {
				if p := checkSchema(path+".properties."+name, props[name], depth+1); p != "" {
					return p
				}
			}
		case k == "items":
			items := []any{val}
			if list, ok := val.([]any); ok {
				items = list
			}
			for _, it := range items {
				if p := checkSchema(path+".items", it, depth+1); p != "" {
					return p
				}
			}
		case k == "anyOf" || k == "oneOf" || k == "allOf":
			list, ok := val.([]any)
			if !ok {
				return path + "." + k + " is not of type 'array'"
			}
			for i, it := range list {
				if p := checkSchema(fmt.Sprintf("%s.%s[%d]", path, k, i), it, depth+1); p != "" {
					return p
				}
			}
		}
	}
	if _, ok := m["items"]; !ok && hasType(m["type"], "array") {
		return path + ": array schema missing items"
	}
	return ""
}

// CheckTools reports the first problem of a request's tools: more than [MaxTools], a duplicate
// name, or a tool [CheckTool] refuses.
func CheckTools(tools []Tool) error {
	if len(tools) > MaxTools {
		return fmt.Errorf("%d tools offered; servers accept at most %d", len(tools), MaxTools)
	}
	seen := make(map[string]bool, len(tools))
	var errs []error
	for _, t := range tools {
		if seen[t.Name] {
			errs = append(errs, fmt.Errorf("tool %s offered twice", t.Name))
		}
		seen[t.Name] = true
		if err := CheckTool(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// jsonKind names the JSON kind of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// compact renders a decoded value as short JSON for an error.
func compact(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strings.TrimSpace(s)
}
