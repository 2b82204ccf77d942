package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DecodeError is returned by [Decoder.Decode] for a frame that was read in
// full (or skipped) but is not an acceptable message. The stream stays
// usable: the caller may answer (see [DecodeError.RPCError]) and call Decode
// again.
type DecodeError struct {
	// Err describes the problem; it wraps [ErrFrameTooLarge] or [ErrBatch]
	// where those apply.
	Err error
	// ID is the frame's id when one could be read, so the caller can answer
	// (or fail the pending call, see Response); nil otherwise.
	ID *ID
	// Code is the JSON-RPC code to answer with: ParseError for invalid JSON,
	// InvalidRequest for everything else.
	Code int
	// Response reports that the frame looked like a response (no method, a
	// result or an error member). JSON-RPC never answers responses; a caller
	// with a pending call for ID should fail that call instead.
	Response bool
}

// Error implements error.
func (e *DecodeError) Error() string { return "protocol: decode: " + e.Err.Error() }

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// RPCError returns the error object to send back to the peer.
func (e *DecodeError) RPCError() *Error {
	msg := "invalid request"
	if e.Code == ParseError {
		msg = "parse error"
	}
	return &Error{Code: e.Code, Message: msg + ": " + e.Err.Error()}
}

// prefixKeep is how much of an oversized frame is kept to recover its id.
const prefixKeep = 4096

// Decoder reads newline-delimited JSON-RPC messages. It is not safe for
// concurrent use.
type Decoder struct {
	r   *bufio.Reader
	max int
	buf []byte
	err error // sticky read error, returned once the pending frame is consumed
}

// NewDecoder returns a Decoder reading frames of at most maxFrame bytes
// (excluding the line terminator) from r. maxFrame <= 0 means
// [DefaultNativeMaxFrame].
func NewDecoder(r io.Reader, maxFrame int) *Decoder {
	if maxFrame <= 0 {
		maxFrame = DefaultNativeMaxFrame
	}
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), max: maxFrame}
}

// Decode reads the next message. Frames end with "\n" ("\r\n" is tolerated);
// blank lines are skipped; a final frame without a newline is decoded at end
// of input. It returns io.EOF at the end of input and the reader's error if
// reading fails; after those the Decoder is done. A bad frame yields a
// *[DecodeError] and the caller may continue: invalid JSON (ParseError), a
// JSON array (wraps [ErrBatch]), a frame over the limit (wraps
// [ErrFrameTooLarge]; the frame is skipped up to its newline and its id is
// recovered from its first bytes when possible), or an invalid message
// (InvalidRequest: wrong jsonrpc version, an id that is not a string or an
// integer, both result and error, neither method nor result/error, …).
func (d *Decoder) Decode() (Message, error) {
	for {
		if d.err != nil {
			return Message{}, d.err
		}
		line, size, prefix, err := d.readFrame()
		if err != nil {
			d.err = err
		}
		if prefix != nil {
			return Message{}, d.tooLarge(size, prefix)
		}
		line = trimSpace(line)
		if len(line) == 0 {
			continue
		}
		return parseMessage(line)
	}
}

// readFrame reads one line. For an oversized line it returns the line's size
// and its first bytes in prefix, having discarded the rest.
func (d *Decoder) readFrame() (line []byte, size int, prefix []byte, err error) {
	d.buf = d.buf[:0]
	term := 0
	for {
		chunk, rerr := d.r.ReadSlice('\n')
		size += len(chunk)
		term = trailer(chunk)
		if prefix == nil && len(d.buf)+len(chunk) > d.max+2 { // room for "\r\n"
			d.buf = append(d.buf, chunk[:min(len(chunk), prefixKeep)]...)
			prefix = bytes.Clone(d.buf[:min(len(d.buf), prefixKeep)])
		} else if prefix == nil {
			d.buf = append(d.buf, chunk...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if rerr == nil || (rerr == io.EOF && size > 0) {
			if rerr == io.EOF {
				err = io.EOF
			}
		} else {
			err = rerr
		}
		break
	}
	if cap(d.buf) > 1<<20 {
		defer func() { d.buf = nil }()
	}
	size -= term
	if prefix != nil {
		return nil, size, prefix, err
	}
	line = d.buf[:len(d.buf)-trailer(d.buf)]
	if len(line) > d.max {
		return nil, len(line), bytes.Clone(line[:min(len(line), prefixKeep)]), err
	}
	return line, size, nil, err
}

// trailer returns the length of the line terminator ending b.
func trailer(b []byte) int {
	n := 0
	if len(b) > 0 && b[len(b)-1] == '\n' {
		n++
		if len(b) > 1 && b[len(b)-2] == '\r' {
			n++
		}
	}
	return n
}

// tooLarge builds the error for a skipped oversized frame.
func (d *Decoder) tooLarge(size int, prefix []byte) error {
	id, method, response := scanPrefix(prefix)
	return &DecodeError{
		Err:      fmt.Errorf("%w: %d bytes exceeds the %d-byte limit; send bulk data out of band", ErrFrameTooLarge, size, d.max),
		ID:       id,
		Code:     InvalidRequest,
		Response: response && !method,
	}
}

// scanPrefix reads the top-level members of a possibly truncated or invalid
// JSON object and reports its id (if readable), whether it has a method, and
// whether it has a result or an error member.
func scanPrefix(b []byte) (id *ID, method, response bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false, false
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return id, method, response
		}
		key, ok := t.(string)
		if !ok {
			return id, method, response
		}
		start := dec.InputOffset()
		switch key {
		case "id":
			if _, err := dec.Token(); err != nil {
				return id, method, response
			}
			raw := bytes.TrimLeft(b[start:dec.InputOffset()], " \t\r\n:")
			if r, err := parseID(raw); err == nil {
				id = &ID{raw: r}
			}
			continue
		case "method":
			method = true
		case "result", "error":
			response = true
		}
		if err := skipValue(dec); err != nil {
			return id, method, response
		}
	}
}

