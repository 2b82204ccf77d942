package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// Chat histories: the conversations of another chat app, imported as sessions of the owner
// ([ImportChats]). Two formats are read:
//
//   - [ChatGPT]: the conversations.json of a ChatGPT data export, a JSON array of conversations
//     {"id"|"conversation_id", "title", "create_time", "update_time", "current_node",
//     "mapping": {node id: {"message", "parent", "children"}}}, each message with
//     "author": {"role"}, "create_time", "content": {"content_type", "parts"|"text"},
//     "recipient" and "metadata": {"is_visually_hidden_from_conversation"}. Times are Unix
//     seconds (fractional).
//   - [OpenWebUI]: Open WebUI's chat export, a JSON array of chats {"id", "title",
//     "created_at", "updated_at", "chat": {"title", "history": {"currentId", "messages":
//     {id: {"id", "parentId", "childrenIds", "role", "content", "timestamp", "model",
//     "files"}}}, "messages": […]}}. Times are Unix seconds (milliseconds and nanoseconds are
//     recognised by their size).
//
// Both keep every branch of a conversation; the import follows the current node (the branch the
// user last saw) back to the root. Messages on other branches are skipped and counted, and so
// are system and tool messages (an assistant message addressed to a tool, too), hidden ones,
// empty ones, the model's reasoning, and parts that are not text (ChatGPT's images are files
// beside conversations.json, so they are counted; Open WebUI's inline data: images become image
// blocks). Each conversation becomes an owner-private session "<format>-<conversation id>"
// whose title is kept, with its messages as user and assistant events at their original times,
// each carrying [MetaImport] and [MetaImportID]: a re-import adds only messages not stored yet.
//
// The file is read as a stream, one conversation at a time (at most [MaxConversationBytes]
// each), and each conversation is stored in one transaction through a [ChatSink]. A conversation
// that cannot be read (a field of the wrong type, no current node, a cycle) is refused with its
// byte offset and the import goes on; a file that is not JSON, is truncated or empty stops the
// import with an error naming the byte offset: the conversations before it are stored whole,
// the one it breaks is not stored at all.

// Chat history formats.
const (
	ChatGPT   = "chatgpt"
	OpenWebUI = "openwebui"
)

// The meta keys of an imported event: MetaImport names the format, MetaImportID the message's
// id in the conversation (the session is the conversation).
const (
	MetaImport   = "import"
	MetaImportID = "import_id"
)

// MaxConversationBytes bounds the JSON text of one conversation: the import holds one
// conversation in memory at a time, so this bounds its memory (a conversation of ChatGPT's
// longest, about 2,000 turns of a few kB, takes a few MB).
const MaxConversationBytes = 64 << 20

// maxRefusals bounds the refusals a report lists (the rest are counted).
const maxRefusals = 100

// Skip reasons counted in [ChatReport.Skipped].
const (
	SkipBranch    = "branch"    // a message on a branch other than the current one
	SkipSystem    = "system"    // a system message
	SkipTool      = "tool"      // a tool's message, or an assistant message addressed to a tool
	SkipHidden    = "hidden"    // a message hidden from the conversation
	SkipEmpty     = "empty"     // a message without text or blocks
	SkipReasoning = "reasoning" // the model's thoughts
	SkipContext   = "context"   // custom instructions or the model's memory (ChatGPT's *_editable_context)
	SkipImage     = "image"     // an image part that is not inline (a part, not a message)
	SkipAudio     = "audio"     // an audio part (a part)
	SkipFile      = "file"      // an attached file (a part)
	SkipOther     = "unsupported"
)

// ChatSink stores imported conversations; memory/sqlite implements it, and the kernel wraps it
// to tell its windows.
type ChatSink interface {
	// ImportConversation stores one conversation in one transaction: the session is created when
	// missing (an existing one is kept as it is, but its Updated time, which becomes the latest
	// of sess.Updated and the events' times), and the events whose Meta[MetaImportID] the
	// session does not hold yet are appended in order. It returns the events it stored. Every
	// event must belong to sess and carry a MetaImportID. created says whether the session is new.
	ImportConversation(ctx context.Context, sess memory.Session, evs []memory.Event) (stored []memory.Event, created bool, err error)
	// ImportedIDs returns the MetaImportID of every event a session holds (none for an
	// unknown session): the import prepares only the messages not stored yet.
	ImportedIDs(ctx context.Context, session string) (map[string]bool, error)
}

