package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
)

var png = llm.Image{MIME: "image/png", Data: []byte("\x89PNG\r\n\x1a\nfake"), Name: "a.png"}

// visionServer answers /models with models (the "data" array's JSON), /api/show (an Ollama
// root) with show, or 404 when show is empty, and chat requests with "ok"; it records the chat
// bodies.
func visionServer(t *testing.T, models, show string) (*openai.Client, *recorder, func(mod func(*openai.Config)) *openai.Client) {
	t.Helper()
	srv, rec := server(t, func(int, http.ResponseWriter, *http.Request) {})
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/models"):
			io.WriteString(w, `{"object":"list","data":`+models+`}`)
		case r.URL.Path == "/api/show":
			var req struct{ Model string }
			if show == "" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "m1" {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"error":"not found"}`)
				return
			}
			io.WriteString(w, show)
		default:
			rec.record(r)
			io.WriteString(w, `{"model":"m1","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
		}
	})
	mk := func(mod func(*openai.Config)) *openai.Client { return client(t, srv, rec, mod) }
	return mk(nil), rec, mk
}

// parts returns the content parts of message i of the last chat body: their types, and the
// data URLs of the images.
func parts(t *testing.T, rec *recorder, i int) (types, urls []string, msgs []any) {
	t.Helper()
	rec.mu.Lock()
	body := rec.bodies[len(rec.bodies)-1]
	rec.mu.Unlock()
	msgs, _ = body["messages"].([]any)
	if i < 0 {
		i += len(msgs)
	}
	m, _ := msgs[i].(map[string]any)
	list, ok := m["content"].([]any)
	if !ok {
		return []string{"string"}, nil, msgs
	}
	for _, p := range list {
		pm, _ := p.(map[string]any)
		types = append(types, pm["type"].(string))
		if iu, ok := pm["image_url"].(map[string]any); ok {
			urls = append(urls, iu["url"].(string))
		}
	}
	return types, urls, msgs
}

// TestVisionDetected: whether a request's images are sent as image_url parts follows what the
// server says of the model (OpenRouter's architecture.input_modalities, an input_modalities list,
// capabilities, Ollama's /api/show), or the configuration when set; without a word from the
// server they are left out, the text alone going.
func TestVisionDetected(t *testing.T) {
	tests := []struct {
		name, models, show string
		vision             *bool
		want               bool
	}{
		{"openrouter image", `[{"id":"m1","architecture":{"input_modalities":["text","image"]}}]`, "", nil, true},
		{"openrouter text only", `[{"id":"m1","architecture":{"input_modalities":["text"]}}]`, "", nil, false},
		{"input_modalities", `[{"id":"m0"},{"id":"m1","input_modalities":["image","text"]}]`, "", nil, true},
		{"modalities.input", `[{"id":"m1","modalities":{"input":["text","image"],"output":["text"]}}]`, "", nil, true},
		{"capabilities object", `[{"id":"m1","capabilities":{"vision":true}}]`, "", nil, true},
		{"another model has it", `[{"id":"m1"},{"id":"m2","input_modalities":["image"]}]`, "", nil, false},
		{"ollama show", `[{"id":"m1","object":"model","owned_by":"library"}]`, `{"capabilities":["completion","vision"]}`, nil, true},
		{"ollama show text", `[{"id":"m1"}]`, `{"capabilities":["completion","tools"]}`, nil, false},
		{"silent server", `[{"id":"m1"}]`, "", nil, false},
		{"configured on", `[{"id":"m1"}]`, "", new(true), true},
		{"configured off", `[{"id":"m1","input_modalities":["image"]}]`, "", new(false), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rec, mk := visionServer(t, tt.models, tt.show)
			c := mk(func(c *openai.Config) { c.Vision = tt.vision })
			for range 2 { // the second request uses the cached answer
				_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "what is this? [attached image]", Images: []llm.Image{png}}}}, nil)
				if err != nil {
					t.Fatal(err)
				}
				types, urls, _ := parts(t, rec, -1)
				if got := len(urls) == 1; got != tt.want {
					t.Fatalf("image sent %v, want %v (parts %v)", got, tt.want, types)
				}
				if tt.want && (types[0] != "text" || urls[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png.Data)) {
					t.Fatalf("parts %v %v", types, urls)
				}
			}
		})
	}
}

// TestVisionToolImages: a tool result's images (tool messages take text only) follow the run of
// tool messages in one user message, which keeps every tool call paired with its result.
func TestVisionToolImages(t *testing.T) {
	_, rec, mk := visionServer(t, `[]`, "")
	c := mk(func(c *openai.Config) { c.Vision = new(true) })
	msgs := []llm.Message{
		{Role: "user", Content: "take two screenshots"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "a", Name: "shot", Arguments: "{}"}, {ID: "b", Name: "shot", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "a", Content: "[image image/png, 12 bytes]", Images: []llm.Image{png}},
		{Role: "tool", ToolCallID: "b", Content: "[image image/png, 12 bytes]", Images: []llm.Image{png}},
	}
	if _, err := c.Chat(context.Background(), llm.Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	_, urls, sent := parts(t, rec, -1)
	roles := []string{}
	for _, m := range sent {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool,user" || len(urls) != 2 {
		t.Fatalf("roles %v, %d images in the last message", roles, len(urls))
	}
	for _, i := range []int{2, 3} {
		if types, _, _ := parts(t, rec, i); types[0] != "string" {
			t.Fatalf("tool message %d has parts %v", i, types)
		}
	}
	// Without images nothing changes: the content is a string.
	if _, err := c.Chat(context.Background(), llm.Request{Messages: msgs[:1]}, nil); err != nil {
		t.Fatal(err)
	}
	if types, _, _ := parts(t, rec, 0); types[0] != "string" {
		t.Fatalf("a message without images sent as parts %v", types)
	}
}
