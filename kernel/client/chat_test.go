package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

func TestChatDefaultTurn(t *testing.T) {
	f := clienttest.New()
	c := dialUnix(t, f)
	ctx := context.Background()
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "p", BaseURL: "http://x/v1", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	var types []string
	res, err := c.Chat(ctx, client.ChatRequest{Input: "hello", Channel: "test"}, func(ev client.ChatEvent) {
		types = append(types, ev.Type)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"turn", "tool_call", "tool_result", "delta", "delta", "final"}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
	if res != (client.ChatResult{TurnID: "t1", Session: "main", Text: "PONG: hello"}) {
		t.Errorf("result %+v", res)
	}
}

// sseHandler answers every request with the raw stream body.
func sseHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	})
}

func TestChatStream(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	huge := strings.Repeat("y", 20<<20) // over the 16 MiB bufio.Scanner limit the reader once had
	tests := []struct {
		name       string
		handler    http.Handler
		wantEvents []client.ChatEvent
		wantRes    client.ChatResult
		wantErr    string
		sentinel   error
	}{
		{
			name: "multi-line data, comments, CRLF and ids",
			handler: sseHandler(": ping\n\nevent: turn\nid: 1\ndata: {\"type\":\"turn\",\n" +
				"data:  \"turn_id\":\"t9\",\"session\":\"s\"}\n\n" +
				": keepalive\r\nevent: delta\r\ndata: {\"type\":\"delta\",\"text\":\"a\\nb\"}\r\n\r\n" +
				"event: reasoning\ndata:{\"type\":\"reasoning\",\"text\":\"hmm\"}\n\n" +
				"event: final\ndata: {\"type\":\"final\",\"text\":\"a\\nb\"}\n\n"),
			wantEvents: []client.ChatEvent{
				{Type: "turn", TurnID: "t9", Session: "s"},
				{Type: "delta", Text: "a\nb"},
				{Type: "reasoning", Text: "hmm"},
				{Type: "final", Text: "a\nb"},
			},
			wantRes: client.ChatResult{TurnID: "t9", Session: "s", Text: "a\nb"},
		},
		{
			name: "type from the event name and a large line",
			handler: sseHandler("event: turn\ndata: {\"turn_id\":\"t1\",\"session\":\"main\"}\n\n" +
				"event: final\ndata: {\"text\":\"" + big + "\"}\n\n"),
			wantEvents: []client.ChatEvent{
				{Type: "turn", TurnID: "t1", Session: "main"},
				{Type: "final", Text: big},
			},
			wantRes: client.ChatResult{TurnID: "t1", Session: "main", Text: big},
		},
		{
			name: "a line of 20 MiB",
			handler: sseHandler("event: turn\ndata: {\"turn_id\":\"t1\",\"session\":\"main\"}\n\n" +
				"event: final\ndata: {\"text\":\"" + huge + "\"}\n\n"),
			wantEvents: []client.ChatEvent{
				{Type: "turn", TurnID: "t1", Session: "main"},
				{Type: "final", Text: huge},
			},
			wantRes: client.ChatResult{TurnID: "t1", Session: "main", Text: huge},
		},
		{
			name: "tool events",
			handler: sseHandler("event: turn\ndata: {\"type\":\"turn\",\"turn_id\":\"t1\"}\n\n" +
				"event: tool_call\ndata: {\"type\":\"tool_call\",\"tool\":{\"id\":\"c\",\"name\":\"time_now\",\"arguments\":\"{}\",\"status\":\"running\"}}\n\n" +
				"event: tool_result\ndata: {\"type\":\"tool_result\",\"tool\":{\"id\":\"c\",\"name\":\"time_now\",\"arguments\":\"{}\",\"result\":\"noon\",\"status\":\"ok\"}}\n\n" +
				"event: final\ndata: {\"type\":\"final\",\"text\":\"noon\"}\n\n"),
			wantEvents: []client.ChatEvent{
				{Type: "turn", TurnID: "t1"},
				{Type: "tool_call", Tool: &client.ToolEvent{ID: "c", Name: "time_now", Arguments: "{}", Status: "running"}},
				{Type: "tool_result", Tool: &client.ToolEvent{ID: "c", Name: "time_now", Arguments: "{}", Result: "noon", Status: "ok"}},
				{Type: "final", Text: "noon"},
			},
			wantRes: client.ChatResult{TurnID: "t1", Text: "noon"},
		},
		{
			name: "error event",
			handler: sseHandler("event: turn\ndata: {\"type\":\"turn\",\"turn_id\":\"t1\"}\n\n" +
				"event: error\ndata: {\"type\":\"error\",\"text\":\"no provider configured\"}\n\n"),
			wantEvents: []client.ChatEvent{{Type: "turn", TurnID: "t1"}, {Type: "error", Text: "no provider configured"}},
			wantRes:    client.ChatResult{TurnID: "t1"},
			wantErr:    "no provider configured",
		},
		{
			name:       "stream ended early",
			handler:    sseHandler("event: turn\ndata: {\"type\":\"turn\",\"turn_id\":\"t1\"}\n\nevent: delta\ndata: {\"type\":\"delta\",\"text\":\"par\"}\n\nevent: final\ndata: {\"type\":\"final\""),
			wantEvents: []client.ChatEvent{{Type: "turn", TurnID: "t1"}, {Type: "delta", Text: "par"}},
			wantRes:    client.ChatResult{TurnID: "t1"},
			wantErr:    "chat: stream ended early",
			sentinel:   client.ErrStreamEnded,
		},
		{
			name:    "malformed event",
			handler: sseHandler("event: delta\ndata: {oops\n\n"),
			wantErr: `decode "delta" event`,
		},
		{
			name: "error before the stream",
			handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clienttest.WriteError(w, http.StatusNotFound, `unknown session "nope"`)
			}),
			wantErr:  `unknown session "nope" (HTTP 404)`,
			sentinel: client.ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialUnix(t, tt.handler)
			var got []client.ChatEvent
			res, err := c.Chat(context.Background(), client.ChatRequest{Input: "hi"}, func(ev client.ChatEvent) {
				got = append(got, ev)
			})
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not match %v", err, tt.sentinel)
			}
			if !reflect.DeepEqual(got, tt.wantEvents) {
				t.Errorf("events\n got %+v\nwant %+v", got, tt.wantEvents)
			}
			if res != tt.wantRes {
				t.Errorf("result %+v, want %+v", res, tt.wantRes)
			}
		})
	}
}