// ChatOptions configures [ImportChats]. The zero value is usable.
type ChatOptions struct {
	// Progress, when set, is called after each conversation (from the importing goroutine).
	Progress func(ChatProgress)
	// Prepare, when set, is called on each event not stored yet, before it is stored (the
	// kernel counts its tokens and reads its images' text).
	Prepare func(context.Context, *memory.Event)
	// MaxConversation bounds one conversation's JSON text (0: MaxConversationBytes).
	MaxConversation int64
}

// ChatProgress is how far an import is.
type ChatProgress struct {
	Conversations int   `json:"conversations"` // read so far
	Bytes         int64 `json:"bytes"`         // of the file read so far
	Events        int   `json:"events"`        // stored so far
}

// ChatReport says what [ImportChats] did.
type ChatReport struct {
	// Conversations counts the conversations read; each is imported, unchanged, empty or
	// refused.
	Conversations int `json:"conversations"`
	// Imported counts the conversations that added messages; Unchanged those that added
	// nothing (imported before).
	Imported  int `json:"imported"`
	Unchanged int `json:"unchanged"`
	// Empty counts the conversations without a message to import (only system, hidden or
	// empty ones): no session is made for them.
	Empty int `json:"empty"`
	// Sessions counts the sessions created, Events the messages and Blocks the blocks stored.
	Sessions int `json:"sessions"`
	Events   int `json:"events"`
	Blocks   int `json:"blocks"`
	// Present counts the messages stored by an earlier import.
	Present int `json:"present"`
	// Skipped counts the messages and parts not imported, by reason (Skip… constants).
	Skipped map[string]int `json:"skipped,omitempty"`
	// Refused lists the first conversations refused, with why; RefusedCount counts them all.
	Refused      []Refusal `json:"refused,omitempty"`
	RefusedCount int       `json:"refused_count"`
}

