package llmtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hologramagent/hologram/kernel/llm"
)

// The checks of a strict [Server], written apart from the kernel's own normaliser
// (llm.NormalizeTool) so that a mistake there is not repeated here; they follow the rules and the
// wording of api.openai.com (and of tools/fake_openai.py).

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// maxTools is the most tools real servers accept in one request.
const maxTools = 128

// toolsError returns the HTTP 400 message for the request's tools, "" when they are acceptable.
func toolsError(req wireReq) string {
	if len(req.Tools) > maxTools {
		return fmt.Sprintf("Invalid 'tools': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", maxTools, len(req.Tools))
	}
	seen := map[string]bool{}
	for i, t := range req.Tools {
		name := t.Function.Name
		if !toolName.MatchString(name) {
			return fmt.Sprintf("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
		if seen[name] {
			return fmt.Sprintf("Invalid 'tools': duplicate function name '%s'.", name)
		}
		seen[name] = true
		if len(t.Function.Parameters) == 0 {
			continue
		}
		var root any
		if err := json.Unmarshal(t.Function.Parameters, &root); err != nil {
			return fmt.Sprintf("Invalid schema for function '%s': %v.", name, err)
		}
		if m, ok := root.(map[string]any); !ok || m["type"] != "object" {
			return fmt.Sprintf("Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"'.", name)
		}
		if e := schemaError(root, "parameters"); e != "" {
			return fmt.Sprintf("Invalid schema for function '%s': %s.", name, e)
		}
	}
	return ""
}

// schemaError returns the first way s is not a JSON Schema real servers accept, "" when none.
func schemaError(s any, where string) string {
	m, ok := s.(map[string]any)
	if !ok {
		return where + " is not an object"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if v == nil {
			return fmt.Sprintf("In context=(%s), None is not of type 'array' or 'object' ('%s': null)", where, k)
		}
		switch k {
		case "required":
			list, ok := v.([]any)
			if !ok {
				return fmt.Sprintf("%s.required: %s is not of type 'array'", where, mustJSON(v))
			}
			for _, x := range list {
				if _, ok := x.(string); !ok {
					return fmt.Sprintf("%s.required: %s is not of type 'string'", where, mustJSON(x))
				}
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return fmt.Sprintf("%s.properties: %s is not of type 'object'", where, mustJSON(v))
			}
			for name, p := range props {
				if e := schemaError(p, where+".properties."+name); e != "" {
					return e
				}
			}
		case "items":
			items, ok := v.([]any)
			if !ok {
				items = []any{v}
			}
			for _, it := range items {
				if e := schemaError(it, where+".items"); e != "" {
					return e
				}
			}
		case "anyOf", "oneOf", "allOf":
			list, ok := v.([]any)
			if !ok {
				return fmt.Sprintf("%s.%s: %s is not of type 'array'", where, k, mustJSON(v))
			}
			for _, it := range list {
				if e := schemaError(it, where+"."+k); e != "" {
					return e
				}
			}
		}
	}
	if _, ok := m["items"]; !ok && isArrayType(m["type"]) {
		return fmt.Sprintf("In context=(%s), array schema missing items", where)
	}
	return ""
}

func isArrayType(v any) bool {
	if v == "array" {
		return true
	}
	list, _ := v.([]any)
	for _, x := range list {
		if x == "array" {
			return true
		}
	}
	return false
}

// contextError returns the HTTP 400 message for a prompt over limit tokens (characters / 4 of
// the messages and tools as sent), "" when it fits.
func contextError(raw []byte, limit int) string {
	var req struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(raw, &req) != nil {
		return ""
	}
	if n := (len(req.Messages) + len(req.Tools)) / 4; n > limit {
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, n)
	}
	return ""
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// imagesError returns the HTTP 400 message for an image part a real server refuses: one outside
// a user message (tool messages take text only) or one that is not a base64 data URL of an image.
func imagesError(msgs []llm.Message) string {
	for i, m := range msgs {
		for _, im := range m.Images {
			switch {
			case m.Role != "user":
				return fmt.Sprintf("Invalid 'messages[%d]': image_url content parts are only allowed in messages with role 'user', got '%s'.", i, m.Role)
			case len(im.Data) == 0 || !strings.HasPrefix(im.MIME, "image/"):
				return fmt.Sprintf("Invalid 'messages[%d].content': image_url must be a URL or a base64 data URL of an image.", i)
			}
		}
	}
	return ""
}
