package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// sseEvent is one parsed server-sent event (or comment).
type sseEvent struct {
	name, data, comment string
}

// readEvent reads one SSE block (lines up to a blank line) from br.
func readEvent(t *testing.T, br *bufio.Reader) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read stream: %v (partial %q, event so far %+v)", err, line, ev)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return ev
		case strings.HasPrefix(line, ": "):
			ev.comment = strings.TrimPrefix(line, ": ")
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if ev.data != "" {
				t.Fatalf("second data line %q in one event", line)
			}
			ev.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected stream line %q", line)
		}
	}
}

// startChat posts a chat request and returns the open response.
func startChat(t *testing.T, sv *served, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", sv.base+"/api/v1/chat", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := sv.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func frame(t *testing.T, ev client.ChatEvent) string {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return "event: " + ev.Type + "\ndata: " + string(b) + "\n\n"
}

func TestChatStream(t *testing.T) {
	turn := client.ChatEvent{Type: client.EventTurn, TurnID: "t1", Session: "main"}
	tool := &client.ToolEvent{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`, Status: "running"}
	done := &client.ToolEvent{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`, Result: "text", Status: "ok"}
	tests := []struct {
		name   string
		events []client.ChatEvent
		res    client.ChatResult
		err    error
		want   []client.ChatEvent
	}{
		{
			name: "turn with tools",
			events: []client.ChatEvent{turn,
				{Type: client.EventReasoning, TurnID: "t1", Text: "hmm"},
				{Type: client.EventToolCall, TurnID: "t1", Tool: tool},
				{Type: client.EventToolResult, TurnID: "t1", Tool: done},
				{Type: client.EventDelta, TurnID: "t1", Text: "Hel"},
				{Type: client.EventDelta, TurnID: "t1", Text: "lo\nworld"}},
			res: client.ChatResult{TurnID: "t1", Session: "main", Text: "Hello\nworld"},
			want: []client.ChatEvent{turn,
				{Type: client.EventReasoning, TurnID: "t1", Text: "hmm"},
				{Type: client.EventToolCall, TurnID: "t1", Tool: tool},
				{Type: client.EventToolResult, TurnID: "t1", Tool: done},
				{Type: client.EventDelta, TurnID: "t1", Text: "Hel"},
				{Type: client.EventDelta, TurnID: "t1", Text: "lo\nworld"},
				{Type: client.EventFinal, TurnID: "t1", Session: "main", Text: "Hello\nworld"}},
		},
		{
			name:   "backend emits its own final",
			events: []client.ChatEvent{turn, {Type: client.EventFinal, TurnID: "t1", Session: "main", Text: "x"}, {Type: client.EventDelta, Text: "late"}},
			res:    client.ChatResult{TurnID: "t1", Session: "main", Text: "x"},
			want:   []client.ChatEvent{turn, {Type: client.EventFinal, TurnID: "t1", Session: "main", Text: "x"}},
		},
		{
			name:   "failure after the turn started",
			events: []client.ChatEvent{turn, {Type: client.EventDelta, TurnID: "t1", Text: "par"}},
			err:    fmt.Errorf("provider: %w", client.ErrUnavailable),
			want: []client.ChatEvent{turn, {Type: client.EventDelta, TurnID: "t1", Text: "par"},
				{Type: client.EventError, TurnID: "t1", Session: "main", Text: "provider: unavailable"}},
		},
		{
			name:   "turn cancelled by id",
			events: []client.ChatEvent{turn},
			err:    context.Canceled,
			want:   []client.ChatEvent{turn, {Type: client.EventError, TurnID: "t1", Session: "main", Text: "turn cancelled"}},
		},
		{
			name: "no events emitted",
			res:  client.ChatResult{TurnID: "t9", Session: "s", Text: "ok"},
			want: []client.ChatEvent{{Type: client.EventTurn, TurnID: "t9", Session: "s"},
				{Type: client.EventFinal, TurnID: "t9", Session: "s", Text: "ok"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got client.ChatRequest
			s := New(&fakeBackend{chat: func(_ context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
				got = req
				for _, ev := range tt.events {
					emit(ev)
				}
				return tt.res, tt.err
			}}, Options{})
			sv := serveUnix(t, s, "")
			resp := startChat(t, sv, `{"session":"main","input":"hello","channel":"waiter"}`)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, ev := range tt.want {
				want.WriteString(frame(t, ev))
			}
			if string(body) != want.String() {
				t.Errorf("stream\n got %q\nwant %q", body, want.String())
			}
			if !reflect.DeepEqual(got, client.ChatRequest{Session: "main", Input: "hello", Channel: "waiter"}) {
				t.Errorf("backend got %+v", got)
			}
		})
	}
}

func TestChatErrorBeforeStream(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"unknown session", fmt.Errorf("session %q: %w", "x", client.ErrNotFound), 404},
		{"no provider", fmt.Errorf("no provider configured: %w", client.ErrUnavailable), 503},
		{"invalid", client.ErrInvalid, 400},
		{"internal", errors.New("boom"), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(&fakeBackend{chat: func(context.Context, client.ChatRequest, func(client.ChatEvent)) (client.ChatResult, error) {
				return client.ChatResult{}, tt.err
			}}, Options{})
			sv := serveUnix(t, s, "")
			resp, body := sv.do(t, "POST", "/api/v1/chat", `{"input":"hi"}`, nil)
			if resp.StatusCode != tt.want || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d (%s), want %d JSON; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), tt.want, body)
			}
			if e := apiError(t, body); e.Message != tt.err.Error() {
				t.Errorf("message %q, want %q", e.Message, tt.err.Error())
			}
		})
	}
}

