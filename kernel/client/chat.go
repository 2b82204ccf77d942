package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrStreamEnded is returned by [HTTP.Chat] when the stream closes before its final or error event.
var ErrStreamEnded = errors.New("stream ended early")

// TurnError is a turn that failed after it started: the stream's "error" event.
type TurnError struct {
	TurnID  string
	Message string
}

// Error returns the kernel's message.
func (e *TurnError) Error() string { return e.Message }

// Chat runs one agent turn (POST /api/v1/chat) and calls emit for each streamed event in order,
// "final" or "error" included. A final event gives the result; an error event gives a *[TurnError];
// a stream that ends before either gives [ErrStreamEnded]. Cancelling ctx closes the connection,
// which cancels the turn in the kernel. Errors found before the stream (unknown session, bad
// request) are *[Error]. emit may be nil.
func (c *HTTP) Chat(ctx context.Context, req ChatRequest, emit func(ChatEvent)) (ChatResult, error) {
	if emit == nil {
		emit = func(ChatEvent) {}
	}
	hreq, err := c.newRequest(ctx, http.MethodPost, "/api/v1/chat", req)
	if err != nil {
		return ChatResult{}, err
	}
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(hreq)
	if err != nil {
		return ChatResult{}, fmt.Errorf("chat: %w", err)
	}
	defer resp.Body.Close()

	var res ChatResult
	var turnErr error
	done := false
	err = readSSE(resp.Body, func(name string, data []byte) error {
		var ev ChatEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("decode %q event: %w", name, err)
		}
		if ev.Type == "" {
			ev.Type = name
		}
		switch ev.Type {
		case EventTurn:
			res.TurnID, res.Session = ev.TurnID, ev.Session
		case EventFinal:
			if ev.TurnID != "" {
				res.TurnID = ev.TurnID
			}
			if ev.Session != "" {
				res.Session = ev.Session
			}
			res.Text, res.Usage = ev.Text, ev.Usage
			done = true
		case EventError:
			msg := ev.Text
			if msg == "" {
				msg = "turn failed"
			}
			id := ev.TurnID
			if id == "" {
				id = res.TurnID
			}
			turnErr = &TurnError{TurnID: id, Message: msg}
			done = true
		}
		emit(ev)
		if done {
			return errStop
		}
		return nil
	})
	switch {
	case turnErr != nil:
		return res, turnErr
	case done:
		return res, nil
	case ctx.Err() != nil:
		return res, fmt.Errorf("chat: %w", ctx.Err())
	case err != nil:
		return res, fmt.Errorf("chat: %w", err)
	}
	return res, fmt.Errorf("chat: %w", ErrStreamEnded)
}

// errStop ends readSSE without an error.
var errStop = errors.New("stop")

// readSSE parses a text/event-stream body and calls fn for each event that carries data, with the
// event name ("message" when none) and the data lines joined by "\n". Comments and id/retry fields
// are ignored, and so is an event cut off by the end of the body. fn returning errStop ends the
// read with nil; other errors are returned. A line may be of any length (a final reply, a tool
// result): the reader holds one event at a time, as long as the kernel made it.
func readSSE(r io.Reader, fn func(name string, data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var name string
	var data, line []byte
	hasData := false
	dispatch := func() error {
		defer func() { name, data, hasData = "", data[:0], false }()
		if !hasData {
			return nil
		}
		n := name
		if n == "" {
			n = "message"
		}
		return fn(n, data)
	}
	for {
		var err error
		line, err = readLine(br, line[:0])
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil // an event not closed by its blank line is incomplete and dropped
			}
			return err
		}
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
}

// readLine appends the next line of br to buf, without its "\n" or "\r\n", whatever its length.
// A last line without a newline is returned with io.EOF only when it is empty.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			buf = buf[:len(buf)-1]
			return bytes.TrimSuffix(buf, []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return bytes.TrimSuffix(buf, []byte("\r")), io.EOF
		default:
			return buf, err
		}
	}
}
