package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestAnswerToolCall drives POST /api/v1/turns/{id}/tools/{call} over the socket, raw and through
// the client.
func TestAnswerToolCall(t *testing.T) {
	var got []string
	b := &fakeBackend{answerToolCall: func(_ context.Context, turn, call string, a client.ToolAnswer) error {
		if call == "gone" {
			return fmt.Errorf("no such call: %w", client.ErrNotFound)
		}
		got = append(got, fmt.Sprintf("%s/%s/%s/%v", turn, call, a.Content, a.IsError))
		return nil
	}}
	sv := serveUnix(t, New(b, Options{}), "")
	cases := []struct {
		name, path, body string
		status           int
		wantBody         string
	}{
		{"ok", "/api/v1/turns/t1/tools/c1", `{"content":"the file"}`, http.StatusNoContent, ""},
		{"error answer", "/api/v1/turns/t1/tools/c2", `{"content":"no such file","is_error":true}`, http.StatusNoContent, ""},
		{"unknown field", "/api/v1/turns/t1/tools/c3", `{"content":"x","result":"y"}`, http.StatusBadRequest, `unknown field`},
		{"bad json", "/api/v1/turns/t1/tools/c3", `{"content":`, http.StatusBadRequest, ""},
		{"no such call", "/api/v1/turns/t1/tools/gone", `{"content":"x"}`, http.StatusNotFound, "no such call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := sv.do(t, http.MethodPost, c.path, c.body, map[string]string{"Content-Type": "application/json"})
			if resp.StatusCode != c.status || !strings.Contains(body, c.wantBody) {
				t.Fatalf("%d %s, want %d containing %q", resp.StatusCode, body, c.status, c.wantBody)
			}
		})
	}
	if strings.Join(got, " ") != "t1/c1/the file/false t1/c2/no such file/true" {
		t.Fatalf("the backend got %v", got)
	}
	hc, err := client.Dial(client.Options{Socket: sv.path})
	if err != nil {
		t.Fatal(err)
	}
	if err := hc.AnswerToolCall(context.Background(), "t 2", "c/4", client.ToolAnswer{Content: "via client"}); err != nil {
		t.Fatal(err)
	}
	if got[len(got)-1] != "t 2/c/4/via client/false" {
		t.Fatalf("path escaping: %v", got)
	}
	if err := hc.AnswerToolCall(context.Background(), "t1", "gone", client.ToolAnswer{}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a call that waits no more: %v", err)
	}
	if err := hc.AnswerToolCall(context.Background(), "", "c", client.ToolAnswer{}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("an empty turn id: %v", err)
	}
}

// TestAnswerToolCallImages: an answer's images reach the backend, and may take the answer past
// the API's body limit (by the images' bound).
func TestAnswerToolCallImages(t *testing.T) {
	var got client.ToolAnswer
	b := &fakeBackend{answerToolCall: func(_ context.Context, _, _ string, a client.ToolAnswer) error { got = a; return nil }}
	sv := serveUnix(t, New(b, Options{MaxBodyBytes: 1024}), "")
	hc, err := client.Dial(client.Options{Socket: sv.path})
	if err != nil {
		t.Fatal(err)
	}
	img := client.ToolImage{MIME: "image/png", Data: bytes.Repeat([]byte{0x89}, 4096), Name: "screenshot-20260102-030405.png"}
	if err := hc.AnswerToolCall(context.Background(), "t1", "c1", client.ToolAnswer{Content: "the screen", Images: []client.ToolImage{img}}); err != nil {
		t.Fatal(err)
	}
	if got.Content != "the screen" || len(got.Images) != 1 || got.Images[0].Name != img.Name || !bytes.Equal(got.Images[0].Data, img.Data) {
		t.Fatalf("the backend got %+v", got)
	}
}
