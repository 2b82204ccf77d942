package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
)

func TestToolRegistry(t *testing.T) {
	a := New(Options{})
	for _, tc := range []struct {
		tool    Tool
		source  string
		wantErr string
	}{
		{tool: echoTool("b", true), source: "notes"},
		{tool: echoTool("a", false), source: "notes"},
		{tool: TimeNow(nil), source: "builtin"},
		{tool: echoTool("a", true), source: "other", wantErr: "already registered by notes"},
		{tool: echoTool("", true), source: "x", wantErr: `tool name "" does not match`},
		{tool: echoTool("notes.list", true), source: "x", wantErr: `tool name "notes.list" does not match`},
		{tool: funcTool{name: "bad", params: `{"properties":[`}, source: "x", wantErr: "tool bad: parameters are not JSON"},
		{tool: funcTool{name: "str", params: `{"type":"string"}`}, source: "x", wantErr: `of type "object"`},
		{tool: funcTool{name: "c", params: `{"type":"object","properties":{},"required":null}`}, source: "notes"},
		{tool: nil, source: "x", wantErr: "nil tool"},
	} {
		err := a.AddTool(tc.tool, tc.source)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("AddTool(%v) = %v, want %q", tc.tool, err, tc.wantErr)
		}
	}
	var names []string
	for _, ti := range a.Tools() {
		names = append(names, ti.Spec.Name+"/"+ti.Source)
	}
	if want := []string{"a/notes", "b/notes", "c/notes", "time_now/builtin"}; !slices.Equal(names, want) {
		t.Errorf("Tools() = %v, want %v", names, want)
	}
	for _, ti := range a.Tools() {
		if err := llm.CheckTool(ti.Spec); err != nil {
			t.Errorf("registered tool refused by the validator: %v", err)
		}
	}
	if tl := a.Tools(); tl[0].ParallelSafe || !tl[1].ParallelSafe {
		t.Errorf("ParallelSafe not reported: %+v", tl)
	}
	if n := a.RemoveTools("notes"); n != 3 {
		t.Errorf("RemoveTools = %d, want 3", n)
	}
	if n := a.RemoveTools("notes"); n != 0 {
		t.Errorf("second RemoveTools = %d, want 0", n)
	}
	if tl := a.Tools(); len(tl) != 1 || tl[0].Spec.Name != "time_now" {
		t.Errorf("Tools() after remove = %+v", tl)
	}
}

func TestHookRegistry(t *testing.T) {
	a := New(Options{})
	nop := func(context.Context, *StageData) (Patch, error) { return Patch{}, nil }
	for _, tc := range []struct {
		hook    Hook
		wantErr string
	}{
		{hook: Hook{Name: "qq/auth", Stage: StageOnInput, Fn: nop}},
		{hook: Hook{Name: "qq/auth", Stage: StageAfterOutput, Fn: nop}},
		{hook: Hook{Name: "qq/fmt", Stage: StageBeforeOutput, Fn: nop}},
		{hook: Hook{Name: "audit/log", Stage: StageBeforeToolCall, Fn: nop}},
		{hook: Hook{Name: "qq/auth", Stage: StageOnInput, Fn: nop}, wantErr: "already registered"},
		{hook: Hook{Name: "x", Stage: "sometime", Fn: nop}, wantErr: "unknown stage"},
		{hook: Hook{Name: "", Stage: StageOnInput, Fn: nop}, wantErr: "empty name"},
		{hook: Hook{Name: "y", Stage: StageOnInput}, wantErr: "nil func"},
	} {
		err := a.AddHook(tc.hook)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("AddHook(%s@%s) = %v, want %q", tc.hook.Name, tc.hook.Stage, err, tc.wantErr)
		}
	}
	if n := a.RemoveHooks("qq/"); n != 3 {
		t.Errorf("RemoveHooks = %d, want 3", n)
	}
	if hs := a.hooksFor(StageBeforeToolCall); len(hs) != 1 || hs[0].Name != "audit/log" {
		t.Errorf("remaining hooks = %+v", hs)
	}
	if hs := a.hooksFor(StageOnInput); len(hs) != 0 {
		t.Errorf("on_input hooks left: %+v", hs)
	}
}

