package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/openai"
)

// recorder collects what a handler saw and what the client slept.
type recorder struct {
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
	sleeps []time.Duration
}

func (r *recorder) record(req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, m)
	r.auth = append(r.auth, req.Header.Get("Authorization"))
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *recorder) sleep(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sleeps = append(r.sleeps, d)
	return nil
}

// server starts an httptest server whose handler gets the request number (0-based).
func server(t *testing.T, h func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := rec.count()
		rec.record(r)
		h(n, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func client(t *testing.T, srv *httptest.Server, rec *recorder, mod func(*openai.Config)) *openai.Client {
	t.Helper()
	cfg := openai.Config{Name: "fake", BaseURL: srv.URL + "/v1", Model: "m1", APIKey: "sk-test", Sleep: rec.sleep}
	if mod != nil {
		mod(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeSSE writes each event followed by a flush, so the client sees separate reads.
func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

func TestChatStream(t *testing.T) {
	tests := []struct {
		name       string
		events     []string
		wantDeltas []llm.Delta
		want       llm.Message
		wantFinish string
		wantUsage  llm.Usage
	}{
		{
			name: "text in pieces with keep-alives and usage-only chunk",
			events: []string{
				": keep-alive\n\n",
				`data: {"model":"m1-0613","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n",
				": ping\n\n",
				`data:{"choices":[{"index":0,"delta":{"content":"lo, "}}]}` + "\n\n",
				"data: {\"choices\":[{\"index\":0,\n" + `data: "delta":{"content":"世界"}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
				`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}` + "\n\n",
				"data: [DONE]\n\n",
			},
			wantDeltas: []llm.Delta{{Content: "Hel"}, {Content: "lo, "}, {Content: "世界"}},
			want:       llm.Message{Role: "assistant", Content: "Hello, 世界"},
			wantFinish: "stop",
			wantUsage:  llm.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10},
		},
		{
			name: "tool call arguments in three fragments without ids",
			events: []string{
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"北京\"}"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
				"data: [DONE]\n\n",
			},
			want: llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"北京"}`},
			}},
			wantFinish: "tool_calls",
		},
		{
			name: "two parallel tool calls interleaved by index",
			events: []string{
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\""}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":\"UTC\"}"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"Paris\"}"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
				"data: [DONE]\n\n",
			},
			want: llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_b", Name: "get_time", Arguments: `{"tz":"UTC"}`},
			}},
			wantFinish: "tool_calls",
		},
		{
			name: "reasoning_content and reasoning before content, no DONE after finish",
			events: []string{
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":"Think"}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"reasoning":"ing."}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"content":"Answer"}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
			},
			wantDeltas: []llm.Delta{{Reasoning: "Think"}, {Reasoning: "ing."}, {Content: "Answer"}},
			want:       llm.Message{Role: "assistant", Content: "Answer", Reasoning: "Thinking."},
			wantFinish: "stop",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeSSE(w, tt.events...) })
			c := client(t, srv, rec, nil)
			var deltas []llm.Delta
			resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}},
				func(d llm.Delta) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if !reflect.DeepEqual(deltas, tt.wantDeltas) {
				t.Errorf("deltas = %+v, want %+v", deltas, tt.wantDeltas)
			}
			if !reflect.DeepEqual(resp.Message, tt.want) {
				t.Errorf("message = %+v, want %+v", resp.Message, tt.want)
			}
			if resp.FinishReason != tt.wantFinish || resp.Usage != tt.wantUsage || resp.Provider != "fake" {
				t.Errorf("finish %q usage %+v provider %q, want %q %+v fake", resp.FinishReason, resp.Usage, resp.Provider, tt.wantFinish, tt.wantUsage)
			}
			body := rec.bodies[0]
			if body["stream"] != true || !reflect.DeepEqual(body["stream_options"], map[string]any{"include_usage": true}) {
				t.Errorf("stream request body = %v", body)
			}
		})
	}
}

func TestChatRequestShape(t *testing.T) {
	srv, rec := server(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	})
	c := client(t, srv, rec, func(cfg *openai.Config) { cfg.MaxTokens = 99 })
	req := llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: ""},
			{Role: "assistant", Content: "", Reasoning: "secret", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get_time", Arguments: ""}}},
			{Role: "tool", Content: "12:00", ToolCallID: "c1"},
			{Role: "assistant", Content: ""},
		},
		Tools: []llm.Tool{
			{Name: "get_time", Description: "current time"},
			{Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		},
	}
	if _, err := c.Chat(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if rec.auth[0] != "Bearer sk-test" {
		t.Errorf("Authorization = %q", rec.auth[0])
	}
	var got struct {
		Model     string            `json:"model"`
		MaxTokens int               `json:"max_tokens"`
		Messages  []json.RawMessage `json:"messages"`
		Tools     []json.RawMessage `json:"tools"`
	}
	raw, _ := json.Marshal(rec.bodies[0])
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stream", "stream_options", "tool_choice"} {
		if _, ok := rec.bodies[0][k]; ok {
			t.Errorf("request has %q", k)
		}
	}
	if got.Model != "m1" || got.MaxTokens != 99 {
		t.Errorf("model %q max_tokens %d", got.Model, got.MaxTokens)
	}
	wantMsgs := []string{
		`{"role":"system","content":"be brief"}`,
		`{"role":"user","content":""}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`,
		`{"role":"tool","content":"12:00","tool_call_id":"c1"}`,
		`{"role":"assistant","content":""}`,
	}
	wantTools := []string{
		`{"function":{"description":"current time","name":"get_time","parameters":{"properties":{},"type":"object"}},"type":"function"}`,
		`{"function":{"name":"search","parameters":{"properties":{"q":{"type":"string"}},"type":"object"}},"type":"function"}`,
	}
	check := func(kind string, got []json.RawMessage, want []string) {
		if len(got) != len(want) {
			t.Fatalf("%d %s, want %d", len(got), kind, len(want))
		}
		for i := range want {
			if canon(t, string(got[i])) != canon(t, want[i]) {
				t.Errorf("%s[%d] = %s, want %s", kind, i, got[i], want[i])
			}
		}
	}
	check("messages", got.Messages, wantMsgs)
	check("tools", got.Tools, wantTools)

	// Without a key there is no Authorization header; a request's model wins.
	c2 := client(t, srv, rec, func(cfg *openai.Config) { cfg.APIKey = "" })
	if _, err := c2.Chat(context.Background(), llm.Request{Model: "m2", Messages: req.Messages[:2]}, nil); err != nil {
		t.Fatal(err)
	}
	if rec.auth[1] != "" || rec.bodies[1]["model"] != "m2" {
		t.Errorf("auth %q model %v", rec.auth[1], rec.bodies[1]["model"])
	}
}

func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestChatNonStream(t *testing.T) {
	srv, rec := server(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","model":"m1-real","choices":[{"index":0,"message":{"role":"assistant","content":null,
			"reasoning_content":"hmm","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},
			{"id":"call_2","type":"function","function":{"name":"get_time","arguments":{"tz":"UTC"}}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
	})
	resp, err := client(t, srv, rec, nil).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "weather?"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{
		Message: llm.Message{Role: "assistant", Reasoning: "hmm", ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
			{ID: "call_2", Name: "get_time", Arguments: `{"tz":"UTC"}`},
		}},
		FinishReason: "tool_calls",
		Usage:        llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3},
		Provider:     "fake",
		Model:        "m1-real",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("resp = %+v\nwant %+v", resp, want)
	}
}

func TestChatRetries(t *testing.T) {
	ok := `{"choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}]}`
	tests := []struct {
		name       string
		handler    func(n int, w http.ResponseWriter)
		wantReqs   int
		wantSleeps []time.Duration
		wantStatus int    // 0: success
		wantMsg    string // in the error
	}{
		{
			name: "429 with Retry-After then success",
			handler: func(n int, w http.ResponseWriter) {
				if n == 0 {
					w.Header().Set("Retry-After", "3")
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, `{"error":{"message":"rate limited","type":"requests"}}`)
					return
				}
				io.WriteString(w, ok)
			},
			wantReqs: 2, wantSleeps: []time.Duration{3 * time.Second},
		},
		{
			name: "503 twice then success",
			handler: func(n int, w http.ResponseWriter) {
				if n < 2 {
					w.WriteHeader(http.StatusServiceUnavailable)
					io.WriteString(w, "<html>upstream overloaded</html>")
					return
				}
				io.WriteString(w, ok)
			},
			wantReqs: 3, wantSleeps: []time.Duration{500 * time.Millisecond, time.Second},
		},
		{
			name: "500 until retries run out",
			handler: func(_ int, w http.ResponseWriter) {
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"error":{"message":"boom"}}`)
			},
			wantReqs: 3, wantSleeps: []time.Duration{500 * time.Millisecond, time.Second},
			wantStatus: 500, wantMsg: "boom",
		},
		{
			name: "400 not retried and message surfaced",
			handler: func(_ int, w http.ResponseWriter) {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":{"message":"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)","type":"invalid_request_error"}}`)
			},
			wantReqs: 1, wantStatus: 400, wantMsg: "insufficient tool messages following tool_calls message",
		},
		{
			name: "401 plain text body",
			handler: func(_ int, w http.ResponseWriter) {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, "  invalid api key\n")
			},
			wantReqs: 1, wantStatus: 401, wantMsg: "invalid api key",
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += " streamed"
			}
			t.Run(name, func(t *testing.T) {
				srv, rec := server(t, func(n int, w http.ResponseWriter, _ *http.Request) {
					if stream && tt.wantStatus == 0 && n == tt.wantReqs-1 {
						writeSSE(w, `data: {"choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
						return
					}
					tt.handler(n, w)
				})
				var onDelta func(llm.Delta)
				if stream {
					onDelta = func(llm.Delta) {}
				}
				resp, err := client(t, srv, rec, nil).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, onDelta)
				if got := rec.count(); got != tt.wantReqs {
					t.Errorf("%d requests, want %d", got, tt.wantReqs)
				}
				if !reflect.DeepEqual(rec.sleeps, tt.wantSleeps) {
					t.Errorf("sleeps = %v, want %v", rec.sleeps, tt.wantSleeps)
				}
				if tt.wantStatus == 0 {
					if err != nil || resp.Message.Content != "fine" {
						t.Fatalf("Chat = %q, %v", resp.Message.Content, err)
					}
					return
				}
				var ae *llm.APIError
				if !errors.As(err, &ae) || ae.Status != tt.wantStatus || ae.Provider != "fake" || !strings.Contains(ae.Message, tt.wantMsg) {
					t.Fatalf("err = %v, want APIError %d containing %q", err, tt.wantStatus, tt.wantMsg)
				}
			})
		}
	}
}

func TestChatBadResponses(t *testing.T) {
	tests := []struct {
		name     string
		stream   bool
		handler  func(w http.ResponseWriter)
		wantErr  string
		wantReqs int
	}{
		{
			name:    "garbage JSON body",
			handler: func(w http.ResponseWriter) { io.WriteString(w, "<html>hello</html>") },
			wantErr: "provider fake returned invalid JSON", wantReqs: 1,
		},
		{
			name:    "no choices",
			handler: func(w http.ResponseWriter) { io.WriteString(w, `{"id":"x","choices":[]}`) },
			wantErr: "provider fake returned no choices", wantReqs: 1,
		},
		{
			name:    "error object in a 200",
			handler: func(w http.ResponseWriter) { io.WriteString(w, `{"error":{"message":"model overloaded"}}`) },
			wantErr: "model overloaded", wantReqs: 1,
		},
		{
			name:    "garbage SSE data line",
			stream:  true,
			handler: func(w http.ResponseWriter) { writeSSE(w, "data: {not json\n\n") },
			wantErr: "provider fake returned invalid JSON", wantReqs: 1,
		},
		{
			name:   "stream cut after a delta is not retried",
			stream: true,
			handler: func(w http.ResponseWriter) {
				writeSSE(w, `data: {"choices":[{"index":0,"delta":{"content":"par"}}]}`+"\n\n")
			},
			wantErr: "stream ended early", wantReqs: 1,
		},
		{
			name:    "empty stream is retried then fails",
			stream:  true,
			handler: func(w http.ResponseWriter) { writeSSE(w, ": keep-alive\n\n") },
			wantErr: "provider fake: stream ended early", wantReqs: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := server(t, func(_ int, w http.ResponseWriter, _ *http.Request) { tt.handler(w) })
			var onDelta func(llm.Delta)
			if tt.stream {
				onDelta = func(llm.Delta) {}
			}
			_, err := client(t, srv, rec, nil).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, onDelta)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if got := rec.count(); got != tt.wantReqs {
				t.Errorf("%d requests, want %d", got, tt.wantReqs)
			}
		})
	}
}

// hangAfterFirstChunk streams one chunk and then holds the connection until the client leaves.
func hangAfterFirstChunk(_ int, w http.ResponseWriter, r *http.Request) {
	writeSSE(w, `data: {"choices":[{"index":0,"delta":{"content":"first"}}]}`+"\n\n")
	<-r.Context().Done()
}

func TestChatCancelMidStream(t *testing.T) {
	srv, rec := server(t, hangAfterFirstChunk)
	c := client(t, srv, rec, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, func(llm.Delta) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rec.count() != 1 {
		t.Errorf("%d requests after cancel, want 1", rec.count())
	}
}

func TestChatTimeouts(t *testing.T) {
	tests := []struct {
		name    string
		handler func(int, http.ResponseWriter, *http.Request)
		mod     func(*openai.Config)
		want    error
	}{
		{
			name:    "idle stream",
			handler: hangAfterFirstChunk,
			mod:     func(c *openai.Config) { c.IdleTimeout = 20 * time.Millisecond },
			want:    openai.ErrIdle,
		},
		{
			name:    "no headers",
			handler: func(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			mod:     func(c *openai.Config) { c.Timeout = 20 * time.Millisecond; c.MaxRetries = -1 },
			want:    openai.ErrTimeout,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := server(t, tt.handler)
			_, err := client(t, srv, rec, tt.mod).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, func(llm.Delta) {})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), "provider fake") {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if rec.count() != 1 {
				t.Errorf("%d requests, want 1", rec.count())
			}
		})
	}
}

func TestPerProviderProxy(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"via proxy"},"finish_reason":"stop"}]}`)
	}))
	defer proxy.Close()
	c, err := openai.New(openai.Config{Name: "remote", BaseURL: "http://llm.example.invalid/v1", APIKey: "k", Proxy: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, nil)
	if err != nil || resp.Message.Content != "via proxy" {
		t.Fatalf("Chat = %q, %v", resp.Message.Content, err)
	}
	want := []string{"POST http://llm.example.invalid/v1/chat/completions auth=Bearer k"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("proxy saw %q, want %q", seen, want)
	}
}

func TestModels(t *testing.T) {
	srv, rec := server(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"message":"not found"}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"gpt-x","object":"model"},{"id":"qwen-y","object":"model"}]}`)
	})
	got, err := client(t, srv, rec, nil).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"gpt-x", "qwen-y"}) || rec.auth[0] != "Bearer sk-test" {
		t.Errorf("Models = %v (auth %q)", got, rec.auth[0])
	}
	bad := client(t, srv, rec, func(c *openai.Config) { c.BaseURL = srv.URL + "/nope" })
	var ae *llm.APIError
	if _, err := bad.Models(context.Background()); !errors.As(err, &ae) || ae.Status != 404 || ae.Message != "not found" {
		t.Errorf("Models on a bad base = %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  openai.Config
		want string // "" means valid
	}{
		{"valid", openai.Config{Name: "p", BaseURL: "https://api.example.com/v1/"}, ""},
		{"no name", openai.Config{BaseURL: "https://api.example.com/v1"}, "name is empty"},
		{"ftp", openai.Config{Name: "p", BaseURL: "ftp://x/v1"}, "must be an http or https URL"},
		{"no host", openai.Config{Name: "p", BaseURL: "http:///v1"}, "must be an http or https URL"},
		{"bad proxy", openai.Config{Name: "p", BaseURL: "http://x/v1", Proxy: "gopher://p"}, "proxy"},
		{"proxy and client", openai.Config{Name: "p", BaseURL: "http://x/v1", Proxy: "http://p:1", HTTPClient: &http.Client{}}, "exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openai.New(tt.cfg)
			if tt.want == "" {
				if err != nil || c.Name() != tt.cfg.Name {
					t.Fatalf("New = %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestChatNonStreamGetsSSE(t *testing.T) {
	srv, rec := server(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, `data: {"choices":[{"index":0,"delta":{"content":"streamed anyway"},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
	})
	resp, err := client(t, srv, rec, nil).Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, nil)
	if err != nil || resp.Message.Content != "streamed anyway" || resp.FinishReason != "stop" {
		t.Fatalf("Chat = %+v, %v", resp, err)
	}
}
