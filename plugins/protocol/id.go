package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ID is a JSON-RPC request id: a JSON string or an integer, kept as the raw
// JSON text it arrived as so that responses echo it byte-exactly ("007",
// "\u0041", 12345678901234567890123 all survive unchanged). IDs are
// comparable and may be used as map keys. The zero ID is not a valid id.
type ID struct {
	raw string
}

// StringID returns the id for the string s.
func StringID(s string) ID { return ID{raw: string(appendString(nil, s))} }

// IntID returns the id for the integer n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether id is the zero ID (no id).
func (id ID) IsZero() bool { return id.raw == "" }

// String returns the id for humans and logs: the decoded text of a string id,
// the digits of a number id, "" for the zero ID.
func (id ID) String() string {
	if id.raw == "" || id.raw[0] != '"' {
		return id.raw
	}
	var s string
	if err := json.Unmarshal([]byte(id.raw), &s); err != nil {
		return id.raw
	}
	return s
}

// MarshalJSON writes the id's raw JSON text; the zero ID is written as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// errBadID is wrapped by UnmarshalJSON for ids that are neither strings nor integers.
var errBadID = errors.New("id must be a string or an integer")

// UnmarshalJSON accepts a JSON string or a JSON integer (an optional minus
// sign and digits, of any length) and keeps its exact text. null, booleans,
// objects, arrays, and numbers with a fraction or an exponent are refused:
// JSON-RPC discourages them and MCP forbids them.
func (id *ID) UnmarshalJSON(b []byte) error {
	raw, err := parseID(b)
	if err != nil {
		return err
	}
	id.raw = raw
	return nil
}

// parseID validates b as an id and returns its canonical raw text (b itself,
// minus surrounding whitespace).
func parseID(b []byte) (string, error) {
	b = trimSpace(b)
	if len(b) == 0 {
		return "", fmt.Errorf("%w: empty", errBadID)
	}
	switch c := b[0]; {
	case c == '"':
		if !json.Valid(b) {
			return "", fmt.Errorf("%w: invalid string %s", errBadID, b)
		}
		return string(b), nil
	case c == '-' || (c >= '0' && c <= '9'):
		if !isInteger(b) {
			return "", fmt.Errorf("%w: %s is not an integer", errBadID, b)
		}
		return string(b), nil
	default:
		return "", fmt.Errorf("%w, got %s", errBadID, kindOf(b))
	}
}

// isInteger reports whether b is a JSON integer: -?(0|[1-9][0-9]*).
func isInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// kindOf names the JSON kind of the value starting b, for error messages.
func kindOf(b []byte) string {
	switch b[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an invalid value"
}

// trimSpace trims JSON whitespace from both ends of b.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