func TestValidateArgs(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},` +
		`"b":{"type":"boolean"},"o":{"type":"object"},"l":{"type":"array"},"s":{"type":"string"},"any":{}},"required":["s"]}`)
	cases := []struct {
		name, args, want, wantErr string
	}{
		{name: "all types", args: `{"s":"v","n":2,"x":2.5,"b":false,"o":{},"l":[],"any":null}`, want: `{"s":"v","n":2,"x":2.5,"b":false,"o":{},"l":[],"any":null}`},
		{name: "integer as number", args: `{"s":"v","x":3}`, want: `{"s":"v","x":3}`},
		{name: "lenient false", args: `{"s":"v","b":"false"}`, want: `{"b":false,"s":"v"}`},
		{name: "bad bool string", args: `{"s":"v","b":"yes"}`, wantErr: `property "b" must be boolean, got string`},
		{name: "missing required", args: `{}`, wantErr: `missing required property "s"`},
		{name: "empty is object", args: ` `, wantErr: `missing required property "s"`},
		{name: "string for object", args: `{"s":"v","o":"{}"}`, wantErr: `property "o" must be object, got string`},
		{name: "null", args: `null`, wantErr: "not a JSON object"},
		{name: "garbage", args: `{"s":`, wantErr: "not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := validateArgs(params, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestTimeNow(t *testing.T) {
	fixed := time.Date(2025, 1, 5, 23, 30, 0, 0, time.UTC) // a Sunday in UTC, Monday in Shanghai
	tool := TimeNow(func() time.Time { return fixed })
	if s := tool.Spec(); s.Name != "time_now" || !tool.ParallelSafe() || !json.Valid(s.Parameters) {
		t.Errorf("spec = %+v", s)
	}
	cases := []struct {
		name, args, want, wantErr string
	}{
		{name: "shanghai", args: `{"timezone":"Asia/Shanghai"}`, want: "2025-01-06T07:30:00+08:00 (Monday, time zone Asia/Shanghai CST)"},
		{name: "utc", args: `{"timezone":"UTC"}`, want: "2025-01-05T23:30:00Z (Sunday, time zone UTC UTC)"},
		{name: "local", args: `{}`, want: fixed.Local().Format(time.RFC3339) + " (" + fixed.Local().Weekday().String()},
		{name: "unknown zone", args: `{"timezone":"Mars/Olympus"}`, wantErr: `unknown time zone "Mars/Olympus"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tool.Run(context.Background(), json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, %v; want prefix %q", got, err, tc.want)
			}
		})
	}
}

func TestTimeNowUnknownZoneInTurn(t *testing.T) {
	h := newHarness(t, Options{}, calls(call("z", "time_now", `{"timezone":"Nowhere/City"}`)), text("sorry"))
	h.addTools(t, TimeNow(h.clock.Now))
	if _, err := h.run(context.Background(), "time?"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	if tev := h.store.toolEvents(); len(tev) != 1 || tev[0].ToolStatus != StatusError || !strings.Contains(tev[0].Content, "unknown time zone") {
		t.Errorf("tool events = %+v", tev)
	}
}

var _ llm.Provider = (*fakeProvider)(nil)

func TestReplaceToolsIsAtomic(t *testing.T) {
	a := New(Options{})
	mk := func(name string) Tool { return funcTool{name: name} }
	if err := a.AddTool(mk("mine"), "builtin"); err != nil {
		t.Fatal(err)
	}
	if err := a.ReplaceTools("p", []Tool{mk("a"), mk("b")}); err != nil {
		t.Fatal(err)
	}
	if err := a.ReplaceTools("p", []Tool{mk("b"), mk("c")}); err != nil {
		t.Fatal(err)
	}
	names := func() (out []string) {
		for _, ti := range a.Tools() {
			out = append(out, ti.Source+":"+ti.Spec.Name)
		}
		return out
	}
	if got := fmt.Sprint(names()); got != "[p:b p:c builtin:mine]" {
		t.Fatalf("tools %s", got)
	}
	// A clash with another source or inside the set changes nothing.
	for _, bad := range [][]Tool{{mk("d"), mk("mine")}, {mk("d"), mk("d")}} {
		if err := a.ReplaceTools("p", bad); err == nil {
			t.Fatalf("ReplaceTools(%v) succeeded", bad)
		}
		if got := fmt.Sprint(names()); got != "[p:b p:c builtin:mine]" {
			t.Fatalf("a failed replace changed the tools: %s", got)
		}
	}
	// A tool whose schema cannot be made valid is left out; the plugin's other tools stay.
	bad := funcTool{name: "e", params: `{"type":"string"}`}
	if err := a.ReplaceTools("p", []Tool{mk("b"), bad, funcTool{name: "f", params: `{"type":"object","required":null}`}}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(names()); got != "[p:b p:f builtin:mine]" {
		t.Fatalf("tools after a replace with an invalid schema: %s", got)
	}
}