// Refusal is one conversation an import refused.
type Refusal struct {
	// Index is the conversation's position in the file (from 1), Offset the byte where it starts.
	Index  int    `json:"index"`
	Offset int64  `json:"offset"`
	ID     string `json:"id,omitempty"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
}

// FileError is the error of a chat history file that cannot be read on: it is not JSON, is
// truncated or empty. Offset is the byte where reading stopped.
type FileError struct {
	Format string
	Offset int64
	Err    error
	// Before is how many conversations were read before it (stored, or refused); the one it
	// breaks is not stored.
	Before int
}

func (e *FileError) Error() string {
	msg := fmt.Sprintf("%s import: at byte %d: %v", e.Format, e.Offset, e.Err)
	switch {
	case e.Before == 1:
		msg += " (the conversation before it was read and kept; a re-import adds only what is missing)"
	case e.Before > 1:
		msg += fmt.Sprintf(" (the %d conversations before it were read and kept; a re-import adds only what is missing)", e.Before)
	}
	return msg
}

func (e *FileError) Unwrap() error { return e.Err }

// ErrNotChats is wrapped by the [FileError] of a file that is not a JSON array of
// conversations.
var ErrNotChats = errors.New("not a chat history")

// conv is a conversation as the formats share it: the messages of the current branch, root
// first, already filtered.
type conv struct {
	id, title        string
	created, updated time.Time
	msgs             []msg
	skipped          map[string]int
}

type msg struct {
	id     string
	role   memory.Role
	text   string
	t      time.Time
	model  string
	blocks []memory.Block
}

func (c *conv) skip(reason string) {
	if c.skipped == nil {
		c.skipped = map[string]int{}
	}
	c.skipped[reason]++
}

// ImportChats reads a chat history of format ([ChatGPT] or [OpenWebUI]) from r and stores each
// conversation through sink (see the package's notes on chat histories). The report counts
// what was done, also when the error is not nil; a [*FileError] says where the file broke.
func ImportChats(ctx context.Context, sink ChatSink, format string, r io.Reader, opts ChatOptions) (ChatReport, error) {
	var parse func(*json.Decoder) (conv, error)
	switch format {
	case ChatGPT:
		parse = parseChatGPT
	case OpenWebUI:
		parse = parseOpenWebUI
	default:
		return ChatReport{}, fmt.Errorf("unknown chat history format %q (chatgpt or openwebui): %w", format, memory.ErrInvalid)
	}
	limit := opts.MaxConversation
	if limit <= 0 {
		limit = MaxConversationBytes
	}
	cr := &countingReader{r: r, limit: limit, start: -1}
	dec := json.NewDecoder(cr)
	var rep ChatReport
	fileErr := func(off int64, err error) error {
		return &FileError{Format: format, Offset: off, Err: err, Before: rep.Conversations}
	}
	syntax := func(err error) error {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return fileErr(se.Offset, fmt.Errorf("malformed JSON: %w", err))
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return fileErr(cr.n, errors.New("the file is truncated"))
		case errors.Is(err, errTooLarge):
			return fileErr(cr.start, fmt.Errorf("the conversation starting here is larger than %d bytes", limit))
		}
		return fileErr(dec.InputOffset(), err)
	}
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return rep, fileErr(0, fmt.Errorf("the file is empty, want a JSON array of conversations: %w", ErrNotChats))
	}
	if err != nil {
		return rep, syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return rep, fileErr(0, fmt.Errorf("want a JSON array of conversations, the file starts with %s: %w", describeToken(tok), ErrNotChats))
	}
	for dec.More() {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		start := dec.InputOffset()
		cr.start = start
		c, err := parse(dec)
		index := rep.Conversations + 1
		if err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) && !errors.Is(err, errConv) {
				return rep, syntax(err)
			}
			rep.Conversations++
			rep.refuse(Refusal{Index: index, Offset: start, ID: c.id, Title: c.title, Reason: refusalReason(err)})
			continue
		}
		rep.Conversations++
		if err := rep.store(ctx, sink, format, c, opts); err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if !errors.Is(err, memory.ErrInvalid) && !errors.Is(err, memory.ErrExists) {
				return rep, fmt.Errorf("%s import: conversation %d (%q): %w", format, index, c.id, err)
			}
			rep.refuse(Refusal{Index: index, Offset: start, ID: c.id, Title: c.title, Reason: err.Error()})
		}
		if opts.Progress != nil {
			opts.Progress(ChatProgress{Conversations: rep.Conversations, Bytes: cr.n, Events: rep.Events})
		}
	}
	cr.start = -1
	if _, err := dec.Token(); err != nil { // the closing ']'
		return rep, syntax(err)
	}
	end := dec.InputOffset()
	if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return rep, syntax(err)
		}
		return rep, fileErr(end, fmt.Errorf("data after the array of conversations (%s)", describeToken(tok)))
	}
	return rep, nil
}

func (rep *ChatReport) refuse(r Refusal) {
	rep.RefusedCount++
	if len(rep.Refused) < maxRefusals {
		rep.Refused = append(rep.Refused, r)
	}
}

// store turns a conversation into a session and events and hands them to sink.
func (rep *ChatReport) store(ctx context.Context, sink ChatSink, format string, c conv, opts ChatOptions) error {
	sess := memory.Session{ID: format + "-" + c.id, Title: c.title, Channel: format, Created: c.created, Updated: c.updated}
	if sess.Created.IsZero() && len(c.msgs) > 0 {
		sess.Created = c.msgs[0].t
	}
	if sess.Updated.IsZero() {
		sess.Updated = sess.Created
	}
	var have map[string]bool
	if len(c.msgs) > 0 {
		var err error
		if have, err = sink.ImportedIDs(ctx, sess.ID); err != nil {
			return err
		}
	}
	evs := make([]memory.Event, 0, len(c.msgs))
	for _, m := range c.msgs {
		if have[m.id] {
			continue
		}
		e := memory.Event{Session: sess.ID, Time: m.t, Role: m.role, Content: m.text, Channel: format, Blocks: m.blocks,
			Meta: map[string]string{MetaImport: format, MetaImportID: m.id}}
		if m.model != "" {
			e.Meta["model"] = m.model
		}
		if opts.Prepare != nil {
			opts.Prepare(ctx, &e)
		}
		evs = append(evs, e)
	}
	for reason, n := range c.skipped {
		if rep.Skipped == nil {
			rep.Skipped = map[string]int{}
		}
		rep.Skipped[reason] += n
	}
	switch {
	case len(c.msgs) == 0:
		rep.Empty++
		return nil
	case len(evs) == 0:
		rep.Unchanged++
		rep.Present += len(c.msgs)
		return nil
	}
	stored, created, err := sink.ImportConversation(ctx, sess, evs)
	if err != nil {
		return err
	}
	if created {
		rep.Sessions++
	}
	if len(stored) > 0 {
		rep.Imported++
	} else {
		rep.Unchanged++
	}
	rep.Events += len(stored)
	rep.Present += len(c.msgs) - len(stored)
	for _, e := range stored {
		rep.Blocks += len(e.Blocks)
	}
	return nil
}

// errConv marks a conversation that is JSON of the right shape but cannot be imported.
var errConv = errors.New("conversation refused")

func convErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errConv, fmt.Sprintf(format, args...))
}

func refusalReason(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the conversation"
		}
		return fmt.Sprintf("%s is a JSON %s, want %s", field, te.Value, jsonKind(te.Type))
	}
	return strings.TrimPrefix(err.Error(), errConv.Error()+": ")
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another kind"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

func describeToken(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// errTooLarge is the reader's error past MaxConversationBytes in one conversation.
var errTooLarge = errors.New("conversation too large")

// countingReader counts the bytes read and refuses to read more than limit bytes (plus the
// decoder's read-ahead) past start, the offset where the conversation being decoded began
// (start < 0: no bound).
type countingReader struct {
	r     io.Reader
	n     int64
	start int64
	limit int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.start >= 0 && c.n-c.start > c.limit {
		return 0, errTooLarge
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// walkBranch returns the ids from the root to current, following parent links (a parent that
// is not in the conversation ends the branch). It fails when current is unknown or the links
// loop.
func walkBranch(current string, parent func(id string) (p string, known bool)) ([]string, error) {
	var path []string
	seen := map[string]bool{}
	for id := current; id != ""; {
		if seen[id] {
			return nil, convErr("the messages' parent links loop at %q", id)
		}
		seen[id] = true
		p, known := parent(id)
		if !known {
			if id == current {
				return nil, convErr("the current message %q is not in the conversation", id)
			}
			break // a parent the export left out: the branch starts below it
		}
		path = append(path, id)
		id = p
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
}

// unixTime reads a Unix time in seconds, milliseconds, microseconds or nanoseconds (told apart
// by size: seconds reach 1e11 only in the year 5138). Zero, negative and non-finite values are
// no time.
func unixTime(f float64) time.Time {
	if f <= 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}
	}
	switch {
	case f >= 1e17:
		return time.Unix(0, int64(f)).UTC()
	case f >= 1e14:
		return time.UnixMicro(int64(f)).UTC()
	case f >= 1e11:
		return time.UnixMilli(int64(f)).UTC()
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

func unixPtr(f *float64) time.Time {
	if f == nil {
		return time.Time{}
	}
	return unixTime(*f)
}

// cleanText makes text safe to store: valid UTF-8 without NUL bytes, trimmed.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.TrimSpace(strings.ReplaceAll(s, "\x00", ""))
}

// timeOr fills missing message times: the previous message's, else the conversation's.
func fillTimes(c *conv) {
	prev := c.created
	for i := range c.msgs {
		if c.msgs[i].t.IsZero() {
			c.msgs[i].t = prev
		}
		prev = c.msgs[i].t
	}
	if c.updated.IsZero() && len(c.msgs) > 0 {
		c.updated = c.msgs[len(c.msgs)-1].t
	}
}
