package api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// BenchmarkChatOverhead measures a full POST /api/v1/chat over the unix socket against a backend
// that answers at once: the API's own cost per turn (decode, SSE framing, flushes).
func BenchmarkChatOverhead(b *testing.B) {
	s := New(&fakeBackend{chat: func(_ context.Context, _ client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
		emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1", Session: "main"})
		emit(client.ChatEvent{Type: client.EventDelta, TurnID: "t1", Text: "hello"})
		return client.ChatResult{TurnID: "t1", Session: "main", Text: "hello"}, nil
	}}, Options{})
	sv := serveUnix(b, s, "")
	const body = `{"session":"main","input":"hi"}`
	b.ReportAllocs()
	for b.Loop() {
		resp, err := sv.client.Post(sv.base+"/api/v1/chat", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
}
