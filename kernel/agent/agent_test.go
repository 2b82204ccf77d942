package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

func TestRunMultiRound(t *testing.T) {
	h := newHarness(t, Options{},
		calls(call("a", "time_now", `{"timezone":"Asia/Shanghai"}`), call("b", "echo", `{"x":1}`)),
		calls(call("c", "echo", `{}`)),
		text("all done"),
	)
	h.addTools(t, TimeNow(h.clock.Now), echoTool("echo", false))
	h.store.sessions[testSession] = memory.Session{ID: testSession, SystemPrompt: "You are terse.", Model: "m-default"}
	res, err := h.run(context.Background(), "what time is it?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all done" || res.Stop != StopDone || res.Rounds != 3 || res.Usage.TotalTokens != 30 {
		t.Errorf("result = %+v", res)
	}
	h.checkInvariants(t)

	evs := h.store.all()
	var roles []string
	for _, e := range evs {
		roles = append(roles, string(e.Role))
		if e.TurnID != "turn-1" || e.Channel != "waiter" || e.Partner != "owner" || e.Session != testSession || !e.Time.Equal(t0) {
			t.Errorf("event %d lacks turn metadata: %+v", e.ID, e)
		}
		if e.Tokens <= 0 {
			t.Errorf("event %d has no token estimate", e.ID)
		}
	}
	wantRoles := []string{"user", "assistant", "tool", "tool", "assistant", "tool", "assistant"}
	if !slices.Equal(roles, wantRoles) {
		t.Errorf("roles = %v, want %v", roles, wantRoles)
	}
	if n := len(h.store.commits); n != 4 {
		t.Errorf("%d commits, want 4 (user, batch, batch, final)", n)
	}
	if got := statuses(h.store.toolEvents()); !slices.Equal(got, []string{"a=ok", "b=ok", "c=ok"}) {
		t.Errorf("tool statuses = %v", got)
	}
	if got := evs[2].Content; !strings.Contains(got, "2025-03-14T17:26:53+08:00") || evs[2].ToolName != "time_now" {
		t.Errorf("time_now result = %q", got)
	}

	reqs := h.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	last := reqs[2]
	if last.Model != "m-default" || last.MaxTokens != DefaultMaxTokens || len(last.Tools) != 2 || last.Tools[0].Name != "echo" {
		t.Errorf("request = model %q max %d tools %v", last.Model, last.MaxTokens, last.Tools)
	}
	var msgRoles []string
	for _, m := range last.Messages {
		msgRoles = append(msgRoles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool"}; !slices.Equal(msgRoles, want) {
		t.Errorf("last request roles = %v, want %v", msgRoles, want)
	}

	var kinds []string
	for _, e := range h.emitted() {
		k := e.Type
		if e.Tool != nil {
			k += ":" + e.Tool.ID + ":" + e.Tool.Status
		}
		kinds = append(kinds, k)
	}
	want := []string{"tool_call:a:running", "tool_result:a:ok", "tool_call:b:running", "tool_result:b:ok", "tool_call:c:running", "tool_result:c:ok"}
	if !slices.Equal(kinds, want) {
		t.Errorf("emitted = %v, want %v", kinds, want)
	}
}

func TestToolOutcomes(t *testing.T) {
	strict := `{"type":"object","properties":{"n":{"type":"integer"},"flag":{"type":"boolean"},"s":{"type":["string","null"]}},"required":["n"]}`
	var gotArgs json.RawMessage
	tools := []Tool{
		funcTool{name: "strict", params: strict, run: func(_ context.Context, args json.RawMessage) (string, error) {
			gotArgs = args
			return "fine", nil
		}},
		funcTool{name: "boom", run: func(context.Context, json.RawMessage) (string, error) { panic("kaboom") }},
		funcTool{name: "slow", run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
		funcTool{name: "gone", run: func(context.Context, json.RawMessage) (string, error) {
			return "", fmt.Errorf("plugin notes exited: %w", ErrToolUnavailable)
		}},
		funcTool{name: "fail", run: func(context.Context, json.RawMessage) (string, error) { return "", errors.New("disk full") }},
		echoTool("echo", false),
	}
	denyEcho := Hook{Name: "audit/deny", Stage: StageBeforeToolCall, Fn: func(_ context.Context, d *StageData) (Patch, error) {
		if d.Call.Name == "strict" {
			reason := "strict is forbidden here"
			return Patch{Deny: &reason}, nil
		}
		return Patch{}, nil
	}}
	cases := []struct {
		name       string
		call       llm.ToolCall
		hooks      []Hook
		wantStatus string
		wantResult string
		wantArgs   string // what the tool received, when it ran
		timeout    time.Duration
	}{
		{name: "ok", call: call("x", "strict", `{"n":3}`), wantStatus: StatusOK, wantResult: "fine", wantArgs: `{"n":3}`},
		{name: "empty args", call: call("x", "echo", ``), wantStatus: StatusOK, wantResult: "echo:{}"},
		{name: "lenient bool", call: call("x", "strict", `{"n":3,"flag":"true"}`), wantStatus: StatusOK, wantResult: "fine", wantArgs: `{"flag":true,"n":3}`},
		{name: "unknown tool", call: call("x", "nope", `{}`), wantStatus: StatusError, wantResult: "unknown tool nope; available tools: boom, echo, fail, gone, slow, strict"},
		{name: "missing required", call: call("x", "strict", `{}`), wantStatus: StatusError, wantResult: `missing required property "n"`},
		{name: "wrong type", call: call("x", "strict", `{"n":1.5,"s":7}`), wantStatus: StatusError, wantResult: `property "n" must be integer, got number; property "s" must be string or null, got integer`},
		{name: "not an object", call: call("x", "strict", `[1]`), wantStatus: StatusError, wantResult: "arguments are not a JSON object"},
		{name: "panic", call: call("x", "boom", `{}`), wantStatus: StatusError, wantResult: "kaboom"},
		{name: "timeout", call: call("x", "slow", `{}`), timeout: time.Millisecond, wantStatus: StatusTimeout, wantResult: "did not finish within 1ms"},
		{name: "unavailable", call: call("x", "gone", `{}`), wantStatus: StatusError, wantResult: "is unavailable"},
		{name: "error", call: call("x", "fail", `{}`), wantStatus: StatusError, wantResult: "error: disk full"},
		{name: "denied", call: call("x", "strict", `{"n":1}`), hooks: []Hook{denyEcho}, wantStatus: StatusDenied, wantResult: "tool strict was denied: strict is forbidden here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gotArgs = nil
			// The failing call is followed by a good one in the same batch: the batch continues.
			// Only the timeout case shortens ToolTimeout, so no other tool can lose a race with it.
			h := newHarness(t, Options{ToolTimeout: tc.timeout}, calls(tc.call, call("y", "echo", `{"k":"v"}`)), text("ok"))
			h.addTools(t, tools...)
			for _, hk := range tc.hooks {
				if err := h.a.AddHook(hk); err != nil {
					t.Fatal(err)
				}
			}
			res, err := h.run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != StopDone {
				t.Errorf("stop = %q", res.Stop)
			}
			h.checkInvariants(t)
			tev := h.store.toolEvents()
			if len(tev) != 2 {
				t.Fatalf("%d tool events, want 2", len(tev))
			}
			if tev[0].ToolStatus != tc.wantStatus || !strings.Contains(tev[0].Content, tc.wantResult) {
				t.Errorf("result = %s %q, want %s containing %q", tev[0].ToolStatus, tev[0].Content, tc.wantStatus, tc.wantResult)
			}
			if tc.timeout == 0 && (tev[1].ToolStatus != StatusOK || tev[1].Content != `echo:{"k":"v"}`) {
				t.Errorf("second call = %s %q", tev[1].ToolStatus, tev[1].Content)
			}
			if tc.timeout != 0 && tev[1].ToolCallID != "y" {
				t.Errorf("second call not recorded: %+v", tev[1])
			}
			if tc.wantArgs != "" && string(gotArgs) != tc.wantArgs {
				t.Errorf("tool got args %s, want %s", gotArgs, tc.wantArgs)
			}
			// The model sees the same result in the next request.
			second := h.prov.requests()[1].Messages
			if m := second[len(second)-2]; m.ToolCallID != "x" || m.Content != tev[0].Content {
				t.Errorf("model saw %+v", m)
			}
		})
	}
}

func TestCancelMidBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, Options{}, calls(call("a", "echo", `{}`), call("b", "stop", `{}`), call("c", "echo", `{}`)))
	h.addTools(t, echoTool("echo", true), funcTool{name: "stop", run: func(ctx context.Context, _ json.RawMessage) (string, error) {
		cancel() // the user presses stop while this tool runs
		<-ctx.Done()
		return "", ctx.Err()
	}})
	res, err := h.run(ctx, "go")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Stop != StopCancelled || !strings.Contains(res.Text, "cancelled") {
		t.Errorf("result = %+v", res)
	}
	h.checkInvariants(t)
	if got := statuses(h.store.toolEvents()); !slices.Equal(got, []string{"a=ok", "b=cancelled", "c=cancelled"}) {
		t.Errorf("statuses = %v", got)
	}
	if n := len(h.prov.requests()); n != 1 {
		t.Errorf("%d LLM requests after cancel, want 1", n)
	}
}

func TestCancelParallelBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, Options{}, calls(call("a", "stop", `{}`), call("b", "wait", `{}`)))
	h.addTools(t,
		funcTool{name: "stop", parallel: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			cancel()
			return "", ctx.Err()
		}},
		funcTool{name: "wait", parallel: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}})
	res, err := h.run(ctx, "go")
	if !errors.Is(err, context.Canceled) || res.Stop != StopCancelled {
		t.Fatalf("res %+v err %v", res, err)
	}
	h.checkInvariants(t)
	if got := statuses(h.store.toolEvents()); !slices.Equal(got, []string{"a=cancelled", "b=cancelled"}) {
		t.Errorf("statuses = %v", got)
	}
}

func TestCancelDuringStream(t *testing.T) {
	cases := []struct {
		name    string
		partial string
		want    []string // contents of the stored events
	}{
		{name: "partial text", partial: "The answer i", want: []string{"go", "The answer i [cancelled]"}},
		{name: "nothing streamed", partial: "", want: []string{"go"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := newHarness(t, Options{}, func(ctx context.Context, _ llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
				if tc.partial != "" {
					onDelta(llm.Delta{Content: tc.partial})
				}
				cancel()
				return llm.Response{}, ctx.Err()
			})
			res, err := h.run(ctx, "go")
			if !errors.Is(err, context.Canceled) || res.Stop != StopCancelled {
				t.Fatalf("res %+v err %v", res, err)
			}
			var got []string
			for _, e := range h.store.all() {
				got = append(got, e.Content)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("stored = %q, want %q", got, tc.want)
			}
			h.checkInvariants(t)
		})
	}
}