func TestChatErrorEventIsTurnError(t *testing.T) {
	c := dialUnix(t, clienttest.New()) // no provider: the fake's turn fails
	_, err := c.Chat(context.Background(), client.ChatRequest{Input: "hi"}, nil)
	var te *client.TurnError
	if !errors.As(err, &te) || te.TurnID != "t1" || !strings.HasPrefix(te.Message, "no provider configured") {
		t.Fatalf("error %v (%T)", err, err)
	}
}

func TestChatCancel(t *testing.T) {
	tests := []struct {
		name string
		// stop ends the running turn from inside emit, given the turn id.
		stop    func(c *client.HTTP, cancel context.CancelFunc, turnID string) error
		wantErr error
	}{
		{"context cancel closes the stream", func(_ *client.HTTP, cancel context.CancelFunc, _ string) error {
			cancel()
			return nil
		}, context.Canceled},
		{"cancel route", func(c *client.HTTP, _ context.CancelFunc, id string) error {
			return c.Cancel(context.Background(), id)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clienttest.New()
			serverSawEnd := make(chan struct{})
			f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
				send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: "thinking"})
				<-ctx.Done()
				close(serverSawEnd)
				send(client.ChatEvent{Type: client.EventError, TurnID: turnID, Text: "cancelled"})
			}
			c := dialUnix(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stopErr error
			_, err := c.Chat(ctx, client.ChatRequest{Input: "long"}, func(ev client.ChatEvent) {
				if ev.Type == client.EventDelta {
					stopErr = tt.stop(c, cancel, ev.TurnID)
				}
			})
			if stopErr != nil {
				t.Fatal(stopErr)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (err == nil || err.Error() != "cancelled") {
				t.Fatalf("error %v, want the turn's cancelled error", err)
			}
			<-serverSawEnd // the kernel side saw the turn end
		})
	}
	t.Run("cancel unknown turn", func(t *testing.T) {
		c := dialUnix(t, clienttest.New())
		if err := c.Cancel(context.Background(), "nope"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("error %v", err)
		}
	})
}
