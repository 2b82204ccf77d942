package openai

import (
	"bytes"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
)

// FuzzParseStream feeds the provider stream parser (SSE of chat.completion.chunk) and the
// non-streaming JSON parser arbitrary bytes, as a faulty or hostile provider may send them:
// neither panics, and the reply stays within the accumulator's bounds.
func FuzzParseStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n",
		"data: {\"error\":{\"message\":\"rate limited\",\"type\":\"x\"}}\n\n",
		": keep-alive\n\nevent: ping\ndata: {}\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999,\"function\":{\"name\":\"x\"}}]}}]}\n\n",
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}",
		"data: not json\n\n",
	} {
		f.Add([]byte(s))
	}
	c, err := New(Config{Name: "fuzz", BaseURL: "http://127.0.0.1/v1", Model: "m"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		deltas := 0
		onDelta := func(llm.Delta) { deltas++ }
		if resp, err := c.parseStream(bytes.NewReader(data), onDelta); err == nil {
			if len(resp.Message.Content) > len(data)+4096 {
				t.Fatalf("a %d-byte stream made a %d-byte reply", len(data), len(resp.Message.Content))
			}
		}
		_, _ = c.parseJSON(bytes.NewReader(data), onDelta)
	})
}
