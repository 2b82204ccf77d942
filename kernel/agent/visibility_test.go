package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// scopedTool is a funcTool that declares a visibility.
type scopedTool struct {
	funcTool
	vis Visibility
}

func (s scopedTool) Visibility() Visibility { return s.vis }

// TestToolVisibility: in the owner's sessions every tool is offered and runs, its result
// owner-private; elsewhere owner-only tools are neither offered nor run (a call is denied with a
// recorded result) and an `any` tool's result takes the session's scope.
func TestToolVisibility(t *testing.T) {
	owner := memory.Scope{Kind: memory.ScopePrivate}
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "qq/group_1"}
	user := memory.Scope{Kind: memory.ScopeGroup, Group: "user:alice"}
	public := memory.Scope{Kind: memory.ScopePublic}
	secret := "the owner's secret 3141"
	ran := map[string]int{}
	mine := funcTool{name: "notes_read", run: func(context.Context, json.RawMessage) (string, error) { ran["notes_read"]++; return secret, nil }}
	declaredOwner := scopedTool{funcTool{name: "files_read", run: func(context.Context, json.RawMessage) (string, error) {
		ran["files_read"]++
		return secret, nil
	}}, VisibilityOwner}
	anyone := scopedTool{funcTool{name: "time_now", run: func(context.Context, json.RawMessage) (string, error) { ran["time_now"]++; return "noon", nil }}, VisibilityAny}
	bogus := scopedTool{funcTool{name: "bogus", run: func(context.Context, json.RawMessage) (string, error) { ran["bogus"]++; return secret, nil }}, "everyone"}

	for _, tc := range []struct {
		name    string
		scope   memory.Scope
		offered []string
		status  map[string]string // by tool
		stored  map[string]memory.Scope
	}{
		{"owner", owner, []string{"bogus", "files_read", "notes_read", "time_now"},
			map[string]string{"notes_read": StatusOK, "files_read": StatusOK, "time_now": StatusOK, "bogus": StatusOK},
			map[string]memory.Scope{"notes_read": owner, "files_read": owner, "time_now": owner, "bogus": owner}},
		{"group", group, []string{"time_now"},
			map[string]string{"notes_read": StatusDenied, "files_read": StatusDenied, "time_now": StatusOK, "bogus": StatusDenied},
			map[string]memory.Scope{"notes_read": group, "files_read": group, "time_now": group, "bogus": group}},
		{"user", user, []string{"time_now"},
			map[string]string{"notes_read": StatusDenied, "files_read": StatusDenied, "time_now": StatusOK, "bogus": StatusDenied},
			map[string]memory.Scope{"notes_read": user, "files_read": user, "time_now": user, "bogus": user}},
		{"public", public, []string{"time_now"},
			map[string]string{"notes_read": StatusDenied, "files_read": StatusDenied, "time_now": StatusOK, "bogus": StatusDenied},
			map[string]memory.Scope{"notes_read": public, "files_read": public, "time_now": public, "bogus": public}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clear(ran)
			h := newHarness(t, Options{},
				calls(call("c1", "notes_read", `{}`), call("c2", "files_read", `{}`), call("c3", "time_now", `{}`), call("c4", "bogus", `{}`)),
				text("done"))
			h.addTools(t, mine, declaredOwner, anyone, bogus)
			h.store.sessions[testSession] = memory.Session{ID: testSession, Scope: tc.scope}
			_, err := h.a.Run(context.Background(), TurnRequest{Session: testSession, TurnID: "t1", Input: "go", Scope: tc.scope}, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.checkInvariants(t)
			var offered []string
			for _, s := range h.prov.requests()[0].Tools {
				offered = append(offered, s.Name)
			}
			if !slices.Equal(offered, tc.offered) {
				t.Errorf("offered %v, want %v", offered, tc.offered)
			}
			for _, ev := range h.store.toolEvents() {
				if got := ev.ToolStatus; got != tc.status[ev.ToolName] {
					t.Errorf("%s: status %s, want %s (%q)", ev.ToolName, got, tc.status[ev.ToolName], ev.Content)
				}
				if ev.Scope != tc.stored[ev.ToolName] {
					t.Errorf("%s: stored in %s, want %s", ev.ToolName, ev.Scope, tc.stored[ev.ToolName])
				}
				if ev.ToolStatus == StatusDenied && (!strings.Contains(ev.Content, "for the owner only") || ran[ev.ToolName] != 0) {
					t.Errorf("%s: denied %q after %d runs", ev.ToolName, ev.Content, ran[ev.ToolName])
				}
			}
			if !OwnerScope(tc.scope) {
				for _, ev := range h.store.all() {
					if strings.Contains(ev.Content, secret) {
						t.Errorf("owner data in a %s event: %+v", tc.scope, ev)
					}
				}
			}
		})
	}
}

// TestResultScopeNarrows: a result is stored in the narrower of the tool's and the session's
// scope; an unknown tool's result lists only what the session may call.
func TestResultScopeNarrows(t *testing.T) {
	group := memory.Scope{Kind: memory.ScopeGroup, Group: "g"}
	for _, tc := range []struct {
		vis  Visibility
		sess memory.Scope
		want memory.Scope
	}{
		{VisibilityOwner, memory.Scope{}, memory.Scope{}},
		{VisibilityOwner, group, memory.Scope{}},
		{VisibilityAny, group, group},
		{VisibilityAny, memory.Scope{Kind: memory.ScopePublic}, memory.Scope{Kind: memory.ScopePublic}},
		{VisibilityAny, memory.Scope{}, memory.Scope{}},
	} {
		if got := ResultScope(tc.vis, tc.sess); got != tc.want {
			t.Errorf("ResultScope(%s, %s) = %s, want %s", tc.vis, tc.sess, got, tc.want)
		}
	}
	h := newHarness(t, Options{}, calls(call("c1", "nope", `{}`)), text("ok"))
	h.addTools(t, echoTool("notes_read", false), scopedTool{echoTool("time_now", false), VisibilityAny})
	h.store.sessions[testSession] = memory.Session{ID: testSession, Scope: group}
	if _, err := h.a.Run(context.Background(), TurnRequest{Session: testSession, TurnID: "t1", Input: "go", Scope: group}, nil); err != nil {
		t.Fatal(err)
	}
	evs := h.store.toolEvents()
	if len(evs) != 1 || !strings.Contains(evs[0].Content, "available tools: time_now") || strings.Contains(evs[0].Content, "notes_read") {
		t.Fatalf("unknown tool result %+v", evs)
	}
	for _, s := range []string{"", "owner", "any"} {
		if _, err := ParseVisibility(s); err != nil {
			t.Errorf("ParseVisibility(%q): %v", s, err)
		}
	}
	if _, err := ParseVisibility("Any"); err == nil || !strings.Contains(err.Error(), `invalid tool visibility "Any"`) {
		t.Errorf("ParseVisibility(Any): %v", err)
	}
}
