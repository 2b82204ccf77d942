package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
)

// TestReplyCap streams far more text than the cap: the reply is cut at the cap with the note,
// finish reason "length", and the client stops reading (the server's writes fail) instead of
// holding the whole stream.
func TestReplyCap(t *testing.T) {
	piece := strings.Repeat("é", 500) // 1000 bytes: a cut must fall on a rune boundary
	tests := []struct {
		name   string
		chunk  string // one delta's JSON
		stream bool
	}{
		{"content", `{"content":%q}`, true},
		{"reasoning", `{"reasoning_content":%q}`, true},
		{"content not streamed", `{"content":%q}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent atomic.Int64
			var failed atomic.Bool
			srv, rec := server(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				if !tt.stream {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, strings.Repeat(piece, 300))
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < 100_000; i++ { // 100 MB unless the client hangs up
					n, err := fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":"+tt.chunk+"}]}\n\n", piece)
					sent.Add(int64(n))
					if err != nil {
						failed.Store(true)
						return
					}
					w.(http.Flusher).Flush()
				}
				io.WriteString(w, "data: [DONE]\n\n")
			})
			c := client(t, srv, rec, func(cfg *openai.Config) { cfg.MaxReplyBytes = 100_000 })
			var streamed strings.Builder
			var onDelta func(llm.Delta)
			if tt.stream {
				onDelta = func(d llm.Delta) { streamed.WriteString(d.Content + d.Reasoning) }
			}
			resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "go"}}}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			note := fmt.Sprintf(openai.ReplyCutNote, "100000 bytes")
			text := resp.Message.Reasoning + resp.Message.Content // the note ends the content
			if !strings.HasSuffix(resp.Message.Content, note) || resp.FinishReason != "length" {
				t.Fatalf("finish %q, content ends %q", resp.FinishReason, resp.Message.Content[max(0, len(resp.Message.Content)-120):])
			}
			if n := len(text) - len(note); n > 100_000 || n < 99_000 {
				t.Fatalf("kept %d bytes of text, want the cap (100000) on a rune boundary", n)
			}
			if !strings.HasPrefix(strings.TrimSuffix(text, note), "é") || strings.ContainsRune(text, '\uFFFD') {
				t.Fatal("the cut split a rune")
			}
			if tt.stream {
				if streamed.String() != text {
					t.Fatalf("streamed %d bytes, reply %d", streamed.Len(), len(text))
				}
				srv.CloseClientConnections()
				if sent.Load() > 50<<20 && !failed.Load() {
					t.Fatalf("the client read the whole stream (%d bytes) instead of hanging up", sent.Load())
				}
			}
		})
	}
}

func TestReplyBodyOverLimit(t *testing.T) {
	srv, rec := server(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, strings.Repeat("x", 500_000))
	})
	c := client(t, srv, rec, func(cfg *openai.Config) { cfg.MaxReplyBytes = 100_000; cfg.MaxRetries = -1 })
	_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "go"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "reply body over") {
		t.Fatalf("err = %v", err)
	}
	var ae *llm.APIError
	if errors.As(err, &ae) {
		t.Fatalf("a local limit reported as a server error: %v", err)
	}
}

func TestStreamEventOverLimit(t *testing.T) {
	srv, rec := server(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		line := "data: " + strings.Repeat("x", 1<<20) + "\n"
		for i := 0; i < 20; i++ { // 20 MiB in one event of many data lines, never a blank line
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
	})
	c := client(t, srv, rec, func(cfg *openai.Config) { cfg.MaxRetries = -1 })
	_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "go"}}}, func(llm.Delta) {})
	if err == nil || !strings.Contains(err.Error(), "stream event longer than") {
		t.Fatalf("err = %v", err)
	}
}
