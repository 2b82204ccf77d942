package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/llm"
)

// maxLine is the longest SSE line accepted (a whole tool-call argument can arrive in one line).
const maxLine = 16 << 20

// scanBufs recycles the scanners' initial 64 KiB buffers: one per streamed reply was a quarter of
// the kernel's allocations per turn. (Lines longer than that grow a private buffer, never pooled.)
var scanBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// errEarlyEOF is returned for a stream that ends with neither [DONE] nor a finish_reason.
var errEarlyEOF = errors.New("stream ended early")

// ReplyCutNote ends a reply cut at Config.MaxReplyBytes (%s is the cap, e.g. "1 MiB").
const ReplyCutNote = "\n\n[reply cut: the provider sent more than %s of text; the rest was dropped]"

// accumulator builds a Response from chunks.
type accumulator struct {
	content, reasoning bytes.Buffer
	calls              toolCalls
	resp               llm.Response
	finished           bool
	max                int  // cap on content + reasoning + arguments; 0 = none
	args               int  // bytes of tool-call arguments so far
	cut                bool // the cap was reached: the rest of the reply is dropped
}

// size is the reply's text so far.
func (a *accumulator) size() int { return a.content.Len() + a.reasoning.Len() + a.args }

// room returns s cut to what the cap leaves (on a rune boundary), marking the reply cut when it
// had to be.
func (a *accumulator) room(s string) string {
	if a.max <= 0 || a.cut {
		if a.cut {
			return ""
		}
		return s
	}
	left := a.max - a.size()
	if len(s) <= left {
		return s
	}
	a.cut = true
	if left < 0 {
		left = 0
	}
	for left > 0 && !utf8.RuneStart(s[left]) {
		left--
	}
	return s[:left]
}

// cutNote ends a cut reply: the note is added to the text (and streamed) and the finish reason
// is "length", as for a reply that hit max_tokens.
func (a *accumulator) cutNote(onDelta func(llm.Delta)) {
	note := fmt.Sprintf(ReplyCutNote, sizeText(a.max))
	a.content.WriteString(note)
	if onDelta != nil {
		onDelta(llm.Delta{Content: note})
	}
	a.resp.FinishReason = "length"
	a.finished = true
}

// sizeText words a byte count: "1 MiB", "64 KiB", "300 bytes".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (a *accumulator) response() llm.Response {
	r := a.resp
	r.Message.Role = "assistant"
	r.Message.Content = a.content.String()
	r.Message.Reasoning = a.reasoning.String()
	r.Message.ToolCalls = a.calls.result()
	return r
}

// chunk applies one decoded chunk, passing text pieces to onDelta.
func (a *accumulator) chunk(w *wireResponse, onDelta func(llm.Delta)) {
	if w.Model != "" {
		a.resp.Model = w.Model
	}
	if w.Usage != nil {
		a.resp.Usage = *w.Usage
	}
	if len(w.Choices) == 0 {
		return
	}
	ch := &w.Choices[0]
	d := &ch.Delta
	if d.Role == "" && d.Content == "" && len(d.ToolCalls) == 0 && d.ReasoningContent == "" && d.Reasoning == "" {
		d = &ch.Message // a non-streamed body, or a server sending "message" in chunks
	}
	reasoning := string(d.ReasoningContent)
	if reasoning == "" {
		reasoning = string(d.Reasoning)
	}
	if reasoning = a.room(reasoning); reasoning != "" {
		a.reasoning.WriteString(reasoning)
		if onDelta != nil {
			onDelta(llm.Delta{Reasoning: reasoning})
		}
	}
	if content := a.room(string(d.Content)); content != "" {
		a.content.WriteString(content)
		if onDelta != nil {
			onDelta(llm.Delta{Content: content})
		}
	}
	for _, tc := range d.ToolCalls {
		if a.max > 0 && a.size()+len(tc.Function.Arguments) > a.max {
			a.cut = true // a call cut in its arguments cannot run: it is dropped
			break
		}
		a.args += len(tc.Function.Arguments)
		a.calls.add(tc)
	}
	if a.cut {
		a.cutNote(onDelta)
		return
	}
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		a.resp.FinishReason = *ch.FinishReason
		a.finished = true
	}
}