// skipValue consumes one value from dec.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// wireMessage is the raw shape of a frame, to tell absent members from null ones.
type wireMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// parseMessage validates one frame (non-empty, trimmed).
func parseMessage(b []byte) (Message, error) {
	if !json.Valid(b) {
		id, method, response := scanPrefix(b)
		return Message{}, &DecodeError{Err: errors.New("invalid JSON"), ID: id, Code: ParseError, Response: response && !method}
	}
	switch b[0] {
	case '[':
		return Message{}, &DecodeError{Err: ErrBatch, Code: InvalidRequest}
	case '{':
	default:
		return Message{}, &DecodeError{Err: errors.New("message must be a JSON object"), Code: InvalidRequest}
	}
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return Message{}, &DecodeError{Err: err, Code: InvalidRequest}
	}
	hasMethod := len(w.Method) > 0
	response := !hasMethod && (len(w.Result) > 0 || len(w.Error) > 0)
	bad := func(id *ID, format string, args ...any) (Message, error) {
		return Message{}, &DecodeError{Err: fmt.Errorf(format, args...), ID: id, Code: InvalidRequest, Response: response}
	}
	var id *ID
	nullID := false
	if len(w.ID) > 0 {
		if string(w.ID) == "null" {
			nullID = true
		} else {
			raw, err := parseID(w.ID)
			if err != nil {
				return bad(nil, "%w", err)
			}
			id = &ID{raw: raw}
		}
	}
	var version string
	if err := json.Unmarshal(w.JSONRPC, &version); err != nil || version != Version {
		return bad(id, `"jsonrpc" must be "2.0"`)
	}
	m := Message{JSONRPC: Version, ID: id}
	if hasMethod {
		if err := json.Unmarshal(w.Method, &m.Method); err != nil || m.Method == "" {
			return bad(id, `"method" must be a non-empty string`)
		}
		if len(w.Result) > 0 || len(w.Error) > 0 {
			return bad(id, "a request must not carry a result or an error")
		}
		if nullID {
			return bad(nil, "id must be a string or an integer, got null")
		}
		if len(w.Params) > 0 && string(w.Params) != "null" {
			if w.Params[0] != '{' && w.Params[0] != '[' {
				return bad(id, `"params" must be an object or an array`)
			}
			m.Params = w.Params
		}
		return m, nil
	}
	switch {
	case len(w.Result) > 0 && len(w.Error) > 0:
		return bad(id, "a response must not carry both a result and an error")
	case len(w.Result) == 0 && len(w.Error) == 0:
		return bad(id, `message has neither "method" nor "result"/"error"`)
	case id == nil && !nullID:
		return bad(nil, "a response must carry an id")
	case len(w.Result) > 0:
		if nullID {
			return bad(nil, "a successful response must carry a non-null id")
		}
		m.Result = w.Result
	default:
		var e Error
		if w.Error[0] != '{' || json.Unmarshal(w.Error, &e) != nil {
			return bad(id, `"error" must be an object with an integer "code" and a string "message"`)
		}
		m.Error = &e
	}
	return m, nil
}

// Encoder writes JSON-RPC messages, one per line. It is safe for concurrent
// use: each message is written with a single Write call.
type Encoder struct {
	mu  sync.Mutex
	w   io.Writer
	max int
	buf []byte
}

// NewEncoder returns an Encoder writing to w and refusing frames over
// maxFrame bytes (excluding the newline). maxFrame <= 0 means
// [DefaultNativeMaxFrame].
func NewEncoder(w io.Writer, maxFrame int) *Encoder {
	if maxFrame <= 0 {
		maxFrame = DefaultNativeMaxFrame
	}
	return &Encoder{w: w, max: maxFrame}
}

// Encode writes m as one compact line (member order as [Message.MarshalJSON],
// no HTML escaping, raw members compacted). A frame over the limit is not
// written and the error wraps [ErrFrameTooLarge].
func (e *Encoder) Encode(m Message) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := m.appendJSON(e.buf[:0])
	if err != nil {
		return fmt.Errorf("protocol: encode: %w", err)
	}
	if cap(b) <= 1<<20 {
		e.buf = b
	} else {
		e.buf = nil
	}
	if len(b) > e.max {
		return fmt.Errorf("protocol: encode: %w: %d bytes exceeds the %d-byte limit", ErrFrameTooLarge, len(b), e.max)
	}
	if _, err := e.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("protocol: write: %w", err)
	}
	return nil
}

// appendString appends s as a JSON string without HTML escaping.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendRaw appends raw JSON, compacted onto one line; invalid JSON is an error.
func appendRaw(b []byte, raw []byte) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// marshal encodes v without HTML escaping; json.RawMessage and []byte
// holding JSON are used as they are.
func marshal(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
