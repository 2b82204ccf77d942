package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
)

// TestChatResponseFormat: a request with a ResponseSchema sends response_format json_schema;
// a server that refuses it (HTTP 400) is asked with json_object, then with neither, and the
// client remembers what the server took.
func TestChatResponseFormat(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"facts":{"type":"array"}},"required":["facts"]}`)
	tests := []struct {
		name    string
		accepts map[string]bool // response_format types the server takes ("" = none sent)
		want    []string        // the formats of the requests, in order (two Chats)
	}{
		{"schema accepted", map[string]bool{"json_schema": true}, []string{"json_schema", "json_schema"}},
		{"json_object fallback", map[string]bool{"json_object": true}, []string{"json_schema", "json_object", "json_object"}},
		{"none", map[string]bool{"": true}, []string{"json_schema", "json_object", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
				_ = n
			})
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec.record(r)
				rec.mu.Lock()
				body := rec.bodies[len(rec.bodies)-1]
				rec.mu.Unlock()
				typ := ""
				if rf, ok := body["response_format"].(map[string]any); ok {
					typ, _ = rf["type"].(string)
					if typ == "json_schema" {
						js, _ := rf["json_schema"].(map[string]any)
						if js["schema"] == nil || js["strict"] != true {
							t.Errorf("json_schema format without the schema: %v", rf)
						}
					}
				}
				if !tt.accepts[typ] {
					w.WriteHeader(http.StatusBadRequest)
					io.WriteString(w, `{"error":{"message":"response_format `+typ+` is not supported"}}`)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"model":"m1","choices":[{"message":{"role":"assistant","content":"{\"facts\":[]}"},"finish_reason":"stop"}]}`)
			})
			c := client(t, srv, rec, nil)
			for range 2 {
				resp, err := c.Chat(context.Background(), llm.Request{ResponseSchema: schema, Messages: []llm.Message{{Role: "user", Content: "x"}}}, nil)
				if err != nil || resp.Message.Content != `{"facts":[]}` {
					t.Fatalf("Chat = %+v, %v", resp, err)
				}
			}
			var got []string
			rec.mu.Lock()
			for _, b := range rec.bodies {
				typ := ""
				if rf, ok := b["response_format"].(map[string]any); ok {
					typ, _ = rf["type"].(string)
				}
				got = append(got, typ)
			}
			rec.mu.Unlock()
			if len(got) != len(tt.want) {
				t.Fatalf("formats %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("formats %q, want %q", got, tt.want)
				}
			}
		})
	}
}
