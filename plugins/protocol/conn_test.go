package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// connPair connects two Conns over io.Pipe pairs and runs both; cleanup
// closes them and waits for Run. closeB closes B's writer, as a dying peer would.
func connPair(t *testing.T, optsA, optsB ConnOptions) (a, b *Conn, closeB func(), runA <-chan error) {
	t.Helper()
	abR, abW := io.Pipe()
	baR, baW := io.Pipe()
	a = NewConn(baR, abW, optsA)
	b = NewConn(abR, baW, optsB)
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { errA <- a.Run(context.Background()) }()
	go func() { errB <- b.Run(context.Background()) }()
	t.Cleanup(func() {
		a.Close()
		b.Close()
		<-errB
	})
	return a, b, func() { baW.Close() }, errA
}

func TestConnBothDirections(t *testing.T) {
	t.Parallel()
	var bConn *Conn
	b := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var n int
		if err := bConn.Call(ctx, "double", json.RawMessage(params), &n); err != nil { // nested call back to A
			return nil, err
		}
		return map[string]any{"method": method, "n": n}, nil
	})
	aH := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var n []int
		if err := json.Unmarshal(params, &n); err != nil || len(n) != 1 {
			return nil, &Error{Code: InvalidParams, Message: "want [n]"}
		}
		return 2 * n[0], nil
	})
	a, bc, _, _ := connPair(t, ConnOptions{Handler: aH}, ConnOptions{Handler: b})
	bConn = bc
	var got struct {
		Method string
		N      int
	}
	if err := a.Call(context.Background(), "work", []int{21}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Method != "work" || got.N != 42 {
		t.Errorf("got %+v", got)
	}
	var n int
	if err := bConn.Call(context.Background(), "double", []int{5}, &n); err != nil || n != 10 {
		t.Errorf("B→A call = %d, %v", n, err)
	}
}

func TestConnConcurrentCalls(t *testing.T) {
	t.Parallel()
	const n = 20
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		<-all // every request is in flight before any is answered
		return json.RawMessage(params), nil
	})
	a, _, _, _ := connPair(t, ConnOptions{}, ConnOptions{Handler: h})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var got []int
			if err := a.Call(context.Background(), "echo", []int{i}, &got); err != nil || len(got) != 1 || got[0] != i {
				t.Errorf("call %d = %d, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

func TestConnCancellation(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	handlerDone := make(chan error, 1)
	notes := make(chan CancelledParams, 1)
	h := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		handlerDone <- ctx.Err()
		return nil, ctx.Err()
	})
	onNote := func(method string, params json.RawMessage) {
		if method == NotifCancelled {
			var p CancelledParams
			if err := json.Unmarshal(params, &p); err != nil {
				t.Error(err)
			}
			notes <- p
		}
	}
	a, _, _, _ := connPair(t, ConnOptions{}, ConnOptions{Handler: h, OnNotification: onNote})
	ctx, cancel := context.WithCancel(context.Background())
	callErr := make(chan error, 1)
	go func() { callErr <- a.Call(ctx, "slow", nil, nil) }()
	<-started
	cancel()
	if err := <-callErr; !errors.Is(err, context.Canceled) {
		t.Errorf("Call = %v, want context.Canceled", err)
	}
	p := <-notes
	if p.RequestID != IntID(1) || p.Reason != context.Canceled.Error() {
		t.Errorf("cancelled params = %+v", p)
	}
	if err := <-handlerDone; !errors.Is(err, context.Canceled) {
		t.Errorf("handler ctx err = %v", err)
	}
}

func TestConnHandlerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler Handler
		code    int
		message string
	}{
		{"nil handler", nil, MethodNotFound, "method not found: m"},
		{"rpc error", HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) {
			return nil, &Error{Code: InvalidParams, Message: "bad", Data: json.RawMessage(`{"field":"x"}`)}
		}), InvalidParams, "bad"},
		{"wrapped rpc error", HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) {
			return nil, fmt.Errorf("ctx: %w", &Error{Code: MethodNotFound, Message: "nope"})
		}), MethodNotFound, "nope"},
		{"plain error", HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) {
			return nil, errors.New("boom")
		}), InternalError, "boom"},
		{"panic", HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) {
			panic("oops")
		}), InternalError, "handler panicked: oops"},
		{"unencodable result", HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) {
			return make(chan int), nil
		}), InternalError, "encoding result: json: unsupported type: chan int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, _, _, _ := connPair(t, ConnOptions{}, ConnOptions{Handler: tt.handler})
			err := a.Call(context.Background(), "m", nil, nil)
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code || e.Message != tt.message {
				t.Errorf("Call = %v, want code %d %q", err, tt.code, tt.message)
			}
		})
	}
}

func TestConnPeerGoesAway(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(started)
		<-release
		return nil, nil
	})
	a, _, closeB, runA := connPair(t, ConnOptions{}, ConnOptions{Handler: h})
	t.Cleanup(func() { close(release) })
	callErr := make(chan error, 1)
	go func() { callErr <- a.Call(context.Background(), "slow", nil, nil) }()
	<-started
	closeB()
	if err := <-runA; err != nil {
		t.Errorf("Run at EOF = %v, want nil", err)
	}
	if err := <-callErr; !errors.Is(err, ErrClosed) {
		t.Errorf("pending Call = %v, want ErrClosed", err)
	}
	if err := a.Call(context.Background(), "later", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after close = %v, want ErrClosed", err)
	}
	if err := a.Notify("n", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after close = %v, want ErrClosed", err)
	}
}

func TestConnNotifications(t *testing.T) {
	t.Parallel()
	type note struct {
		method string
		params string
	}
	got := make(chan note, 2)
	a, _, _, _ := connPair(t, ConnOptions{}, ConnOptions{OnNotification: func(m string, p json.RawMessage) {
		got <- note{m, string(p)}
	}})
	tests := []struct {
		method string
		params any
		want   string
	}{
		{NotifMessage, LoggingMessageParams{Level: "info", Data: json.RawMessage(`"<hi>"`)}, `{"level":"info","data":"<hi>"}`},
		{NotifToolsListChanged, nil, ""},
	}
	for _, tt := range tests {
		if err := a.Notify(tt.method, tt.params); err != nil {
			t.Fatal(err)
		}
		if n := <-got; n.method != tt.method || n.params != tt.want {
			t.Errorf("got %+v, want %s %s", n, tt.method, tt.want)
		}
	}
}

func TestConnOversizedResponseFailsCall(t *testing.T) {
	t.Parallel()
	h := HandlerFunc(func(context.Context, string, json.RawMessage) (any, error) {
		return strings.Repeat("a", 300), nil
	})
	a, _, _, _ := connPair(t, ConnOptions{MaxFrame: 200}, ConnOptions{Handler: h, MaxFrame: 1000})
	if err := a.Call(context.Background(), "big", nil, nil); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("Call = %v, want ErrFrameTooLarge", err)
	}
}

func TestNegotiateVersion(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2025-03-26", "2025-03-26"}, {"2024-11-05", "2024-11-05"},
		{"2099-01-01", LatestVersion}, {"", LatestVersion},
	} {
		if got := NegotiateVersion(tt.in); got != tt.want {
			t.Errorf("NegotiateVersion(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
