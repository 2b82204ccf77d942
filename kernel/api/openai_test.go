package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

func TestModels(t *testing.T) {
	s := New(&fakeBackend{models: func(context.Context) ([]string, error) { return []string{"gpt-x", "qwen"}, nil }}, Options{})
	sv := serveUnix(t, s, "")
	resp, body := sv.do(t, "GET", "/v1/models", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	assertJSONEqual(t, body, `{"object":"list","data":[
		{"id":"gpt-x","object":"model","created":0,"owned_by":"hologram"},
		{"id":"qwen","object":"model","created":0,"owned_by":"hologram"}]}`)
}

// openAIErr decodes an OpenAI-shaped error body.
func openAIErr(t *testing.T, body string) openAIErrorDetail {
	t.Helper()
	var e openAIError
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error: %q (%v)", body, err)
	}
	return e.Error
}

func TestCompletionsRequests(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		hdr       map[string]string
		want      int
		wantReq   *client.CompletionRequest // what the backend must get
		wantMsg   string                    // substring of the error message
		wantParam string
	}{
		{name: "plain", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, want: 200,
			wantReq: &client.CompletionRequest{Session: conversationSession("m", []completionMessage{{Role: "user", Content: json.RawMessage(`"hi"`)}}, ""), Model: "m", Messages: []client.IngestMessage{{Role: "user", Content: "hi"}}}},
		{name: "user picks the session, unknown fields ignored",
			body: `{"messages":[{"role":"system","content":"be brief"},{"role":"assistant","content":null},{"role":"user","content":"q","name":"bob"}],
				"user":"alice@home","temperature":0.2,"top_p":1,"foo":{"bar":[1]},"tools":null,"tool_choice":null}`, want: 200,
			wantReq: &client.CompletionRequest{Session: "alice@home", User: true, Messages: []client.IngestMessage{
				{Role: "system", Content: "be brief"}, {Role: "assistant", Content: ""}, {Role: "user", Content: "q"}},
				Temperature: new(0.2), TopP: new(1.0)}},
		{name: "model parameters passed", body: `{"messages":[{"role":"user","content":"q"}],"max_completion_tokens":77,"stop":"END","response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"}}}}`, want: 200,
			wantReq: &client.CompletionRequest{Session: conversationSession("", []completionMessage{{Role: "user", Content: json.RawMessage(`"q"`)}}, ""),
				Messages: []client.IngestMessage{{Role: "user", Content: "q"}}, MaxTokens: 77, Stop: []string{"END"}, ResponseSchema: json.RawMessage(`{"type":"object"}`)}},
		{name: "temperature out of range", body: `{"messages":[{"role":"user","content":"q"}],"temperature":3}`, want: 400, wantMsg: "temperature must be between 0 and 2", wantParam: "temperature"},
		{name: "five stops", body: `{"messages":[{"role":"user","content":"q"}],"stop":["a","b","c","d","e"]}`, want: 400, wantMsg: "at most 4", wantParam: "stop"},
		{name: "unknown response format", body: `{"messages":[{"role":"user","content":"q"}],"response_format":{"type":"yaml"}}`, want: 400, wantMsg: "not supported", wantParam: "response_format"},
		{name: "header wins over user", body: `{"messages":[{"role":"user","content":"hi"}],"user":"alice"}`,
			hdr: map[string]string{"X-Hologram-Session": "tg:42"}, want: 200,
			wantReq: &client.CompletionRequest{Session: "tg:42", Messages: []client.IngestMessage{{Role: "user", Content: "hi"}}}},
		{name: "content parts joined", body: `{"messages":[{"role":"developer","content":"sys"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`, want: 200,
			wantReq: &client.CompletionRequest{Session: conversationSession("", []completionMessage{{Role: "user", Content: json.RawMessage(`"a\nb"`)}}, ""), Messages: []client.IngestMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: "a\nb"}}}},
		{name: "a tool without a name", body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function"}]}`, want: 400,
			wantMsg: "must match", wantParam: "tools[0].function.name"},
		{name: "a tool of another type", body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search","function":{"name":"x"}}]}`, want: 400,
			wantMsg: "not supported", wantParam: "tools[0].type"},
		{name: "functions refused", body: `{"messages":[{"role":"user","content":"hi"}],"functions":[]}`, want: 400,
			wantMsg: "legacy form", wantParam: "functions"},
		{name: "function_call refused", body: `{"messages":[{"role":"user","content":"hi"}],"function_call":"none"}`, want: 400,
			wantMsg: "legacy form", wantParam: "function_call"},
		{name: "no messages", body: `{"model":"m"}`, want: 400, wantMsg: "messages is required", wantParam: "messages"},
		{name: "empty messages", body: `{"messages":[]}`, want: 400, wantMsg: "messages is required", wantParam: "messages"},
		{name: "last message not user", body: `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`, want: 400,
			wantMsg: "the last message must have role user", wantParam: "messages"},
		{name: "unknown role", body: `{"messages":[{"role":"narrator","content":"x"},{"role":"user","content":"hi"}]}`, want: 400,
			wantMsg: `role "narrator" is not supported`, wantParam: "messages[0].role"},
		{name: "remote image refused", body: `{"messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"http://example.com/a.png"}}]}]}`, want: 400,
			wantMsg: "remote image URLs are not fetched", wantParam: "messages[0].content"},
		{name: "content of a wrong type", body: `{"messages":[{"role":"user","content":5}]}`, want: 400,
			wantMsg: "content must be a string, null or an array of parts"},
		{name: "bad session from user", body: `{"messages":[{"role":"user","content":"hi"}],"user":"a b"}`, want: 400,
			wantMsg: "must match", wantParam: "user"},
		{name: "bad session from header", body: `{"messages":[{"role":"user","content":"hi"}]}`,
			hdr: map[string]string{"X-Hologram-Session": strings.Repeat("x", 129)}, want: 400, wantMsg: "must match", wantParam: "X-Hologram-Session"},
		{name: "malformed JSON", body: `{"messages":`, want: 400, wantMsg: "malformed JSON"},
		{name: "trailing garbage", body: `{"messages":[{"role":"user","content":"hi"}]} x`, want: 400, wantMsg: "unexpected data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *client.CompletionRequest
			s := New(&fakeBackend{complete: func(_ context.Context, req client.CompletionRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
				got = &req
				emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t7", Session: req.Session})
				emit(client.ChatEvent{Type: client.EventDelta, TurnID: "t7", Text: "ans"})
				return client.ChatResult{TurnID: "t7", Session: req.Session, Text: "answer"}, nil
			}}, Options{})
			sv := serveUnix(t, s, "")
			resp, body := sv.do(t, "POST", "/v1/chat/completions", tt.body, tt.hdr)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if tt.want != 200 {
				e := openAIErr(t, body)
				if !strings.Contains(e.Message, tt.wantMsg) || e.Type != "invalid_request_error" {
					t.Errorf("error %+v, want message containing %q", e, tt.wantMsg)
				}
				if tt.wantParam != "" && (e.Param == nil || *e.Param != tt.wantParam) {
					t.Errorf("param %v, want %q", e.Param, tt.wantParam)
				}
				if got != nil {
					t.Errorf("backend called with %+v", *got)
				}
				return
			}
			if got == nil || !reflect.DeepEqual(*got, *tt.wantReq) {
				t.Errorf("backend got %+v, want %+v", got, *tt.wantReq)
			}
			var c completion
			if err := json.Unmarshal([]byte(body), &c); err != nil {
				t.Fatal(err)
			}
			wantModel := tt.wantReq.Model
			if wantModel == "" {
				wantModel = "hologram"
			}
			if c.ID != "chatcmpl-t7" || c.Object != "chat.completion" || c.Created == 0 || c.Model != wantModel ||
				len(c.Choices) != 1 || !reflect.DeepEqual(c.Choices[0].Message, completionMessageOut{Role: "assistant", Content: "answer"}) ||
				c.Choices[0].FinishReason != "stop" {
				t.Errorf("completion %s", body)
			}
			if !strings.Contains(body, `"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`) {
				t.Errorf("usage missing: %s", body)
			}
		})
	}
}

