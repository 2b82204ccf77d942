package kernel

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"

	"github.com/hologramagent/hologram/plugins/host"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// approvalKernel is a started kernel (fake plugin host) whose approval timeouts the test
// fires: each approval asked sends its timeout on timeouts and expires when fire sends.
type approvalKernel struct {
	*Kernel
	fire     chan time.Time
	timeouts chan time.Duration
}

func newApprovalKernel(t *testing.T, cfg config.Config) approvalKernel {
	t.Helper()
	k, _ := pluginKernel(t, testStore(t), cfg, nil, nil)
	a := approvalKernel{Kernel: k, fire: make(chan time.Time), timeouts: make(chan time.Duration, 8)}
	k.plugins.approvals.setAfter(func(d time.Duration) <-chan time.Time {
		a.timeouts <- d
		return a.fire
	})
	return a
}

// serve registers turn id in session as running and plugin as serving it until the returned
// func is called (as a tool call does), with the call's deadline.
func (a approvalKernel) serve(id, session, plugin string, deadline time.Time) func() {
	a.turnMu.Lock()
	a.turns[id] = &turn{id: id, session: session, cancel: func(error) {}}
	a.turnMu.Unlock()
	release := a.plugins.grants.grantUntil(id, plugin, deadline)
	return func() {
		release()
		a.turnMu.Lock()
		delete(a.turns, id)
		a.turnMu.Unlock()
	}
}

// result is an answer of nativeServices.Approve.
type result struct {
	res protocol.ApproveResult
	err error
}

// ask runs owner/approve for plugin in the background.
func (a approvalKernel) ask(ctx context.Context, plugin string, p protocol.ApproveParams) <-chan result {
	out := make(chan result, 1)
	go func() {
		res, err := nativeServices{k: a.Kernel, p: a.plugins}.Approve(ctx, plugin, p)
		out <- result{res, err}
	}()
	return out
}

// pendingOne waits for exactly one pending approval (the timer was asked for, so it is
// registered) and returns it.
func (a approvalKernel) pendingOne(t *testing.T) (client.Approval, time.Duration) {
	t.Helper()
	var d time.Duration
	select {
	case d = <-a.timeouts:
	case <-time.After(10 * time.Second):
		t.Fatal("no approval was asked")
	}
	list, err := a.Service().Approvals(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("pending %+v %v", list, err)
	}
	return list[0], d
}

