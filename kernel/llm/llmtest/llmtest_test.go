package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/llm/openai"
)

func newClient(t *testing.T, s *llmtest.Server) *openai.Client {
	t.Helper()
	c, err := openai.New(openai.Config{Name: "fake", BaseURL: s.URL(), Model: "fake-1", APIKey: "sk-x", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var timeTool = llm.Tool{Name: "get_time", Description: "current time"}

// chat runs one request, streamed or not, and returns the response and the streamed text.
func chat(t *testing.T, c *openai.Client, stream bool, req llm.Request) (llm.Response, string, error) {
	t.Helper()
	var sb strings.Builder
	var onDelta func(llm.Delta)
	if stream {
		onDelta = func(d llm.Delta) { sb.WriteString(d.Content) }
	}
	resp, err := c.Chat(context.Background(), req, onDelta)
	return resp, sb.String(), err
}

func TestDefaultReplies(t *testing.T) {
	toolTurn := []llm.Message{
		{Role: "user", Content: "what time is it?"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "get_time", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "call_9", Content: "12:00"},
	}
	tests := []struct {
		name      string
		req       llm.Request
		wantText  string
		wantCall  string // tool name called
		wantFinal string // finish reason
	}{
		{"pong", llm.Request{Messages: []llm.Message{{Role: "user", Content: "hello there"}}}, "PONG hello there", "", "stop"},
		{"time without tool", llm.Request{Messages: []llm.Message{{Role: "user", Content: "what time is it?"}}}, "PONG what time is it?", "", "stop"},
		{"time with tool", llm.Request{Messages: []llm.Message{{Role: "user", Content: "what TIME is it?"}}, Tools: []llm.Tool{{Name: "search"}, timeTool}}, "", "get_time", "tool_calls"},
		{"after tool result", llm.Request{Messages: toolTurn, Tools: []llm.Tool{timeTool}}, "DONE 12:00", "", "stop"},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " streamed"}[stream], func(t *testing.T) {
				s := llmtest.NewServer(t)
				resp, streamed, err := chat(t, newClient(t, s), stream, tt.req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Message.Content != tt.wantText || resp.FinishReason != tt.wantFinal {
					t.Errorf("got %q (%s), want %q (%s)", resp.Message.Content, resp.FinishReason, tt.wantText, tt.wantFinal)
				}
				if stream && streamed != tt.wantText {
					t.Errorf("streamed %q, want %q", streamed, tt.wantText)
				}
				if tt.wantCall != "" {
					calls := resp.Message.ToolCalls
					if len(calls) != 1 || calls[0].Name != tt.wantCall || calls[0].Arguments != "{}" || calls[0].ID == "" {
						t.Errorf("tool calls = %+v, want one %s call", calls, tt.wantCall)
					}
				}
				reqs := s.Requests()
				if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Auth != "Bearer sk-x" ||
					reqs[0].Stream != stream || reqs[0].Model != "fake-1" || len(reqs[0].Messages) != len(tt.req.Messages) {
					t.Errorf("recorded %+v", reqs)
				}
			})
		}
	}
}

func TestScript(t *testing.T) {
	s := llmtest.NewServer(t)
	usage := llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}
	s.Script(
		llmtest.Reply{Text: "first answer", Reasoning: "thinking hard", Usage: &usage},
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"/etc/hosts"}`},
			{Name: "get_time"},
		}},
		llmtest.Reply{Status: 429, Message: "slow down", RetryAfter: "7"},
		llmtest.Reply{RawBody: "<html>garbage</html>"},
	)
	c := newClient(t, s)
	user := []llm.Message{{Role: "user", Content: "go"}}

	var reasoning strings.Builder
	resp, err := c.Chat(context.Background(), llm.Request{Messages: user}, func(d llm.Delta) { reasoning.WriteString(d.Reasoning) })
	if err != nil || resp.Message.Content != "first answer" || resp.Message.Reasoning != "thinking hard" ||
		reasoning.String() != "thinking hard" || resp.Usage != usage {
		t.Fatalf("reply 1 = %+v, %v", resp, err)
	}

	resp, _, err = chat(t, c, true, llm.Request{Messages: user})
	wantCalls := []llm.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"/etc/hosts"}`},
		{ID: "call_1", Name: "get_time", Arguments: "{}"},
	}
	if err != nil || !reflect.DeepEqual(resp.Message.ToolCalls, wantCalls) {
		t.Fatalf("reply 2 = %+v, %v", resp.Message.ToolCalls, err)
	}

	_, _, err = chat(t, c, false, llm.Request{Messages: user})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 429 || ae.Message != "slow down" || ae.RetryAfter.Seconds() != 7 {
		t.Fatalf("reply 3 = %v", err)
	}

	_, _, err = chat(t, c, false, llm.Request{Messages: user})
	if err == nil || !strings.Contains(err.Error(), "provider fake returned invalid JSON") {
		t.Fatalf("reply 4 = %v", err)
	}

	// The queue is empty again: default replies.
	resp, _, err = chat(t, c, false, llm.Request{Messages: user})
	if err != nil || resp.Message.Content != "PONG go" {
		t.Fatalf("reply 5 = %+v, %v", resp, err)
	}
	if err := s.Wait(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
}

