//go:build integration

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestFinishReasonReachesClients: a provider's answer cut at its token limit, or refused,
// reaches a /v1 client as finish_reason "length" / "content_filter" (plain and streamed), not
// "stop", through real homed; a normal answer stays "stop".
func TestFinishReasonReachesClients(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	e.start()
	e.addProvider(fake.URL(), "k")
	for _, tc := range []struct{ finish, want string }{
		{"length", "length"}, {"content_filter", "content_filter"}, {"stop", "stop"},
	} {
		t.Run(tc.finish, func(t *testing.T) {
			fake.Script(llmtest.Reply{Text: "an answer cut sh", Finish: tc.finish})
			code, out := e.postJSON("/v1/chat/completions", map[string]any{"user": "fin-" + tc.finish,
				"messages": []map[string]string{{"role": "user", "content": "tell me everything about " + tc.finish}}})
			var r struct {
				Choices []struct {
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
			}
			if code != 200 || json.Unmarshal(out, &r) != nil || len(r.Choices) != 1 || r.Choices[0].FinishReason != tc.want {
				t.Fatalf("plain: %d %s, want finish_reason %q", code, out, tc.want)
			}
			fake.Script(llmtest.Reply{Text: "an answer cut sh", Finish: tc.finish})
			code, out = e.postJSON("/v1/chat/completions", map[string]any{"user": "fin-stream-" + tc.finish, "stream": true,
				"messages": []map[string]string{{"role": "user", "content": "stream everything about " + tc.finish}}})
			if code != 200 || !strings.Contains(string(out), `"finish_reason":"`+tc.want+`"`) {
				t.Fatalf("streamed: %d %s, want finish_reason %q", code, out, tc.want)
			}
		})
	}
}