func TestCompletionsBackendErrors(t *testing.T) {
	tests := []struct {
		name     string
		stream   bool
		err      error
		want     int
		wantType string
	}{
		{"unavailable", false, fmt.Errorf("no provider: %w", client.ErrUnavailable), 503, "server_error"},
		{"unavailable stream", true, fmt.Errorf("no provider: %w", client.ErrUnavailable), 503, "server_error"},
		{"invalid stream", true, fmt.Errorf("bad: %w", client.ErrInvalid), 400, "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(&fakeBackend{complete: func(context.Context, client.CompletionRequest, func(client.ChatEvent)) (client.ChatResult, error) {
				return client.ChatResult{}, tt.err
			}}, Options{})
			sv := serveUnix(t, s, "")
			body := fmt.Sprintf(`{"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, tt.stream)
			resp, out := sv.do(t, "POST", "/v1/chat/completions", body, nil)
			if resp.StatusCode != tt.want || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %q, want %d JSON: %s", resp.StatusCode, resp.Header.Get("Content-Type"), tt.want, out)
			}
			if e := openAIErr(t, out); e.Type != tt.wantType || e.Message != tt.err.Error() {
				t.Errorf("error %+v", e)
			}
		})
	}
}

func TestCompletionsStream(t *testing.T) {
	tests := []struct {
		name       string
		events     []client.ChatEvent
		res        client.ChatResult
		err        error
		wantDeltas []string
		wantError  string
	}{
		{name: "deltas", events: []client.ChatEvent{
			{Type: client.EventTurn, TurnID: "t3", Session: "openai"},
			{Type: client.EventToolCall, Tool: &client.ToolEvent{Name: "x"}},
			{Type: client.EventDelta, Text: "Hel"}, {Type: client.EventDelta, Text: "lo"}},
			res: client.ChatResult{TurnID: "t3", Text: "Hello", Usage: &client.Usage{PromptTokens: 11, CompletionTokens: 2}}, wantDeltas: []string{"Hel", "lo"}},
		{name: "no deltas sends the result", events: []client.ChatEvent{{Type: client.EventTurn, TurnID: "t3"}},
			res: client.ChatResult{TurnID: "t3", Text: "whole"}, wantDeltas: []string{"whole"}},
		{name: "failure mid-stream", events: []client.ChatEvent{{Type: client.EventTurn, TurnID: "t3"}, {Type: client.EventDelta, Text: "pa"}},
			err: fmt.Errorf("provider died: %w", client.ErrUnavailable), wantDeltas: []string{"pa"}, wantError: "provider died: unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(&fakeBackend{complete: func(_ context.Context, _ client.CompletionRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
				for _, ev := range tt.events {
					emit(ev)
				}
				return tt.res, tt.err
			}}, Options{})
			sv := serveUnix(t, s, "")
			req, _ := http.NewRequest("POST", sv.base+"/v1/chat/completions",
				strings.NewReader(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
			resp, err := sv.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			br := bufio.NewReader(resp.Body)
			first := readChunk(t, br)
			if first.Object != "chat.completion.chunk" || first.ID != "chatcmpl-t3" || first.Model != "m" ||
				first.Choices[0].Delta.Role != "assistant" || first.Choices[0].FinishReason != nil {
				t.Fatalf("first chunk %+v", first)
			}
			for _, want := range tt.wantDeltas {
				c := readChunk(t, br)
				if c.ID != first.ID || c.Choices[0].Delta.Content != want || c.Choices[0].FinishReason != nil {
					t.Fatalf("chunk %+v, want delta %q", c, want)
				}
			}
			if tt.wantError != "" {
				ev := readEvent(t, br)
				var e openAIError
				if err := json.Unmarshal([]byte(ev.data), &e); err != nil || e.Error.Message != tt.wantError {
					t.Fatalf("error event %q (%v)", ev.data, err)
				}
			} else {
				last := readChunk(t, br)
				if last.Choices[0].FinishReason == nil || *last.Choices[0].FinishReason != "stop" || last.Choices[0].Delta.Content != "" {
					t.Fatalf("last chunk %+v", last)
				}
				// stream_options.include_usage: a chunk without choices carries the turn's usage.
				var u struct {
					Choices []any           `json:"choices"`
					Usage   completionUsage `json:"usage"`
				}
				if ev := readEvent(t, br); json.Unmarshal([]byte(ev.data), &u) != nil || u.Choices == nil || len(u.Choices) != 0 || u.Usage != usageOut(tt.res.Usage) {
					t.Fatalf("usage chunk %+v, want %+v", ev, usageOut(tt.res.Usage))
				}
				if ev := readEvent(t, br); ev.data != "[DONE]" || ev.name != "" {
					t.Fatalf("got %+v, want [DONE]", ev)
				}
			}
			if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
				t.Errorf("after the end: %q, %v", rest, err)
			}
		})
	}
}

func readChunk(t *testing.T, br *bufio.Reader) chunk {
	t.Helper()
	ev := readEvent(t, br)
	if ev.name != "" {
		t.Fatalf("chunk with event name %q", ev.name)
	}
	var c chunk
	if err := json.Unmarshal([]byte(ev.data), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("chunk %q: %v", ev.data, err)
	}
	return c
}

func TestValidSessionID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"openai", true}, {"a.b_c:d@e-f", true}, {"A9", true}, {strings.Repeat("x", 128), true},
		{"", false}, {strings.Repeat("x", 129), false}, {"a b", false}, {"a/b", false}, {"é", false}, {"a\n", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.20q", tt.id), func(t *testing.T) {
			if got := validSessionID(tt.id); got != tt.want {
				t.Errorf("validSessionID(%q) = %v", tt.id, got)
			}
		})
	}
}

// TestConversationSession: without `user` or X-Hologram-Session, the requests of one
// conversation (whatever its system prompt and later turns) share a session; another first
// message or another model is another session (a new chat is new).
func TestConversationSession(t *testing.T) {
	msg := func(role, text string) completionMessage {
		raw, _ := json.Marshal(text)
		return completionMessage{Role: role, Content: raw}
	}
	base := conversationSession("gpt-x", []completionMessage{msg("user", "plan my trip to Porto")}, "")
	if !validSessionID(base) || !strings.HasPrefix(base, "v1-") {
		t.Fatalf("session id %q", base)
	}
	for _, tc := range []struct {
		name  string
		model string
		msgs  []completionMessage
		same  bool
	}{
		{"later turns", "gpt-x", []completionMessage{msg("user", "plan my trip to Porto"), msg("assistant", "sure"), msg("user", "and Lisbon?")}, true},
		{"system prompt rebuilt", "gpt-x", []completionMessage{msg("system", "today is "+time.Now().String()), msg("user", "plan my trip to Porto")}, true},
		{"whitespace", "gpt-x", []completionMessage{msg("user", "plan my trip to Porto\n")}, true},
		{"new chat", "gpt-x", []completionMessage{msg("user", "plan my trip to Lisbon")}, false},
		{"other model", "gpt-y", []completionMessage{msg("user", "plan my trip to Porto")}, false},
	} {
		if got := conversationSession(tc.model, tc.msgs, "") == base; got != tc.same {
			t.Errorf("%s: same session %v, want %v", tc.name, got, tc.same)
		}
	}
}