// parseStream reads an SSE body: "data:" lines (with or without a space, several lines joined
// until a blank line), ":" comments ignored, "[DONE]" ends the stream.
func (c *Client) parseStream(body io.Reader, onDelta func(llm.Delta)) (llm.Response, error) {
	acc := accumulator{max: c.cfg.MaxReplyBytes}
	sc := bufio.NewScanner(body)
	buf := scanBufs.Get().(*[]byte)
	defer scanBufs.Put(buf)
	sc.Buffer((*buf)[:0], maxLine)
	var data []byte
	haveData := false
	chunks := 0     // JSON chunks dispatched
	var junk []byte // the start of lines that are not SSE at all
	dispatch := func() (done bool, err error) {
		if !haveData {
			return false, nil
		}
		payload := bytes.TrimSpace(data)
		data, haveData = data[:0], false
		if bytes.Equal(payload, []byte("[DONE]")) {
			return true, nil
		}
		if len(payload) == 0 {
			return false, nil
		}
		var w wireResponse
		if err := json.Unmarshal(payload, &w); err != nil {
			return false, c.invalidJSON(err, payload)
		}
		if w.Error != nil {
			return false, &llm.APIError{Provider: c.cfg.Name, Status: http.StatusOK, Message: w.Error.Message}
		}
		acc.chunk(&w, onDelta)
		chunks++
		return acc.cut, nil // a cut reply ends here; closing the body drops the rest
	}
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			done, err := dispatch()
			if err != nil {
				return llm.Response{}, err
			}
			if done {
				return acc.response(), nil
			}
		case line[0] == ':': // keep-alive comment
		case bytes.HasPrefix(line, []byte("data:")):
			v := line[len("data:"):]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			if len(data)+len(v) > maxLine { // many data lines of one event add up to one event
				return llm.Response{}, fmt.Errorf("provider %s: stream event longer than %d bytes", c.cfg.Name, maxLine)
			}
			if haveData {
				data = append(data, '\n')
			}
			data = append(data, v...)
			haveData = true
		default: // event:, id:, retry: and anything else carry nothing we use
			if chunks == 0 && len(junk) < 300 && !isSSEField(line) {
				junk = append(junk, line...)
				junk = append(junk, '\n')
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return llm.Response{}, fmt.Errorf("provider %s: stream line longer than %d bytes", c.cfg.Name, maxLine)
		}
		return llm.Response{}, &retryable{fmt.Errorf("provider %s: read stream: %w", c.cfg.Name, err)}
	}
	done, err := dispatch()
	if err != nil {
		return llm.Response{}, err
	}
	if !done && !acc.finished {
		if chunks == 0 && len(junk) > 0 {
			// Not an event stream at all (an HTML error page, a proxy's banner): garbage, not a
			// cut connection, so it is not retried.
			return llm.Response{}, c.invalidJSON(errors.New("not an event stream"), junk)
		}
		return llm.Response{}, &retryable{fmt.Errorf("provider %s: %w", c.cfg.Name, errEarlyEOF)}
	}
	return acc.response(), nil
}

// isSSEField reports whether line is one of the SSE fields we ignore (event, id, retry).
func isSSEField(line []byte) bool {
	for _, f := range []string{"event:", "id:", "retry:", "event", "id", "retry"} {
		if bytes.HasPrefix(line, []byte(f)) && (len(line) == len(f) || f[len(f)-1] == ':') {
			return true
		}
	}
	return false
}

// parseJSON reads a non-streamed body. onDelta, when set, gets the whole text at once (a
// server that ignored stream:true).
func (c *Client) parseJSON(body io.Reader, onDelta func(llm.Delta)) (llm.Response, error) {
	limit := int64(4*c.cfg.MaxReplyBytes) + 64<<10 // JSON escaping, the envelope, usage
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return llm.Response{}, &retryable{fmt.Errorf("provider %s: read body: %w", c.cfg.Name, err)}
	}
	if int64(len(b)) > limit {
		return llm.Response{}, fmt.Errorf("provider %s: reply body over %s (4 × the %s reply cap): not read; ask for a shorter answer or stream it", c.cfg.Name, sizeText(int(limit)), sizeText(c.cfg.MaxReplyBytes))
	}
	var w wireResponse
	if err := json.Unmarshal(b, &w); err != nil {
		return llm.Response{}, c.invalidJSON(err, b)
	}
	if w.Error != nil {
		return llm.Response{}, &llm.APIError{Provider: c.cfg.Name, Status: http.StatusOK, Message: w.Error.Message}
	}
	if len(w.Choices) == 0 {
		return llm.Response{}, fmt.Errorf("provider %s returned no choices (body %q)", c.cfg.Name, excerpt(b))
	}
	calls := w.Choices[0].Message.ToolCalls
	for i := range calls {
		if calls[i].Index == nil {
			calls[i].Index = &i
		}
	}
	acc := accumulator{max: c.cfg.MaxReplyBytes}
	acc.chunk(&w, onDelta)
	return acc.response(), nil
}
