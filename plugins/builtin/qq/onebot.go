package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OneBot v11 wire types (https://github.com/botuniverse/onebot-11): events pushed by the bridge
// and API calls with their answers, one JSON object per WebSocket text message.

// ID is a QQ number (user, group, message id). Bridges send numbers; some send strings; both
// are read, and it is kept as decimal digits.
type ID string

// UnmarshalJSON reads a number or a string of digits.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*id = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = ID(strings.TrimSpace(s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("id %s: want a number or a string", b)
	}
	if _, err := n.Int64(); err != nil {
		return fmt.Errorf("id %s: not an integer", b)
	}
	*id = ID(n.String())
	return nil
}

// Int returns the id as a number (the API wants numbers), or an error for one that is not.
func (id ID) Int() (int64, error) {
	n, err := strconv.ParseInt(string(id), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a QQ number", string(id))
	}
	return n, nil
}

// Event is an event the bridge pushes (post_type message, message_sent, notice, request,
// meta_event); only the fields the plugin uses.
type Event struct {
	Time          int64           `json:"time"`
	SelfID        ID              `json:"self_id"`
	PostType      string          `json:"post_type"`
	MessageType   string          `json:"message_type"` // private, group
	SubType       string          `json:"sub_type"`
	MessageID     ID              `json:"message_id"`
	UserID        ID              `json:"user_id"`
	GroupID       ID              `json:"group_id"`
	Message       json.RawMessage `json:"message"` // segments, or a string with CQ codes
	RawMessage    string          `json:"raw_message"`
	Sender        Sender          `json:"sender"`
	MetaEventType string          `json:"meta_event_type"`
}

// Sender is who sent a message.
type Sender struct {
	UserID   ID     `json:"user_id"`
	Nickname string `json:"nickname"`
	Card     string `json:"card"` // the group card (name in the group)
}

// Name is how the sender is called: the group card, else the nickname, else the number.
func (s Sender) Name(fallback ID) string {
	switch {
	case strings.TrimSpace(s.Card) != "":
		return strings.TrimSpace(s.Card)
	case strings.TrimSpace(s.Nickname) != "":
		return strings.TrimSpace(s.Nickname)
	}
	return string(fallback)
}

// Segment is one part of a message: text, at, face, image, reply, …
type Segment struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// Str returns a data field as a string (numbers as digits).
func (s Segment) Str(key string) string {
	switch v := s.Data[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// TextSegment returns a text segment.
func TextSegment(s string) Segment { return Segment{Type: "text", Data: map[string]any{"text": s}} }

// ParseMessage reads a message field: an array of segments or a string with CQ codes.
func ParseMessage(raw json.RawMessage) ([]Segment, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var segs []Segment
		if err := dec.Decode(&segs); err != nil {
			return nil, fmt.Errorf("message segments: %w", err)
		}
		return segs, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("message string: %w", err)
		}
		return ParseCQ(s), nil
	}
	return nil, fmt.Errorf("message: want an array of segments or a string, got %.20s", raw)
}

// unescapeText undoes the CQ escaping of text; unescapeParam also that of parameter values.
var (
	unescapeText  = strings.NewReplacer("&#91;", "[", "&#93;", "]", "&amp;", "&")
	unescapeParam = strings.NewReplacer("&#91;", "[", "&#93;", "]", "&#44;", ",", "&amp;", "&")
)

// ParseCQ parses the string form of a message: text with CQ codes such as
// [CQ:at,qq=10001] and [CQ:image,file=…]. A malformed code is kept as text.
func ParseCQ(s string) []Segment {
	var out []Segment
	text := func(t string) {
		if t != "" {
			out = append(out, TextSegment(unescapeText.Replace(t)))
		}
	}
	for s != "" {
		i := strings.Index(s, "[CQ:")
		if i < 0 {
			text(s)
			break
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			text(s)
			break
		}
		text(s[:i])
		code := s[i+len("[CQ:") : i+j]
		s = s[i+j+1:]
		parts := strings.Split(code, ",")
		seg := Segment{Type: parts[0], Data: map[string]any{}}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			seg.Data[k] = unescapeParam.Replace(v)
		}
		out = append(out, seg)
	}
	return out
}

// Mentions reports whether the segments @-mention id (not @all).
func Mentions(segs []Segment, id ID) bool {
	if id == "" {
		return false
	}
	for _, s := range segs {
		if s.Type == "at" && s.Str("qq") == string(id) {
			return true
		}
	}
	return false
}

// PlainText renders segments as the text the agent reads: text as is, @-mentions of others as
// "@name", the mention of self dropped, media as placeholders ("[image]").
func PlainText(segs []Segment, self ID) string {
	var b strings.Builder
	for _, s := range segs {
		switch s.Type {
		case "text":
			b.WriteString(s.Str("text"))
		case "at":
			qq := s.Str("qq")
			switch {
			case qq == string(self):
			case qq == "all":
				b.WriteString("@all ")
			case s.Str("name") != "":
				b.WriteString("@" + s.Str("name") + " ")
			default:
				b.WriteString("@" + qq + " ")
			}
		case "face":
			b.WriteString("[face]")
		case "image", "record", "video", "file":
			b.WriteString("[" + s.Type + "]")
		case "reply", "forward", "json", "xml":
			// metadata, not text
		default:
			b.WriteString("[" + s.Type + "]")
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// Request is an API call: {"action", "params", "echo"}.
type Request struct {
	Action string `json:"action"`
	Params any    `json:"params"`
	Echo   string `json:"echo"`
}

// Response is an API answer.
type Response struct {
	Status  string          `json:"status"` // ok, async, failed
	RetCode int             `json:"retcode"`
	Data    json.RawMessage `json:"data"`
	Echo    json.RawMessage `json:"echo"`
	Message string          `json:"message"`
	Wording string          `json:"wording"`
}

// Err returns the answer's failure, or nil.
func (r Response) Err() error {
	if (r.Status == "ok" && r.RetCode == 0) || (r.Status == "async" && r.RetCode == 1) {
		return nil
	}
	why := r.Wording
	if why == "" {
		why = r.Message
	}
	if why == "" {
		why = "no reason given"
	}
	return &APIError{Status: r.Status, RetCode: r.RetCode, Reason: why}
}

// APIError is a failure the bridge answered.
type APIError struct {
	Status  string
	RetCode int
	Reason  string
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("the bridge answered %s (retcode %d): %s", e.Status, e.RetCode, e.Reason)
}

// frame is what one WebSocket message of the bridge is: an event or an API answer.
type frame struct {
	PostType *string         `json:"post_type"`
	Echo     json.RawMessage `json:"echo"`
}

// errUnknownFrame is a message that is neither an event nor an answer.
var errUnknownFrame = errors.New("neither an event (post_type) nor an API answer (echo)")

// classifyFrame tells an event from an API answer.
func classifyFrame(b []byte) (event bool, err error) {
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		return false, fmt.Errorf("bad JSON from the bridge: %w", err)
	}
	switch {
	case f.PostType != nil:
		return true, nil
	case len(f.Echo) > 0 && string(f.Echo) != "null":
		return false, nil
	}
	return false, errUnknownFrame
}

// echoKey is an answer's echo as the string the request sent (bridges echo it back as sent,
// some as a number).
func echoKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}
