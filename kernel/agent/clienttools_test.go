package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// TestClientTools runs a turn whose client brings a tool: the call is streamed as tool_request,
// and the client's answer (or its absence) becomes the recorded result.
func TestClientTools(t *testing.T) {
	read := ClientTool{Name: "editor_read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	cases := []struct {
		name       string
		tools      []ClientTool
		hide       []string
		answer     func(a *Agent, ev Event) // called on tool_request; nil: never answered
		timeout    time.Duration
		cancel     bool // cancel the turn on tool_request instead of answering
		wantStatus string
		wantResult string
		wantErr    string
	}{
		{name: "answered", tools: []ClientTool{read}, answer: func(a *Agent, ev Event) {
			if err := a.AnswerClientCall("turn-1", ev.Tool.ID, ClientAnswer{Content: "the file"}); err != nil {
				t.Error(err)
			}
			if err := a.AnswerClientCall("turn-1", ev.Tool.ID, ClientAnswer{Content: "again"}); !errors.Is(err, ErrNoClientCall) {
				t.Errorf("a second answer: %v", err)
			}
		}, wantStatus: StatusOK, wantResult: "the file"},
		{name: "client error", tools: []ClientTool{read}, answer: func(a *Agent, ev Event) {
			_ = a.AnswerClientCall("turn-1", ev.Tool.ID, ClientAnswer{Content: "no such file", IsError: true})
		}, wantStatus: StatusError, wantResult: "error: no such file"},
		{name: "wrong call id", tools: []ClientTool{read}, timeout: 50 * time.Millisecond, answer: func(a *Agent, ev Event) {
			if err := a.AnswerClientCall("turn-1", "other", ClientAnswer{Content: "x"}); !errors.Is(err, ErrNoClientCall) {
				t.Errorf("an answer to another call: %v", err)
			}
		}, wantStatus: StatusTimeout, wantResult: "did not finish within 50ms"},
		{name: "too long", tools: []ClientTool{read}, timeout: 50 * time.Millisecond, answer: func(a *Agent, ev Event) {
			if err := a.AnswerClientCall("turn-1", ev.Tool.ID, ClientAnswer{Content: strings.Repeat("x", MaxClientResult+1)}); err == nil {
				t.Error("an oversized answer was taken")
			}
		}, wantStatus: StatusTimeout},
		{name: "cancelled", tools: []ClientTool{read}, cancel: true, wantStatus: StatusCancelled, wantErr: "context canceled"},
		{name: "bad name", tools: []ClientTool{{Name: "no spaces allowed"}}, wantErr: "must match"},
		{name: "bad schema", tools: []ClientTool{{Name: "x", Parameters: json.RawMessage(`{"type":"array"}`)}}, wantErr: "must be a schema of type"},
		{name: "duplicate", tools: []ClientTool{read, read}, wantErr: "given twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{ToolTimeout: tc.timeout}, calls(call("c1", "editor_read", `{"path":"a.go"}`)), text("ok"))
			h.addTools(t, echoTool("files_read", false))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			res, err := h.a.Run(ctx, TurnRequest{Session: testSession, TurnID: "turn-1", Input: "read it", ClientTools: tc.tools, HideTools: tc.hide},
				func(ev Event) {
					if ev.Type != "tool_request" {
						return
					}
					if ev.Tool == nil || ev.Tool.ID != "c1" || ev.Tool.Name != "editor_read" || ev.Tool.Arguments != `{"path":"a.go"}` || ev.Tool.Status != "waiting" {
						t.Errorf("tool_request: %+v", ev.Tool)
					}
					if tc.cancel {
						cancel()
						return
					}
					if tc.answer != nil {
						wg.Add(1)
						go func() { defer wg.Done(); tc.answer(h.a, ev) }()
					}
				})
			wg.Wait()
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantStatus == "" {
				return
			}
			h.checkInvariants(t)
			tev := h.store.toolEvents()
			if len(tev) != 1 || tev[0].ToolStatus != tc.wantStatus || !strings.Contains(tev[0].Content, tc.wantResult) {
				t.Fatalf("result %+v, want %s containing %q (stop %s)", tev, tc.wantStatus, tc.wantResult, res.Stop)
			}
			// A timed-out call's tool returns just after the turn moved on: its entry goes then.
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				h.a.clients.mu.Lock()
				n := len(h.a.clients.waiting)
				h.a.clients.mu.Unlock()
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d calls still wait for their client", n)
				}
			}
		})
	}
}

