package client

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReadSSE feeds the client's event-stream reader arbitrary bytes, as a (remote) kernel or
// anything posing as one may send them: it never panics, every event it reports has a name, and
// errStop from the callback ends the read cleanly.
func FuzzReadSSE(f *testing.F) {
	for _, s := range []string{
		"event: delta\ndata: {\"text\":\"hi\"}\n\n",
		"data: a\ndata: b\n\n: comment\nid: 7\nretry: 10\n\nevent: final\ndata: {}\n\n",
		"event: delta\r\ndata: x\r\n\r\n",
		"data:no space\n\ndata\n\n",
		"event: cut\ndata: never ended",
		"\xff\xfe\n\n",
	} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, stopAfter int) {
		n := 0
		err := readSSE(bytes.NewReader(data), func(name string, _ []byte) error {
			if name == "" {
				t.Fatal("an event without a name")
			}
			n++
			if stopAfter > 0 && n == stopAfter {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			t.Fatal("errStop leaked out of readSSE")
		}
	})
}
