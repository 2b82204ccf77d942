package toolwin

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
)

func tool(name, desc string) llm.Tool {
	return llm.Tool{Name: name, Description: desc, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}

// many returns n generic tools of an MCP server ("srv_op_17: Performs operation 17…").
func many(n int) []llm.Tool {
	out := make([]llm.Tool, n)
	for i := range out {
		out[i] = tool(fmt.Sprintf("srv_op_%03d", i), fmt.Sprintf("Performs generic operation number %d of the test server.", i))
	}
	return out
}

func names(ts []llm.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestSelect(t *testing.T) {
	base := append(many(300),
		tool("notes_create", "Creates a Markdown note with a title and a body."),
		tool("weather_forecast", "Gives the weather forecast for a city."),
		tool("calendar_add", "Adds an event to the calendar."),
		tool("time_now", "Returns the current time."),
	)
	tests := []struct {
		name     string
		tools    []llm.Tool
		in       Input
		opts     Options
		count    int      // tools sent
		in1      []string // must be sent
		out      []string // must not be sent
		reasonOf map[string]string
	}{
		{name: "few tools: all sent", tools: many(10), in: Input{Text: "hi"}, count: 10,
			reasonOf: map[string]string{"srv_op_003": ReasonAll}},
		{name: "304 tools: the default 64", tools: base, in: Input{Text: "what is the weather forecast for Paris"}, count: 64,
			in1: []string{"weather_forecast"}, reasonOf: map[string]string{"weather_forecast": ReasonScore}},
		{name: "named verbatim", tools: base, in: Input{Text: "run srv_op_271 please"}, count: 64,
			in1: []string{"srv_op_271"}, reasonOf: map[string]string{"srv_op_271": ReasonNamed}},
		{name: "a name inside a longer one is not named", tools: base, in: Input{Text: "srv_op_2710"}, count: 64,
			reasonOf: map[string]string{"srv_op_271": ""}},
		{name: "pinned and enabled", tools: base, in: Input{Text: "x", Pinned: []string{"time_now"}, Enabled: []string{"srv_op_299"}},
			count: 64, in1: []string{"time_now", "srv_op_299"},
			reasonOf: map[string]string{"time_now": ReasonPinned, "srv_op_299": ReasonEnabled}},
		{name: "recent use", tools: base, in: Input{Text: "again", Recent: []string{"calendar_add"}}, count: 64, in1: []string{"calendar_add"}},
		{name: "max never over 128", tools: base, in: Input{Text: "operation"}, opts: Options{MaxTools: 500, TokenBudget: 1 << 30}, count: 128},
		{name: "must-haves never over 128", tools: base, in: Input{Text: strings.Join(names(base[:200]), " ")}, count: 128},
		{name: "token budget", tools: base, in: Input{Text: "note"}, opts: Options{TokenBudget: 500}, in1: []string{"notes_create"},
			reasonOf: map[string]string{"srv_op_100": ReasonBudget}},
		{name: "Chinese words", tools: append(many(100), tool("tianqi", "查询城市的天气预报")), in: Input{Text: "北京明天天气怎么样"}, count: 64, in1: []string{"tianqi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Select(tt.tools, tt.in, tt.opts)
			got := names(w.Tools)
			if tt.count > 0 && len(got) != tt.count {
				t.Fatalf("%d tools sent, want %d", len(got), tt.count)
			}
			if len(got) > llm.MaxTools {
				t.Fatalf("%d tools sent", len(got))
			}
			budget := tt.opts.TokenBudget
			if budget == 0 {
				budget = DefaultTokenBudget
			}
			if w.Tokens > budget && len(tt.in.Pinned)+len(tt.in.Enabled) == 0 && !strings.Contains(tt.name, "named") && !strings.Contains(tt.name, "must") {
				t.Fatalf("%d tokens sent, budget %d", w.Tokens, budget)
			}
			for _, n := range tt.in1 {
				if !slices.Contains(got, n) {
					t.Errorf("%s not sent; scores %+v", n, w.Scores[:5])
				}
			}
			if w.Left != len(tt.tools)-len(got) || len(w.Scores) != len(tt.tools) {
				t.Errorf("left %d, scores %d", w.Left, len(w.Scores))
			}
			for n, want := range tt.reasonOf {
				for _, s := range w.Scores {
					if s.Name == n && want != "" && s.Reason != want {
						t.Errorf("%s: reason %q, want %q", n, s.Reason, want)
					}
					if s.Name == n && want == "" && s.Reason == ReasonNamed {
						t.Errorf("%s counted as named", n)
					}
				}
			}
			// Sent tools keep the order they were given in.
			idx := func(n string) int { return slices.IndexFunc(tt.tools, func(t llm.Tool) bool { return t.Name == n }) }
			for i := 1; i < len(got); i++ {
				if idx(got[i-1]) > idx(got[i]) {
					t.Fatalf("order changed: %s before %s", got[i-1], got[i])
				}
			}
		})
	}
}

func TestSearch(t *testing.T) {
	tools := append(many(50), tool("notes_create", "Creates a Markdown note."), tool("notes_search", "Searches the notes by words."))
	tests := []struct {
		query string
		limit int
		want  []string
	}{
		{"search my notes", 5, []string{"notes_search", "notes_create"}},
		{"srv_op_042", 3, []string{"srv_op_042"}},
		{"nothing matches zzz", 5, nil},
	}
	for _, tt := range tests {
		got := names(Search(tools, tt.query, tt.limit))
		if len(got) > tt.limit || (len(tt.want) > 0 && !slices.Equal(got[:len(tt.want)], tt.want)) || (tt.want == nil && len(got) != 0) {
			t.Errorf("Search(%q) = %v, want %v first", tt.query, got, tt.want)
		}
	}
}