// TestClientToolsOffered checks what the model is offered: the client's tools, not the hidden ones.
func TestClientToolsOffered(t *testing.T) {
	h := newHarness(t, Options{}, text("ok"))
	h.addTools(t, echoTool("files_read", false), echoTool("notes_list", false), echoTool("editor_read", false))
	_, err := h.a.Run(context.Background(), TurnRequest{Session: testSession, TurnID: "turn-1", Input: "hi",
		ClientTools: []ClientTool{{Name: "editor_read", Description: "the editor's"}}, HideTools: []string{"files_read"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range h.prov.requests()[0].Tools {
		names = append(names, tl.Name)
		if tl.Name == "editor_read" && tl.Description != "the editor's" {
			t.Errorf("the registered editor_read was offered instead of the client's: %+v", tl)
		}
	}
	if strings.Contains(strings.Join(names, ","), "files_read") || !strings.Contains(strings.Join(names, ","), "editor_read") || !strings.Contains(strings.Join(names, ","), "notes_list") {
		t.Fatalf("offered %v", names)
	}
}

// TestScopeSource: a source's tools scoped to a session are offered there only, and a call to
// one from another session is an unknown tool.
func TestScopeSource(t *testing.T) {
	cases := []struct {
		name, scopedTo string
		wantOffered    bool
	}{
		{"unscoped", "", true},
		{"this session", testSession, true},
		{"another session", "s2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{}, calls(call("c1", "mcp_echo", `{}`)), text("ok"))
			if err := h.a.AddTool(echoTool("mcp_echo", false), "acp-1-everything"); err != nil {
				t.Fatal(err)
			}
			h.a.ScopeSource("acp-1-everything", c.scopedTo)
			if _, err := h.run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			offered := false
			for _, tl := range h.prov.requests()[0].Tools {
				offered = offered || tl.Name == "mcp_echo"
			}
			tev := h.store.toolEvents()
			if offered != c.wantOffered || len(tev) != 1 || (tev[0].ToolStatus == StatusOK) != c.wantOffered {
				t.Fatalf("offered %v, result %+v", offered, tev)
			}
			if !c.wantOffered && !strings.Contains(tev[0].Content, "unknown tool mcp_echo") {
				t.Fatalf("the call from another session: %q", tev[0].Content)
			}
		})
	}
}

func TestCheckClientTools(t *testing.T) {
	group, _ := memory.ParseScope("group:qq/g1")
	tool := ClientTool{Name: "editor_read"}
	many := make([]string, maxHiddenTools+1)
	cases := []struct {
		name    string
		req     TurnRequest
		wantErr string
	}{
		{"none in a group", TurnRequest{Scope: group}, ""},
		{"owner", TurnRequest{ClientTools: []ClientTool{tool}, HideTools: []string{"files_read"}}, ""},
		{"group's own client's tools", TurnRequest{Scope: group, ClientTools: []ClientTool{tool}}, ""}, // run by the asker's client
		{"group hides", TurnRequest{Scope: group, HideTools: []string{"files_read"}}, "owner's sessions only"},
		{"too many hidden", TurnRequest{HideTools: many}, "hidden tools, at most"},
		{"too many tools", TurnRequest{ClientTools: make([]ClientTool, MaxClientTools+1)}, "client tools, at most"},
	}
	for _, c := range cases {
		err := CheckClientTools(c.req)
		if (err != nil) != (c.wantErr != "") || (err != nil && (!strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, memory.ErrInvalid))) {
			t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
		}
	}
}
