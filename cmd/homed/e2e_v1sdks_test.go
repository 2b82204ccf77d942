//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// headerLog is a reverse proxy in front of homed that keeps the retry-related headers of every
// /v1/chat/completions request, to see what each SDK sends when it retries.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (h *headerLog) serve(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		if strings.HasSuffix(pr.In.URL.Path, "/chat/completions") {
			kept := http.Header{}
			for k, v := range pr.In.Header {
				if k == "Idempotency-Key" || k == "User-Agent" || strings.HasPrefix(k, "X-Stainless-") {
					kept[k] = v
				}
			}
			h.mu.Lock()
			h.seen = append(h.seen, kept)
			h.mu.Unlock()
		}
	}, FlushInterval: -1}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// since returns the headers logged from index i on.
func (h *headerLog) since(i int) []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.seen[i:]...)
}

func (h *headerLog) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// sdkJS runs one step of testdata/openai-js/sdks.mjs.
func sdkJS(t *testing.T, base, token, step string, args map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	return openAIJS(t, "sdks.mjs", base, token, step, string(raw))
}

// TestV1WithTheAISDKAndLangChain: the Vercel AI SDK (ai + @ai-sdk/openai-compatible) and
// LangChain JS (@langchain/openai) against real homed: a streamed reply with non-zero usage, and
// a client tool round trip (the SDK runs the tool; the kernel never does). Then their retries of
// an upstream 503, with the headers each sends logged (the official openai client, which marks
// its retries with X-Stainless-Retry-Count 1, 2, is TestV1RetriesRunTheTurnOnce's): neither
// marks its own retries (LangChain retries through its own caller, each attempt a new openai
// request of X-Stainless-Retry-Count 0; the AI SDK sends no retry header), so each attempt is a
// regenerate and the turn runs again; with an Idempotency-Key passed per call (docs/api.md) the
// retries run the turn once.
func TestV1WithTheAISDKAndLangChain(t *testing.T) {
	fake := llmtest.NewServer(t)
	e := newEnv(t)
	base, token := v1Homed(t, e, "")
	e.addProvider(fake.URL(), "sk-v1")
	var hl headerLog
	proxy := hl.serve(t, base)
	usageOK := func(u any) bool {
		m, _ := u.(map[string]any)
		return m["prompt_tokens"] == float64(10) && m["completion_tokens"] == float64(5) && m["total_tokens"] == float64(15)
	}
	// The streamed reply and the tool round trip go to homed itself: the header log is for the
	// retries below, and a stream relayed through the test's proxy was cut now and then on a
	// loaded machine (the SDK saw undici's "terminated" after the proxy logged "use of closed
	// network connection" on its own upstream read; 1 in 8 under 3 busy loops, 0 in 12 direct).
	for _, sdk := range []string{"ai", "lc"} {
		t.Run(sdk, func(t *testing.T) {
			text := "tell me a story, " + sdk
			r := sdkJS(t, base, token, sdk+"-stream", map[string]any{"text": text})
			if r["reply"] != "PONG "+text || !usageOK(r["usage"]) {
				t.Fatalf("streamed: %v", r)
			}
			fake.Script(llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "get_weather", Arguments: `{"city":"Porto"}`}}})
			result := "sunny, 21 C in Porto (" + sdk + ")"
			r = sdkJS(t, base, token, sdk+"-tools", map[string]any{"text": "the weather in Porto? " + sdk, "result": result})
			if fmt.Sprint(r["calls"]) != "[get_weather]" || !strings.Contains(fmt.Sprint(r["args"]), "Porto") ||
				!strings.Contains(fmt.Sprint(r["reply"]), result) {
				t.Fatalf("client tool round trip: %v", r)
			}
			// The answer after the tool result counts the whole turn (both model calls); the
			// tool_calls answer counts none, so the client's sum is the turn's.
			if u, _ := r["usage"].(map[string]any); u["prompt_tokens"] != float64(20) || u["completion_tokens"] != float64(10) || u["total_tokens"] != float64(30) {
				t.Fatalf("client tool round trip usage: %v", r["usage"])
			}
			t.Logf("%s: streamed usage ok; tool round trip %v", sdk, r)
		})
	}

	// Retries of a 503: what each SDK sends, and how often the turn ran (the provider is asked
	// at most 3 times per turn: the kernel client's own retries).
	for _, tc := range []struct {
		name, step string
		args       map[string]any
		once       bool // the retries are recognised: one turn
	}{
		{"langchain", "lc-chat", map[string]any{}, false}, // its own retries, each a new request of retry count 0
		{"langchain with an Idempotency-Key", "lc-chat", map[string]any{"idempotency_key": "order-41"}, true},
		{"ai sdk", "ai-chat", map[string]any{}, false}, // no retry header at all
		{"ai sdk with an Idempotency-Key", "ai-chat", map[string]any{"idempotency_key": "order-42"}, true},
	} {
		t.Run("retry/"+tc.name, func(t *testing.T) {
			for range 12 {
				fake.Script(llmtest.Reply{Status: 503, Message: "overloaded"})
			}
			before, logged := len(fake.Requests()), hl.len()
			tc.args["text"] = "book a table, " + tc.name
			r := sdkJS(t, proxy, token, tc.step, tc.args)
			chats := 0
			for _, q := range fake.Requests()[before:] {
				if strings.HasSuffix(q.Path, "/chat/completions") {
					chats++
				}
			}
			var seen []string
			for _, h := range hl.since(logged) {
				seen = append(seen, fmt.Sprintf("{retry-count %q idempotency-key %q}", h.Get("X-Stainless-Retry-Count"), h.Get("Idempotency-Key")))
			}
			t.Logf("%s: the SDK answered %v; it sent %d attempts: %s; the provider was asked %d times", tc.name, r, len(seen), strings.Join(seen, " "), chats)
			if r["status"] != float64(503) && !strings.Contains(fmt.Sprint(r["error"]), "503") && !strings.Contains(fmt.Sprint(r["error"]), "overloaded") {
				t.Fatalf("the SDK's answer: %v", r)
			}
			if len(seen) != 3 {
				t.Fatalf("the SDK made %d attempts, want 3 (its default: 2 retries)", len(seen))
			}
			if tc.once && chats > 3 {
				t.Fatalf("the retries ran the turn again: the provider was asked %d times", chats)
			}
			if !tc.once && chats <= 3 {
				t.Fatalf("retries without a recognisable header were answered from the first attempt (%d provider calls): an identical request without one is a regenerate", chats)
			}
		})
	}
}