func TestChatKeepAlive(t *testing.T) {
	release := make(chan struct{})
	s := New(&fakeBackend{chat: func(_ context.Context, _ client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
		emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1", Session: "main"})
		<-release
		return client.ChatResult{TurnID: "t1", Session: "main", Text: "done"}, nil
	}}, Options{})
	s.pingEvery = 1 // a tick as fast as the ticker allows; the test waits for a ping, never for time
	sv := serveUnix(t, s, "")
	resp := startChat(t, sv, `{"input":"hi"}`)
	br := bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev.name != client.EventTurn {
		t.Fatalf("first event %+v, want turn", ev)
	}
	for {
		ev := readEvent(t, br)
		if ev.comment == "ping" && ev.name == "" && ev.data == "" {
			break
		}
		t.Fatalf("got %+v while waiting for a ping", ev)
	}
	close(release)
	for {
		ev := readEvent(t, br)
		if ev.comment == "ping" {
			continue
		}
		if ev.name != client.EventFinal {
			t.Fatalf("got %+v, want final", ev)
		}
		var fin client.ChatEvent
		if err := json.Unmarshal([]byte(ev.data), &fin); err != nil || fin.Text != "done" {
			t.Fatalf("final %q: %v", ev.data, err)
		}
		break
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("after final: %q, %v", rest, err)
	}
}

func TestChatClientDisconnectCancelsTurn(t *testing.T) {
	cancelled := make(chan error, 1)
	s := New(&fakeBackend{chat: func(ctx context.Context, _ client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
		emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1", Session: "main"})
		<-ctx.Done()
		cancelled <- ctx.Err()
		return client.ChatResult{}, ctx.Err()
	}}, Options{})
	sv := serveUnix(t, s, "")
	resp := startChat(t, sv, `{"input":"hi"}`)
	if ev := readEvent(t, bufio.NewReader(resp.Body)); ev.name != client.EventTurn {
		t.Fatalf("first event %+v", ev)
	}
	resp.Body.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("backend ctx error %v, want context.Canceled", err)
	}
}

func TestShutdown(t *testing.T) {
	t.Run("in-flight stream ends with its turn", func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		s := New(&fakeBackend{chat: func(_ context.Context, _ client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
			emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1"})
			close(started)
			<-release
			return client.ChatResult{TurnID: "t1", Text: "bye"}, nil
		}}, Options{})
		sv := serveUnix(t, s, "")
		resp := startChat(t, sv, `{"input":"hi"}`)
		br := bufio.NewReader(resp.Body)
		<-started
		if ev := readEvent(t, br); ev.name != client.EventTurn {
			t.Fatalf("first event %+v", ev)
		}
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(context.Background()) }()
		close(release)
		if ev := readEvent(t, br); ev.name != client.EventFinal {
			t.Fatalf("event %+v, want final", ev)
		}
		if err := <-shut; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := sv.stop(); err != nil {
			t.Errorf("ServeUnix: %v", err)
		}
		if err := s.ServeUnix(context.Background(), sv.path); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("ServeUnix after Shutdown: %v", err)
		}
	})
	t.Run("expired ctx cancels the turn", func(t *testing.T) {
		cancelled := make(chan error, 1)
		s := New(&fakeBackend{chat: func(ctx context.Context, _ client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
			emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1"})
			<-ctx.Done()
			cancelled <- ctx.Err()
			return client.ChatResult{}, ctx.Err()
		}}, Options{})
		sv := serveUnix(t, s, "")
		resp := startChat(t, sv, `{"input":"hi"}`)
		if ev := readEvent(t, bufio.NewReader(resp.Body)); ev.name != client.EventTurn {
			t.Fatalf("first event %+v", ev)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Shutdown: %v, want context.Canceled", err)
		}
		if err := <-cancelled; !errors.Is(err, context.Canceled) {
			t.Errorf("turn ctx: %v", err)
		}
	})
}