func TestPairingRule(t *testing.T) {
	call := llm.ToolCall{ID: "call_1", Name: "get_time", Arguments: "{}"}
	tests := []struct {
		name string
		msgs []llm.Message
		want string // "" means accepted
	}{
		{"answered", []llm.Message{{Role: "user", Content: "t"}, {Role: "assistant", ToolCalls: []llm.ToolCall{call}}, {Role: "tool", ToolCallID: "call_1", Content: "x"}}, ""},
		{"missing tool message", []llm.Message{{Role: "user", Content: "t"}, {Role: "assistant", ToolCalls: []llm.ToolCall{call}}, {Role: "user", Content: "again"}}, "insufficient tool messages following tool_calls message"},
		{"one of two answered", []llm.Message{{Role: "assistant", ToolCalls: []llm.ToolCall{call, {ID: "call_2", Name: "x"}}}, {Role: "tool", ToolCallID: "call_2", Content: "x"}}, "insufficient tool messages"},
		{"orphan tool message", []llm.Message{{Role: "user", Content: "t"}, {Role: "tool", ToolCallID: "call_1", Content: "x"}}, "must be a response to a preceeding message with 'tool_calls'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t)
			s.Script(llmtest.Reply{Text: "scripted"})
			resp, _, err := chat(t, newClient(t, s), false, llm.Request{Messages: tt.msgs})
			if tt.want == "" {
				if err != nil || resp.Message.Content != "scripted" {
					t.Fatalf("Chat = %+v, %v", resp, err)
				}
				return
			}
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, tt.want) {
				t.Fatalf("err = %v, want 400 with %q", err, tt.want)
			}
			// A rejected request does not consume the script.
			resp, _, err = chat(t, newClient(t, s), false, llm.Request{Messages: []llm.Message{{Role: "user", Content: "ok"}}})
			if err != nil || resp.Message.Content != "scripted" {
				t.Fatalf("after rejection: %+v, %v", resp, err)
			}
		})
	}
}

func TestHangReleasedOnCancel(t *testing.T) {
	s := llmtest.NewServer(t)
	s.Script(llmtest.Reply{Text: "never finished", Hang: true})
	c := newClient(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstDelta := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, func(d llm.Delta) {
			select {
			case firstDelta <- d.Content:
			default:
			}
		})
		done <- err
	}()
	if err := s.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := <-firstDelta; got != "never f" {
		t.Errorf("first delta %q", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHangReleasedOnClose(t *testing.T) {
	s := llmtest.NewServer(t)
	s.Script(llmtest.Reply{Hang: true})
	c := newClient(t, s)
	done := make(chan error, 1)
	go func() {
		_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, nil)
		done <- err
	}()
	if err := s.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := <-done; err == nil {
		t.Fatal("Chat succeeded against a closed hanging server")
	}
}

func TestDelayAndWait(t *testing.T) {
	s := llmtest.NewServer(t)
	release := make(chan struct{})
	s.Script(llmtest.Reply{Text: "late", Delay: func() { <-release }})
	c := newClient(t, s)
	done := make(chan string, 1)
	go func() {
		resp, _ := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}, nil)
		done <- resp.Message.Content
	}()
	if err := s.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := <-done; got != "late" {
		t.Errorf("got %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Wait(ctx, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled ctx = %v", err)
	}
}

