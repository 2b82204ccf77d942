// Package protocol is the hand-written JSON-RPC 2.0 codec HologramAgent speaks
// with its plugins: native plugins and stdio MCP servers alike
// (ARCHITECTURE.md §5).
//
// The wire is one JSON object per line over a plugin's stdin/stdout. Requests,
// responses and notifications are supported; batches are refused cleanly with
// an InvalidRequest answer and the stream continues. Ids are JSON strings or
// integers and are echoed byte-exactly ([ID]); anything else gets -32600.
// Frames are bounded ([DefaultNativeMaxFrame] for native plugins,
// [DefaultMCPMaxFrame] for MCP servers) and an oversized frame is reported
// with [ErrFrameTooLarge] and skipped.
//
// [Decoder] and [Encoder] are the framing layer; [Conn] is a bidirectional
// endpoint that serves incoming requests through a [Handler] and issues
// outgoing calls. The MCP lifecycle types ([InitializeParams], [Tool],
// [CallToolResult], …) live alongside.
//
// The package imports only the standard library. Its exported API is stable
// within the plugin host issue; additions are backwards compatible.
package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Version is the JSON-RPC version every message carries in its "jsonrpc" member.
const Version = "2.0"

// Frame limits in bytes, excluding the line terminator.
const (
	// DefaultNativeMaxFrame bounds frames exchanged with native plugins; bulk
	// data goes through shared memory instead.
	DefaultNativeMaxFrame = 1 << 20
	// DefaultMCPMaxFrame bounds frames exchanged with MCP servers unless
	// configured otherwise.
	DefaultMCPMaxFrame = 64 << 20
)

// Standard JSON-RPC 2.0 error codes.
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InvalidParams  = -32602
	InternalError  = -32603
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrFrameTooLarge reports a frame over the configured limit. It is
	// wrapped with the limit and a message fit to show the plugin author.
	ErrFrameTooLarge = errors.New("frame too large")
	// ErrBatch reports a JSON array frame: batches are not supported and are
	// answered with InvalidRequest; the stream continues.
	ErrBatch = errors.New("batch requests are not supported")
	// ErrClosed reports that the connection closed before a call completed or
	// that the [Conn] is no longer usable.
	ErrClosed = errors.New("connection closed")
)

// Error is a JSON-RPC error object. It implements error so that handlers can
// return it and [Conn.Call] can report it; use errors.As to recover it.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string {
	if e.Message == "" {
		return "jsonrpc error " + strconv.Itoa(e.Code)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Message is one JSON-RPC 2.0 frame: a request (Method and ID), a
// notification (Method, no ID), or a response (ID and exactly one of Result
// and Error). A response whose ID is nil is written with "id": null, as
// JSON-RPC requires when the request id could not be read.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether m is a request: it has a method and an id.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification: a method without an id.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response: no method, and a result or an error.
func (m *Message) IsResponse() bool {
	return m.Method == "" && (m.Result != nil || m.Error != nil)
}

// MarshalJSON writes m in the canonical member order (jsonrpc, id, method,
// params, result, error). JSONRPC defaults to [Version]; a response with a nil
// ID gets "id":null and a successful response without a Result gets
// "result":null.
func (m Message) MarshalJSON() ([]byte, error) {
	return m.appendJSON(nil)
}

// appendJSON appends m's compact encoding, without HTML escaping, to b.
func (m *Message) appendJSON(b []byte) ([]byte, error) {
	v := m.JSONRPC
	if v == "" {
		v = Version
	}
	b = append(b, `{"jsonrpc":`...)
	b = appendString(b, v)
	isResp := m.Method == ""
	switch {
	case m.ID != nil && !m.ID.IsZero():
		b = append(b, `,"id":`...)
		b = append(b, m.ID.raw...)
	case isResp:
		b = append(b, `,"id":null`...)
	}
	var err error
	if m.Method != "" {
		b = append(b, `,"method":`...)
		b = appendString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			if b, err = appendRaw(b, m.Params); err != nil {
				return nil, fmt.Errorf("params: %w", err)
			}
		}
		return append(b, '}'), nil
	}
	if m.Error != nil {
		b = append(b, `,"error":{"code":`...)
		b = strconv.AppendInt(b, int64(m.Error.Code), 10)
		b = append(b, `,"message":`...)
		b = appendString(b, m.Error.Message)
		if len(m.Error.Data) > 0 {
			b = append(b, `,"data":`...)
			if b, err = appendRaw(b, m.Error.Data); err != nil {
				return nil, fmt.Errorf("error data: %w", err)
			}
		}
		return append(b, "}}"...), nil
	}
	b = append(b, `,"result":`...)
	if len(m.Result) == 0 {
		b = append(b, "null"...)
	} else if b, err = appendRaw(b, m.Result); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return append(b, '}'), nil
}