// barrierTools returns n parallel-safe tools that each wait until all n have started (so a serial
// run times out instead of hanging) and then finish in reverse order.
func barrierTools(n int, finished *[]int) []Tool {
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	tools := make([]Tool, n)
	for i := range n {
		tools[i] = funcTool{name: fmt.Sprintf("p%d", i), parallel: true, run: func(ctx context.Context, _ json.RawMessage) (string, error) {
			mu.Lock()
			started++
			if started == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-ctx.Done():
				return "", fmt.Errorf("not all tools started: %w", ctx.Err())
			}
			if i+1 < n {
				select {
				case <-done[i+1]:
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			mu.Lock()
			*finished = append(*finished, i)
			mu.Unlock()
			close(done[i])
			return fmt.Sprintf("result %d", i), nil
		}}
	}
	return tools
}

func TestParallelBatch(t *testing.T) {
	const n = 4
	var cs []llm.ToolCall
	for i := range n {
		cs = append(cs, call(fmt.Sprintf("c%d", i), fmt.Sprintf("p%d", i), `{}`))
	}
	h := newHarness(t, Options{ToolTimeout: 10 * time.Second}, calls(cs...), text("ok"))
	var finished []int
	h.addTools(t, barrierTools(n, &finished)...)
	if _, err := h.run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	tev := h.store.toolEvents()
	for i, e := range tev {
		if e.ToolCallID != fmt.Sprintf("c%d", i) || e.ToolStatus != StatusOK || e.Content != fmt.Sprintf("result %d", i) {
			t.Errorf("tool event %d = %s %s %q (want model order, ok)", i, e.ToolCallID, e.ToolStatus, e.Content)
		}
	}
	if !slices.Equal(finished, []int{3, 2, 1, 0}) {
		t.Errorf("completion order = %v, want reversed", finished)
	}
}

func TestSerialBatch(t *testing.T) {
	var mu sync.Mutex
	active := 0
	var ran []string
	mk := func(name string, parallel bool) Tool {
		return funcTool{name: name, parallel: parallel, run: func(context.Context, json.RawMessage) (string, error) {
			mu.Lock()
			active++
			if active != 1 {
				mu.Unlock()
				return "", fmt.Errorf("%s ran concurrently with another tool", name)
			}
			ran = append(ran, name)
			mu.Unlock()
			mu.Lock()
			active--
			mu.Unlock()
			return name + " ok", nil
		}}
	}
	h := newHarness(t, Options{}, calls(call("1", "c", `{}`), call("2", "a", `{}`), call("3", "b", `{}`)), text("ok"))
	h.addTools(t, mk("a", true), mk("b", false), mk("c", true))
	if _, err := h.run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	if !slices.Equal(ran, []string{"c", "a", "b"}) {
		t.Errorf("ran %v, want model order c a b", ran)
	}
	if got := statuses(h.store.toolEvents()); !slices.Equal(got, []string{"1=ok", "2=ok", "3=ok"}) {
		t.Errorf("statuses = %v", got)
	}
}

func TestHookOrderAndConflicts(t *testing.T) {
	var order []string
	set := func(name string, prio int, input string) Hook {
		return Hook{Name: name, Stage: StageOnInput, Priority: prio, Fn: func(_ context.Context, d *StageData) (Patch, error) {
			order = append(order, name+"<"+d.Input+">")
			if input == "" {
				return Patch{}, nil
			}
			v := input
			return Patch{Input: &v}, nil
		}}
	}
	hooks := []Hook{
		set("z/low", 1, "from low"),
		set("b/mid", 5, "from b"), // same priority as a/mid: name order, a first, so b loses
		set("a/mid", 5, "from a"),
		set("q/top", 9, ""), // sets nothing
		{Name: "err/hook", Stage: StageOnInput, Priority: 7, Fn: func(context.Context, *StageData) (Patch, error) {
			v := "from failing hook"
			return Patch{Input: &v}, errors.New("broken")
		}},
		{Name: "panic/hook", Stage: StageOnInput, Priority: 8, Fn: func(context.Context, *StageData) (Patch, error) { panic("hook bug") }},
		{Name: "ctx/one", Stage: StagePreAction, Priority: 2, Fn: func(context.Context, *StageData) (Patch, error) {
			return Patch{AppendMessages: []llm.Message{{Role: "system", Content: "note one"}}}, nil
		}},
		{Name: "ctx/two", Stage: StagePreAction, Priority: 1, Fn: func(_ context.Context, d *StageData) (Patch, error) {
			if last := d.Messages[len(d.Messages)-1]; last.Content != "note one" {
				return Patch{}, fmt.Errorf("ctx/two does not see ctx/one's patch: %q", last.Content)
			}
			return Patch{AppendMessages: []llm.Message{{Role: "system", Content: "note two"}}}, nil
		}},
		{Name: "fmt/upper", Stage: StageBeforeOutput, Fn: func(_ context.Context, d *StageData) (Patch, error) {
			v := strings.ToUpper(d.Text)
			return Patch{Text: &v}, nil
		}},
	}
	h := newHarness(t, Options{}, text("answer"))
	for _, hk := range hooks {
		if err := h.a.AddHook(hk); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.run(context.Background(), "orig")
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := []string{"q/top<orig>", "a/mid<orig>", "b/mid<from a>", "z/low<from a>"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("order = %v, want %v", order, wantOrder)
	}
	if got := h.store.all()[0].Content; got != "from a" {
		t.Errorf("stored input = %q, want the highest-priority write", got)
	}
	for _, want := range []string{"hook patch conflict", "loser=b/mid", "loser=z/low", "hook=err/hook", "hook=panic/hook"} {
		if !strings.Contains(h.logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	msgs := h.prov.requests()[0].Messages
	if n := len(msgs); n < 3 || msgs[n-2].Content != "note one" || msgs[n-1].Content != "note two" {
		t.Errorf("pre_action messages not both appended in order: %+v", msgs)
	}
	if res.Text != "ANSWER" {
		t.Errorf("final text = %q", res.Text)
	}
	if got := h.store.all()[1].Content; got != "ANSWER" {
		t.Errorf("stored final = %q", got)
	}
	h.checkInvariants(t)
}

func TestShortCircuit(t *testing.T) {
	reply := func(stage Stage) Hook {
		return Hook{Name: "guard/" + string(stage), Stage: stage, Fn: func(context.Context, *StageData) (Patch, error) {
			v := "blocked at " + string(stage)
			return Patch{Reply: &v}, nil
		}}
	}
	cases := []struct {
		stage    Stage
		requests int
	}{
		{StageOnInput, 0},
		{StagePreAction, 0},
		{StagePostAction, 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.stage), func(t *testing.T) {
			h := newHarness(t, Options{}, calls(call("a", "echo", `{}`)))
			h.addTools(t, echoTool("echo", true))
			if err := h.a.AddHook(reply(tc.stage)); err != nil {
				t.Fatal(err)
			}
			res, err := h.run(context.Background(), "hi")
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != StopShortCircuit || res.Text != "blocked at "+string(tc.stage) {
				t.Errorf("result = %+v", res)
			}
			if n := len(h.prov.requests()); n != tc.requests {
				t.Errorf("%d LLM requests, want %d", n, tc.requests)
			}
			evs := h.store.all()
			if len(evs) != 2 || evs[0].Role != memory.RoleUser || evs[1].Content != res.Text || len(evs[1].ToolCalls) != 0 {
				t.Errorf("stored = %+v", evs)
			}
			h.checkInvariants(t)
		})
	}
}

func TestPostActionEditsToolCalls(t *testing.T) {
	h := newHarness(t, Options{}, calls(call("keep", "echo", `{"a":1}`), call("drop", "echo", `{"a":2}`)), text("ok"))
	h.addTools(t, echoTool("echo", false))
	err := h.a.AddHook(Hook{Name: "filter/calls", Stage: StagePostAction, Fn: func(_ context.Context, d *StageData) (Patch, error) {
		var kept []llm.ToolCall
		for _, c := range d.ToolCalls {
			if c.ID != "drop" {
				kept = append(kept, c)
			}
		}
		return Patch{ToolCalls: &kept}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = h.a.AddHook(Hook{Name: "rewrite/args", Stage: StageBeforeToolCall, Fn: func(context.Context, *StageData) (Patch, error) {
		v := `{"a":42}`
		return Patch{Args: &v}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = h.a.AddHook(Hook{Name: "redact/result", Stage: StageAfterToolCall, Fn: func(_ context.Context, d *StageData) (Patch, error) {
		v := strings.ReplaceAll(d.Result, "42", "**")
		return Patch{Result: &v}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	evs := h.store.all()
	asst := evs[1]
	if len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID != "keep" || asst.ToolCalls[0].Arguments != `{"a":42}` {
		t.Errorf("stored calls = %+v", asst.ToolCalls)
	}
	if tev := h.store.toolEvents(); len(tev) != 1 || tev[0].Content != `echo:{"a":**}` {
		t.Errorf("tool events = %+v", tev)
	}
}

func TestLimits(t *testing.T) {
	loop := func(ctx context.Context, req llm.Request, _ func(llm.Delta)) (llm.Response, error) {
		id := fmt.Sprintf("r%d", len(req.Messages))
		return llm.Response{Message: llm.Message{Role: "assistant", Content: "working", ToolCalls: []llm.ToolCall{call(id, "tick", `{}`)}},
			Usage: llm.Usage{PromptTokens: 50, CompletionTokens: 10, TotalTokens: 60}}, nil
	}
	cases := []struct {
		name     string
		opts     Options
		stop     string
		rounds   int
		wantText string
	}{
		{name: "max rounds", opts: Options{MaxRounds: 3}, stop: StopMaxRounds, rounds: 3, wantText: "stopped after 3 tool rounds (limit 3); ask me to continue"},
		{name: "token budget", opts: Options{TokenBudget: 100}, stop: StopTokenBudget, rounds: 2, wantText: "stopped after using 120 tokens (budget 100 per turn)"},
		{name: "max wall", opts: Options{MaxWall: 90 * time.Second}, stop: StopMaxWall, rounds: 3, wantText: "time limit 1m30s per turn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps := make([]step, 10)
			for i := range steps {
				steps[i] = loop
			}
			h := newHarness(t, tc.opts, steps...)
			h.addTools(t, funcTool{name: "tick", run: func(context.Context, json.RawMessage) (string, error) {
				h.clock.Advance(30 * time.Second)
				return "tock", nil
			}})
			res, err := h.run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != tc.stop || res.Rounds != tc.rounds || !strings.Contains(res.Text, tc.wantText) {
				t.Errorf("result = %+v, want stop %s after %d rounds with %q", res, tc.stop, tc.rounds, tc.wantText)
			}
			evs := h.store.all()
			if last := evs[len(evs)-1]; last.Role != memory.RoleAssistant || last.Content != res.Text {
				t.Errorf("last stored event = %+v", last)
			}
			h.checkInvariants(t)
		})
	}
}

func TestAllDenied(t *testing.T) {
	h := newHarness(t, Options{}, calls(call("a", "echo", `{}`), call("b", "echo", `{}`)))
	h.addTools(t, echoTool("echo", true))
	err := h.a.AddHook(Hook{Name: "policy/no", Stage: StageBeforeToolCall, Fn: func(context.Context, *StageData) (Patch, error) {
		v := "not allowed on this channel"
		return Patch{Deny: &v}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopAllDenied || !strings.Contains(res.Text, "not allowed on this channel") {
		t.Errorf("result = %+v", res)
	}
	if got := statuses(h.store.toolEvents()); !slices.Equal(got, []string{"a=denied", "b=denied"}) {
		t.Errorf("statuses = %v", got)
	}
	h.checkInvariants(t)
}

func TestSelfCheckRepairsHistory(t *testing.T) {
	ev := func(role memory.Role, content, callID string, cs ...memory.ToolCall) memory.Event {
		return memory.Event{Session: testSession, Role: role, Content: content, ToolCallID: callID, ToolCalls: cs}
	}
	batch := []memory.Event{
		ev(memory.RoleUser, "old question", ""),
		ev(memory.RoleAssistant, "", "", memory.ToolCall{ID: "a", Name: "echo"}, memory.ToolCall{ID: "b", Name: "echo"}),
		ev(memory.RoleTool, "ra", "a"),
		ev(memory.RoleTool, "rb", "b"),
		ev(memory.RoleAssistant, "old answer", ""),
	}
	cases := []struct {
		name    string
		history []memory.Event
		limit   int
		want    []string // role:content of the history part of the request
	}{
		{name: "truncated mid-batch", history: batch, limit: 3, want: []string{"assistant:old answer"}},
		{name: "missing result", history: []memory.Event{batch[0], batch[1], batch[2], batch[4]}, limit: 100,
			want: []string{"user:old question", "assistant:", "tool:ra", "tool:" + missingResult, "assistant:old answer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{HistoryLimit: tc.limit}, text("fine"))
			h.store.sessions[testSession] = memory.Session{ID: testSession}
			if _, err := h.store.AppendEvents(context.Background(), tc.history); err != nil {
				t.Fatal(err)
			}
			if _, err := h.run(context.Background(), "new question"); err != nil {
				t.Fatal(err)
			}
			if n := h.a.Repairs(); n != 1 {
				t.Errorf("Repairs() = %d, want 1", n)
			}
			msgs := h.prov.requests()[0].Messages
			var got []string
			for _, m := range msgs[:len(msgs)-1] {
				got = append(got, m.Role+":"+m.Content)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sent history = %q, want %q", got, tc.want)
			}
			if !strings.Contains(h.logs.String(), "violated the tool call pairing") {
				t.Error("repair not logged")
			}
		})
	}
}

func TestBatchRecordsGuard(t *testing.T) {
	h := newHarness(t, Options{})
	tr := &turn{a: h.a, req: TurnRequest{Session: testSession}, emit: func(Event) {}}
	rec := newRecorder([]llm.ToolCall{call("a", "echo", `{}`), call("b", "echo", `{}`)}, tr.emit, 0)
	rec.add(0, "ra", StatusOK)
	evs, msgs := tr.batchRecords("", "", rec)
	if len(evs) != 3 || evs[2].ToolCallID != "b" || evs[2].ToolStatus != StatusSkipped {
		t.Errorf("events = %+v", evs)
	}
	if err := serverPairingCheck(msgs); err != nil {
		t.Error(err)
	}
	if n := h.a.Repairs(); n != 1 {
		t.Errorf("Repairs() = %d, want 1", n)
	}
}

func TestSessions(t *testing.T) {
	prov := &fakeProvider{steps: []step{text("one"), text("two")}}
	var models []string
	h := newHarness(t, Options{Provider: func(model string) (llm.Provider, error) {
		models = append(models, model)
		if model == "none" {
			return nil, fmt.Errorf("model %s: %w", model, llm.ErrNoProvider)
		}
		return prov, nil
	}})
	h.store.sessions["poet"] = memory.Session{ID: "poet", SystemPrompt: "Answer in verse.", Model: "big"}
	h.store.sessions["plain"] = memory.Session{ID: "plain"}
	h.store.sessions["orphan"] = memory.Session{ID: "orphan", Model: "none"}
	for _, id := range []string{"poet", "plain"} {
		if _, err := h.a.Run(context.Background(), TurnRequest{Session: id, Input: "hi"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(models, []string{"big", ""}) {
		t.Errorf("provider asked for %q", models)
	}
	reqs := prov.requests()
	if reqs[0].Model != "big" || reqs[0].Messages[0].Role != "system" || reqs[0].Messages[0].Content != "Answer in verse." {
		t.Errorf("poet request = %+v", reqs[0])
	}
	if reqs[1].Model != "" || reqs[1].Messages[0].Role != "user" {
		t.Errorf("plain request = %+v", reqs[1])
	}
	if _, err := h.a.Run(context.Background(), TurnRequest{Session: "missing", Input: "hi"}, nil); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("missing session: err = %v", err)
	}
	if _, err := h.a.Run(context.Background(), TurnRequest{Session: "orphan", Input: "hi"}, nil); !errors.Is(err, llm.ErrNoProvider) {
		t.Errorf("no provider: err = %v", err)
	}
	h.checkInvariants(t)
}

func TestProviderFailure(t *testing.T) {
	h := newHarness(t, Options{}, func(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
		return llm.Response{}, &llm.APIError{Provider: "fake", Status: 503, Message: "overloaded, try later"}
	})
	_, err := h.run(context.Background(), "hello")
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || !strings.Contains(err.Error(), "overloaded, try later") {
		t.Fatalf("err = %v, want the server's APIError", err)
	}
	if evs := h.store.all(); len(evs) != 1 || evs[0].Role != memory.RoleUser || evs[0].Content != "hello" {
		t.Errorf("stored = %+v, want just the user event", evs)
	}
	h.checkInvariants(t)
}

func TestStreamingEvents(t *testing.T) {
	h := newHarness(t, Options{}, func(_ context.Context, _ llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
		onDelta(llm.Delta{Reasoning: "thinking"})
		onDelta(llm.Delta{Content: "Hel"})
		onDelta(llm.Delta{Content: "lo"})
		return llm.Response{Message: llm.Message{Role: "assistant", Content: "Hello", Reasoning: "thinking"}}, nil
	})
	res, err := h.run(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.emitted() {
		got = append(got, e.Type+":"+e.Text)
	}
	if want := []string{"reasoning:thinking", "delta:Hel", "delta:lo"}; !slices.Equal(got, want) {
		t.Errorf("emitted %v, want %v", got, want)
	}
	if evs := h.store.all(); res.Text != "Hello" || evs[1].Reasoning != "thinking" {
		t.Errorf("result %+v, stored %+v", res, evs[1])
	}
	h.checkInvariants(t)
}

func TestNormalizeCallIDs(t *testing.T) {
	h := newHarness(t, Options{}, calls(call("", "echo", `{"n":1}`), call("dup", "echo", `{"n":2}`), call("dup", "echo", `{"n":3}`)), text("ok"))
	h.addTools(t, echoTool("echo", false))
	if _, err := h.run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	if got := statuses(h.store.toolEvents()); !slices.Equal(got, []string{"call_r1_0=ok", "dup=ok", "call_r1_2=ok"}) {
		t.Errorf("statuses = %v", got)
	}
}

// TestRunStopFromFinishReason: an answer the provider cut at its token limit ends the turn
// with StopLength, a refusal with StopRefusal (ACP's max_tokens and refusal, /v1's "length"
// and "content_filter"); anything else is done.
func TestRunStopFromFinishReason(t *testing.T) {
	for _, tc := range []struct{ finish, want string }{
		{"stop", StopDone}, {"length", StopLength}, {"content_filter", StopRefusal}, {"", StopDone}, {"eos", StopDone},
	} {
		t.Run(tc.finish, func(t *testing.T) {
			h := newHarness(t, Options{}, func(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
				return llm.Response{Message: llm.Message{Role: "assistant", Content: "partial answ"}, FinishReason: tc.finish}, nil
			})
			res, err := h.run(context.Background(), "tell me everything")
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != tc.want || res.Text != "partial answ" {
				t.Errorf("finish %q: result %+v, want stop %q", tc.finish, res, tc.want)
			}
		})
	}
}