func TestRecorded(t *testing.T) {
	s := llmtest.NewServer(t)
	c := newClient(t, s)
	msgs := []llm.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "time?"},
		{Role: "assistant", Reasoning: "must not be sent", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "get_time", Arguments: `{"tz":"UTC"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "noon"},
	}
	if _, _, err := chat(t, c, true, llm.Request{Model: "other", Messages: msgs, Tools: []llm.Tool{timeTool}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[1].Path != "/v1/models" {
		t.Fatalf("requests = %+v", reqs)
	}
	r := reqs[0]
	wantMsgs := []llm.Message{msgs[0], msgs[1], {Role: "assistant", ToolCalls: msgs[2].ToolCalls}, msgs[3]}
	if r.Model != "other" || !r.Stream || !reflect.DeepEqual(r.Tools, []string{"get_time"}) || !reflect.DeepEqual(r.Messages, wantMsgs) {
		t.Errorf("recorded %+v\nwant messages %+v", r, wantMsgs)
	}
	var raw map[string]any
	if err := json.Unmarshal(r.Raw, &raw); err != nil || raw["stream_options"] == nil {
		t.Errorf("raw = %s (%v)", r.Raw, err)
	}
}

func TestStrictByDefault(t *testing.T) {
	tool := func(name, params string) llm.Tool {
		return llm.Tool{Name: name, Parameters: json.RawMessage(params)}
	}
	many := func(n int) []llm.Tool {
		out := make([]llm.Tool, n)
		for i := range out {
			out[i] = tool("t"+strings.Repeat("x", i/26)+string(rune('a'+i%26)), `{"type":"object"}`)
		}
		return out
	}
	hi := []llm.Message{{Role: "user", Content: "hi"}}
	tests := []struct {
		name string
		req  llm.Request
		want string // "" = accepted
	}{
		{"valid", llm.Request{Messages: hi, Tools: []llm.Tool{tool("a", `{"type":"object","properties":{"q":{"type":"array","items":{"type":"string"}}},"required":["q"]}`)}}, ""},
		{"128 tools", llm.Request{Messages: hi, Tools: many(128)}, ""},
		{"129 tools", llm.Request{Messages: hi, Tools: many(129)}, "array too long. Expected an array with maximum length 128, but got an array with length 129"},
		{"required null", llm.Request{Messages: hi, Tools: []llm.Tool{tool("notes_list", `{"type":"object","properties":{},"required":null}`)}}, "Invalid schema for function 'notes_list': In context=(parameters), None is not of type"},
		{"nested required null", llm.Request{Messages: hi, Tools: []llm.Tool{tool("a", `{"type":"object","properties":{"o":{"type":"object","required":null}}}`)}}, "parameters.properties.o), None"},
		{"array without items", llm.Request{Messages: hi, Tools: []llm.Tool{tool("a", `{"type":"object","properties":{"o":{"type":"array"}}}`)}}, "array schema missing items"},
		{"root not an object", llm.Request{Messages: hi, Tools: []llm.Tool{tool("a", `{"type":"string"}`)}}, `JSON Schema of 'type: "object"'`},
		{"bad name", llm.Request{Messages: hi, Tools: []llm.Tool{tool("notes.list", `{"type":"object"}`)}}, "tools[0].function.name': string does not match pattern"},
		{"name too long", llm.Request{Messages: hi, Tools: []llm.Tool{tool(strings.Repeat("a", 65), `{"type":"object"}`)}}, "does not match pattern"},
		{"duplicate", llm.Request{Messages: hi, Tools: []llm.Tool{tool("a", `{"type":"object"}`), tool("a", `{"type":"object"}`)}}, "duplicate function name 'a'"},
		{"prompt too long", llm.Request{Messages: []llm.Message{{Role: "user", Content: strings.Repeat("word ", 110_000)}}}, "maximum context length is 128000 tokens. However, your messages resulted in 1375"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t)
			_, _, err := chat(t, newClient(t, s), false, tt.req)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, tt.want) {
				t.Fatalf("err = %v, want HTTP 400 %q", err, tt.want)
			}
			// A lenient server lets the same request through.
			lenient := llmtest.NewServerOptions(t, llmtest.Options{Lenient: true})
			if _, _, err := chat(t, newClient(t, lenient), false, tt.req); err != nil {
				t.Fatalf("lenient server: %v", err)
			}
		})
	}
}

func TestContextTokens(t *testing.T) {
	s := llmtest.NewServerOptions(t, llmtest.Options{ContextTokens: 100})
	c := newClient(t, s)
	if _, _, err := chat(t, c, true, llm.Request{Messages: []llm.Message{{Role: "user", Content: strings.Repeat("a", 300)}}}); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
	_, _, err := chat(t, c, true, llm.Request{Messages: []llm.Message{{Role: "user", Content: strings.Repeat("a", 500)}}})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, "maximum context length is 100 tokens") {
		t.Fatalf("over the limit: %v", err)
	}
}