func TestApprovalAnswers(t *testing.T) {
	a := newApprovalKernel(t, config.Default(func(string) string { return "" }))
	ctx := context.Background()
	sub := a.Bus().Subscribe(EventApprovalRequested, EventApprovalAnswered)
	defer sub.Close()
	next := func() map[string]any {
		t.Helper()
		select {
		case ev := <-sub.C():
			return ev.Payload
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return nil
	}

	t.Run("approved", func(t *testing.T) {
		done := a.serve("t1", "main", "shell", time.Time{})
		defer done()
		out := a.ask(ctx, "shell", protocol.ApproveParams{Turn: "t1", Title: " Run a command ", Detail: "$ ls\nin /x"})
		ap, d := a.pendingOne(t)
		if d != config.DefaultApprovalTimeout || ap.Plugin != "shell" || ap.Title != "Run a command" || ap.Detail != "$ ls\nin /x" ||
			ap.Session != "main" || ap.Scope != "private" || ap.TurnID != "t1" || ap.State != client.ApprovalPending ||
			!ap.Expires.Equal(ap.Created.Add(config.DefaultApprovalTimeout)) {
			t.Fatalf("pending %+v, timeout %s", ap, d)
		}
		if p := next(); p["id"] != ap.ID || p["title"] != "Run a command" || p["session"] != "main" {
			t.Fatalf("requested event %+v", p)
		}
		got, err := a.Service().AnswerApproval(ctx, ap.ID, true)
		if err != nil || got.State != client.ApprovalApproved {
			t.Fatalf("answer %+v %v", got, err)
		}
		r := <-out
		if r.err != nil || !r.res.Approved || r.res.ID != ap.ID || r.res.Reason != "approved by the owner" {
			t.Fatalf("result %+v", r)
		}
		if p := next(); p["id"] != ap.ID || p["state"] != client.ApprovalApproved {
			t.Fatalf("answered event %+v", p)
		}
		if _, err := a.Service().AnswerApproval(ctx, ap.ID, false); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("a second answer: %v", err)
		}
	})

	t.Run("denied", func(t *testing.T) {
		out := a.ask(ctx, "shell", protocol.ApproveParams{Title: "Run a command"}) // outside a turn
		ap, _ := a.pendingOne(t)
		next()
		if ap.Session != "" || ap.TurnID != "" {
			t.Fatalf("an approval outside a turn names a session: %+v", ap)
		}
		if _, err := a.Service().AnswerApproval(ctx, ap.ID, false); err != nil {
			t.Fatal(err)
		}
		if r := <-out; r.err != nil || r.res.Approved || r.res.Reason != "denied by the owner" {
			t.Fatalf("result %+v", r)
		}
		next()
	})

	t.Run("no answer within the timeout is a denial", func(t *testing.T) {
		out := a.ask(ctx, "shell", protocol.ApproveParams{Title: "Run a command", TimeoutMS: 5000})
		ap, d := a.pendingOne(t)
		next()
		if d != 5*time.Second {
			t.Fatalf("the plugin's shorter timeout: %s", d)
		}
		a.fire <- time.Now()
		if r := <-out; r.err != nil || r.res.Approved || r.res.Reason != "no answer from the owner within 5s: denied" {
			t.Fatalf("result %+v", r)
		}
		if p := next(); p["id"] != ap.ID || p["state"] != client.ApprovalExpired {
			t.Fatalf("answered event %+v", p)
		}
		if _, err := a.Service().AnswerApproval(ctx, ap.ID, true); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("an answer after the timeout: %v", err)
		}
	})

	t.Run("the plugin stops waiting", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		out := a.ask(cctx, "shell", protocol.ApproveParams{Title: "Run a command"})
		a.pendingOne(t)
		next()
		cancel()
		if r := <-out; r.err == nil || !errors.Is(r.err, context.Canceled) || r.res.Approved {
			t.Fatalf("result %+v", r)
		}
		if p := next(); p["state"] != client.ApprovalCancelled {
			t.Fatalf("answered event %+v", p)
		}
		if list, _ := a.Service().Approvals(ctx); len(list) != 0 {
			t.Fatalf("still pending %+v", list)
		}
	})

	if _, err := a.Service().AnswerApproval(ctx, " ", true); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
	if _, err := a.Service().AnswerApproval(ctx, "ap-never", true); !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), `no pending approval "ap-never"`) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestApprovalBadRequests(t *testing.T) {
	a := newApprovalKernel(t, config.Default(func(string) string { return "" }))
	svc := nativeServices{k: a.Kernel, p: a.plugins}
	done := a.serve("t1", "main", "shell", time.Time{})
	defer done()
	for _, tt := range []struct {
		name string
		p    protocol.ApproveParams
		want string
	}{
		{"no title", protocol.ApproveParams{Title: "  "}, "the title is empty"},
		{"long title", protocol.ApproveParams{Title: strings.Repeat("t", 201)}, "the title has 201 characters, at most 200"},
		{"long detail", protocol.ApproveParams{Title: "x", Detail: strings.Repeat("d", 8001)}, "the detail has 8001 characters, at most 8000"},
		{"negative timeout", protocol.ApproveParams{Title: "x", TimeoutMS: -1}, "timeout_ms must be 0"},
		{"a turn it does not serve", protocol.ApproveParams{Title: "x", Turn: "t-other"}, `turn "t-other" is not one this plugin is serving now`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.Approve(context.Background(), "shell", tt.p)
			if !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	// Another plugin cannot ask in a turn only shell serves.
	if _, err := svc.Approve(context.Background(), "files", protocol.ApproveParams{Title: "x", Turn: "t1"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("a plugin not serving the turn: %v", err)
	}
}

func TestApprovalTimeouts(t *testing.T) {
	cfg := config.Default(func(string) string { return "" })
	cfg.Agent.ApprovalTimeout.Duration = 10 * time.Minute
	a := newApprovalKernel(t, cfg)
	ctx := context.Background()

	// The configured timeout, bounded by the deadline of the tool call that asks, minus a
	// margin for recording the denial.
	done := a.serve("t1", "main", "shell", time.Now().Add(90*time.Second))
	out := a.ask(ctx, "shell", protocol.ApproveParams{Turn: "t1", Title: "x"})
	ap, d := a.pendingOne(t)
	if d < 80*time.Second || d > 88*time.Second || d%time.Second != 0 {
		t.Fatalf("timeout %s: want the call's 90 s less the margin, in whole seconds", d)
	}
	a.fire <- time.Now()
	if r := <-out; !strings.Contains(r.res.Reason, "no answer from the owner within 1m2") {
		t.Fatalf("result %+v (approval %s)", r, ap.ID)
	}
	done()

	// Without a deadline the configured one applies.
	out = a.ask(ctx, "shell", protocol.ApproveParams{Title: "x"})
	if _, d := a.pendingOne(t); d != 10*time.Minute {
		t.Fatalf("timeout %s", d)
	}
	a.fire <- time.Now()
	<-out
}

func TestApprovalStream(t *testing.T) {
	a := newApprovalKernel(t, config.Default(func(string) string { return "" }))
	ctx := context.Background()
	var (
		mu  sync.Mutex
		got []client.ChatEvent
	)
	emit, unbind := a.plugins.approvals.bindTurn("t1", func(ev client.ChatEvent) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}, true)
	done := a.serve("t1", "main", "shell", time.Time{})
	defer done()
	emit(client.ChatEvent{Type: client.EventTurn, TurnID: "t1"}) // the turn's own events share the stream
	out := a.ask(ctx, "shell", protocol.ApproveParams{Turn: "t1", Title: "Run a command"})
	ap, _ := a.pendingOne(t)
	if _, err := a.Service().AnswerApproval(ctx, ap.ID, false); err != nil {
		t.Fatal(err)
	}
	<-out
	unbind()
	// After the turn, nothing more reaches its stream; a turn without a stream binds nothing.
	noop, unbind2 := a.plugins.approvals.bindTurn("t2", nil, true)
	noop(client.ChatEvent{Type: client.EventDelta})
	unbind2()
	out = a.ask(ctx, "shell", protocol.ApproveParams{Title: "later"})
	ap2, _ := a.pendingOne(t)
	if _, err := a.Service().AnswerApproval(ctx, ap2.ID, true); err != nil {
		t.Fatal(err)
	}
	<-out
	// A turn that is not the owner's (a group's, a /v1 end user's) keeps its stream, but an
	// approval asked in it goes to the owner's clients only, never into that stream.
	var others []client.ChatEvent
	otherEmit, unbind3 := a.plugins.approvals.bindTurn("t3", func(ev client.ChatEvent) { others = append(others, ev) }, false)
	otherEmit(client.ChatEvent{Type: client.EventTurn, TurnID: "t3"})
	done3 := a.serve("t3", "main", "shell", time.Time{})
	out = a.ask(ctx, "shell", protocol.ApproveParams{Turn: "t3", Title: "asked in a group"})
	ap3, _ := a.pendingOne(t)
	if _, err := a.Service().AnswerApproval(ctx, ap3.ID, false); err != nil {
		t.Fatal(err)
	}
	<-out
	done3()
	unbind3()
	if len(others) != 1 || others[0].Type != client.EventTurn {
		t.Fatalf("a non-owner turn's stream got %+v", others)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0].Type != client.EventTurn || got[1].Type != client.EventApproval || got[1].Approval.ID != ap.ID ||
		got[1].Approval.State != client.ApprovalPending || got[1].Session != "main" || got[1].TurnID != "t1" ||
		got[2].Approval.State != client.ApprovalDenied {
		t.Fatalf("stream %+v", got)
	}
}

var _ host.Approver = nativeServices{}
