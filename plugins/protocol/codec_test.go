package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// summarize renders one Decode outcome compactly for table comparisons.
func summarize(m Message, err error) string {
	var de *DecodeError
	switch {
	case errors.As(err, &de):
		id := "-"
		if de.ID != nil {
			id = string(de.ID.raw)
		}
		kind := "invalid"
		switch {
		case errors.Is(err, ErrBatch):
			kind = "batch"
		case errors.Is(err, ErrFrameTooLarge):
			kind = "toolarge"
		}
		return fmt.Sprintf("err %d %s id=%s resp=%v", de.Code, kind, id, de.Response)
	case err == io.EOF:
		return "EOF"
	case err != nil:
		return "fatal " + err.Error()
	case m.IsRequest():
		return "req " + m.Method + " id=" + m.ID.raw
	case m.IsNotification():
		return "notif " + m.Method
	default:
		id := "null"
		if m.ID != nil {
			id = m.ID.raw
		}
		if m.Error != nil {
			return fmt.Sprintf("resp id=%s error=%d", id, m.Error.Code)
		}
		return "resp id=" + id + " result=" + string(m.Result)
	}
}

func TestDecoder(t *testing.T) {
	t.Parallel()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}` // 40 bytes
	tests := []struct {
		name  string
		in    string
		max   int
		wants []string
	}{
		{"blank lines and CRLF", "\n\r\n" + ping + "\r\n  \n" + `{"jsonrpc":"2.0","method":"n"}` + "\n", 0,
			[]string{"req ping id=1", "notif n", "EOF"}},
		{"last frame without newline", ping, 0, []string{"req ping id=1", "EOF"}},
		{"exactly at the limit with CRLF", ping + "\r\n" + ping + "\n", 40, []string{"req ping id=1", "req ping id=1", "EOF"}},
		{"one byte over the limit, stream continues", `{"jsonrpc":"2.0","id":2,"method":"pingg"}` + "\n" + ping + "\n", 40,
			[]string{"err -32600 toolarge id=2 resp=false", "req ping id=1", "EOF"}},
		{"far over the limit across buffer fills", `{"jsonrpc":"2.0","id":"big","result":"` + strings.Repeat("a", 200<<10) + `"}` + "\n" + ping, 1000,
			[]string{"err -32600 toolarge id=\"big\" resp=true", "req ping id=1", "EOF"}},
		{"batch", `[` + ping + `]` + "\n" + ping, 0, []string{"err -32600 batch id=- resp=false", "req ping id=1", "EOF"}},
		{"invalid JSON with id", `{"jsonrpc":"2.0","id":"x","method":` + "\n", 0, []string{`err -32700 invalid id="x" resp=false`, "EOF"}},
		{"invalid JSON without id", "{oops\n", 0, []string{"err -32700 invalid id=- resp=false", "EOF"}},
		{"result and error", `{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"m"}}`, 0, []string{"err -32600 invalid id=3 resp=true", "EOF"}},
		{"responses", `{"jsonrpc":"2.0","id":3,"result":null}` + "\n" + `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, 0,
			[]string{"resp id=3 result=null", "resp id=null error=-32700", "EOF"}},
		{"error not an object", `{"jsonrpc":"2.0","id":3,"error":5}`, 0, []string{"err -32600 invalid id=3 resp=true", "EOF"}},
		{"missing jsonrpc", `{"id":3,"method":"m"}`, 0, []string{"err -32600 invalid id=3 resp=false", "EOF"}},
		{"empty method", `{"jsonrpc":"2.0","id":3,"method":""}`, 0, []string{"err -32600 invalid id=3 resp=false", "EOF"}},
		{"request with result", `{"jsonrpc":"2.0","id":3,"method":"m","result":1}`, 0, []string{"err -32600 invalid id=3 resp=false", "EOF"}},
		{"null params are absent", `{"jsonrpc":"2.0","method":"m","params":null}`, 0, []string{"notif m", "EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(tt.in), tt.max)
			for i, want := range tt.wants {
				if got := summarize(d.Decode()); got != want {
					t.Errorf("frame %d: got %q, want %q", i, got, want)
				}
			}
		})
	}
}

// failingReader returns data then a non-EOF error.
type failingReader struct{ data string }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errors.New("pipe broke")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestDecoderReadError(t *testing.T) {
	t.Parallel()
	d := NewDecoder(&failingReader{data: `{"jsonrpc":"2.0","method":"n"}` + "\n"}, 0)
	if got := summarize(d.Decode()); got != "notif n" {
		t.Fatalf("got %q", got)
	}
	for range 2 {
		if _, err := d.Decode(); err == nil || err.Error() != "pipe broke" {
			t.Fatalf("err = %v, want pipe broke (sticky)", err)
		}
	}
}

func TestEncoderLimit(t *testing.T) {
	t.Parallel()
	id := IntID(1)
	m := Message{ID: &id, Method: "ping"} // 40 bytes
	tests := []struct {
		name    string
		max     int
		tooBig  bool
		written string
	}{
		{"at the limit", 40, false, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"},
		{"one over", 39, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := NewEncoder(&buf, tt.max).Encode(m)
			if errors.Is(err, ErrFrameTooLarge) != tt.tooBig || (!tt.tooBig && err != nil) {
				t.Fatalf("err = %v, want too large = %v", err, tt.tooBig)
			}
			if buf.String() != tt.written {
				t.Errorf("wrote %q, want %q", buf.String(), tt.written)
			}
		})
	}
	if err := NewEncoder(io.Discard, 0).Encode(Message{Method: "m", Params: []byte("{bad")}); err == nil {
		t.Error("invalid params encoded without error")
	}
}

func TestEncoderConcurrent(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	enc := NewEncoder(&buf, 0)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := IntID(int64(i))
			params := fmt.Sprintf(`{"pad":"%s"}`, strings.Repeat("p", i*100))
			if err := enc.Encode(Message{ID: &id, Method: "m", Params: []byte(params)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	d := NewDecoder(&buf, 0)
	seen := map[string]bool{}
	for {
		m, err := d.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("interleaved output: %v", err)
		}
		seen[m.ID.raw] = true
	}
	if len(seen) != n {
		t.Errorf("decoded %d distinct messages, want %d", len(seen), n)
	}
}
