package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/toolwin"
)

func toolNames(ts []llm.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// manyTools are n tools of a big MCP server plus one whose description the test searches for.
func manyTools(n int) []Tool {
	out := make([]Tool, 0, n+1)
	for i := 0; i < n; i++ {
		out = append(out, echoTool(fmt.Sprintf("srv_op_%03d", i), true))
	}
	return append(out, funcTool{name: "zebra_count", run: func(context.Context, json.RawMessage) (string, error) { return "42 zebras", nil }})
}

func TestToolWindow(t *testing.T) {
	h := newHarness(t, Options{},
		calls(call("c1", "srv_op_250", `{}`)),
		calls(call("c2", ToolSearchTool, `{"query":"zebra"}`)),
		calls(call("c3", "zebra_count", `{}`)),
		text("done"),
	)
	h.addTools(t, manyTools(300)...)
	// The visibility filter comes first: srv_op_007 is never offered, found or run.
	h.a.opts.MayCall = func(_ context.Context, _ TurnRequest, ti ToolInfo) bool { return ti.Spec.Name != "srv_op_007" }
	if _, err := h.run(context.Background(), "please run srv_op_250, then srv_op_007"); err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(t)
	reqs := h.prov.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if err := llm.CheckTools(r.Tools); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		names := toolNames(r.Tools)
		if len(names) != toolwin.DefaultMaxTools+1 || !slices.Contains(names, ToolSearchTool) {
			t.Fatalf("request %d offers %d tools (tool_search %v)", i, len(names), slices.Contains(names, ToolSearchTool))
		}
		if !slices.Contains(names, "srv_op_250") {
			t.Errorf("request %d: the tool named in the input is not offered", i)
		}
		if slices.Contains(names, "srv_op_007") {
			t.Errorf("request %d offers a tool the session may not call", i)
		}
		if has := slices.Contains(names, "zebra_count"); has != (i >= 2) {
			t.Errorf("request %d: zebra_count offered %v, want only after tool_search", i, has)
		}
	}
	tev := h.store.toolEvents()
	if tev[1].ToolStatus != StatusOK || !strings.Contains(tev[1].Content, "zebra_count") || tev[2].Content != "42 zebras" {
		t.Fatalf("tool results %q", []string{tev[0].Content, tev[1].Content, tev[2].Content})
	}
	w, ok := h.a.LastWindow(testSession)
	if !ok || w.Round != 4 || w.Sent != 65 || w.Left != 300-64 || len(w.Scores) != 300 {
		t.Fatalf("window report round %d sent %d left %d scores %d", w.Round, w.Sent, w.Left, len(w.Scores))
	}
	reasons := map[string]string{}
	for _, s := range w.Scores {
		reasons[s.Name] = s.Reason
	}
	if reasons["srv_op_250"] != toolwin.ReasonNamed || reasons["zebra_count"] != toolwin.ReasonEnabled {
		t.Fatalf("reasons %q %q", reasons["srv_op_250"], reasons["zebra_count"])
	}
	if _, ok := h.a.LastWindow("other"); ok {
		t.Fatal("a window reported for a session that ran no turn")
	}
}

func TestToolSearchOnlyVisible(t *testing.T) {
	h := newHarness(t, Options{},
		calls(call("c1", ToolSearchTool, `{"query":"zebra"}`)),
		text("done"),
	)
	h.addTools(t, manyTools(100)...)
	h.a.opts.MayCall = func(_ context.Context, _ TurnRequest, ti ToolInfo) bool { return ti.Spec.Name != "zebra_count" }
	if _, err := h.run(context.Background(), "count the zebras"); err != nil {
		t.Fatal(err)
	}
	if tev := h.store.toolEvents(); !strings.Contains(tev[0].Content, "no tool matches") {
		t.Fatalf("tool_search found a tool the session may not call: %q", tev[0].Content)
	}
}

func TestFewToolsNoSearch(t *testing.T) {
	h := newHarness(t, Options{}, text("hi"))
	h.addTools(t, manyTools(5)...)
	if _, err := h.run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if names := toolNames(h.prov.requests()[0].Tools); len(names) != 6 || slices.Contains(names, ToolSearchTool) {
		t.Fatalf("tools %v", names)
	}
}

// TestContextLengthRetry: a provider refusing the request's length gets one retry with half the
// history and fewer tools; a second refusal surfaces.
func TestContextLengthRetry(t *testing.T) {
	tooLong := func(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
		return llm.Response{}, &llm.APIError{Provider: "fake", Status: 400, Message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."}
	}
	for _, tt := range []struct {
		name  string
		steps []step
		err   string
	}{
		{"retried once", []step{tooLong, text("ok")}, ""},
		{"twice surfaces", []step{tooLong, tooLong}, "maximum context length"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Ten earlier exchanges in the session, then the turn the provider refuses.
			var steps []step
			for i := 0; i < 10; i++ {
				steps = append(steps, text(fmt.Sprintf("answer %d", i)))
			}
			h := newHarness(t, Options{}, append(steps, tt.steps...)...)
			h.addTools(t, manyTools(100)...)
			for i := 0; i < 10; i++ {
				if _, err := h.run(context.Background(), fmt.Sprintf("question %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			res, err := h.run(context.Background(), "the long one")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || res.Text != "ok" || res.Rounds != 1 {
				t.Fatalf("res %+v err %v", res, err)
			}
			reqs := h.prov.requests()
			first, retry := reqs[len(reqs)-2], reqs[len(reqs)-1]
			if len(retry.Messages) >= len(first.Messages) || len(retry.Tools) >= len(first.Tools) {
				t.Fatalf("retry: %d messages, %d tools; first: %d, %d", len(retry.Messages), len(retry.Tools), len(first.Messages), len(first.Tools))
			}
			if last := retry.Messages[len(retry.Messages)-1]; last.Content != "the long one" || retry.Messages[0].Role != "system" {
				t.Fatalf("retry lost the input or the system prompt: %+v", retry.Messages)
			}
			if err := serverPairingCheck(retry.Messages); err != nil {
				t.Fatal(err)
			}
		})
	}
}
