package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/toolwin"
)

// ToolSearchTool is the name of the meta-tool offered when the tool window leaves tools out: it
// finds tools by words and enables them for the rest of the turn.
const ToolSearchTool = "tool_search"

// maxSearchHits bounds what one tool_search enables.
const maxSearchHits = 8

// WindowReport is the tool window of the last LLM request the agent sent ([Agent.LastWindow]).
type WindowReport struct {
	Session string           `json:"session"`
	TurnID  string           `json:"turn_id"`
	Round   int              `json:"round"`
	Time    time.Time        `json:"time"`
	Sent    int              `json:"sent"`   // tools sent (tool_search included)
	Tokens  int              `json:"tokens"` // their estimated tokens
	Left    int              `json:"left"`   // tools the session may call that were left out
	Scores  []toolwin.Scored `json:"scores"`
}

// turnTools is a turn's state for the window: the tools the model enabled and used.
type turnTools struct {
	mu      sync.Mutex
	enabled []string
	used    []string // most recent first
	visible []llm.Tool
	sent    map[string]bool
}

type turnToolsKey struct{}

func (tt *turnTools) enable(names ...string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for _, n := range names {
		if !contains(tt.enabled, n) {
			tt.enabled = append(tt.enabled, n)
		}
	}
}

func (tt *turnTools) use(names ...string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for _, n := range names {
		tt.used = append([]string{n}, tt.used...)
	}
}

// window chooses the tools of one request: those the session may call (Options.MayCall), then
// the window over them; tool_search joins when some are left out. It returns the tools by name
// that may run in this round (every visible one, sent or not) and the specs to send.
func (t *turn) window(ctx context.Context, text string, maxTools int) (map[string]toolEntry, []llm.Tool) {
	a := t.a
	all, offered := a.toolSnapshot(t.req.Scope, t.req.Session) // the tools the session's scope may call
	refused := func(e toolEntry) bool {
		return a.opts.MayCall != nil && !a.opts.MayCall(ctx, t.req, ToolInfo{Spec: e.spec, ParallelSafe: e.tool.ParallelSafe(), Source: e.source})
	}
	tools := make(map[string]toolEntry, len(all))
	for name, e := range all { // as toolSnapshot gives them: a call checks its visibility itself
		if !refused(e) {
			tools[name] = e
		}
	}
	for _, name := range t.req.HideTools {
		delete(tools, name)
	}
	var visible []llm.Tool
	for _, spec := range offered {
		if _, client := t.client[spec.Name]; client {
			continue
		}
		if e, ok := tools[spec.Name]; ok {
			visible = append(visible, e.spec)
		}
	}
	for name, e := range t.client { // the client's own tools stand in for same-named ones
		tools[name] = e
		visible = append(visible, e.spec)
	}
	sortTools(visible)
	tt := t.tools
	tt.mu.Lock()
	in := toolwin.Input{Text: text, Recent: append([]string(nil), tt.used...), Enabled: append([]string(nil), tt.enabled...),
		Pinned: []string{ResultReadTool}}
	tt.visible = visible
	tt.mu.Unlock()
	opts := a.opts.ToolWindow
	if maxTools > 0 {
		opts.MaxTools = maxTools
	}
	if opts.MaxTools <= 0 || opts.MaxTools > llm.MaxTools-1 {
		opts.MaxTools = min(max(opts.MaxTools, toolwin.DefaultMaxTools), llm.MaxTools-1) // one place for tool_search
	}
	w := toolwin.Select(visible, in, opts)
	specs := w.Tools
	if w.Left > 0 {
		ts := toolSearch{}
		specs = append(specs, ts.Spec())
		tools[ToolSearchTool] = toolEntry{tool: ts, spec: ts.Spec(), source: "agent"}
	}
	sent := make(map[string]bool, len(specs))
	for _, s := range specs {
		sent[s.Name] = true
	}
	tt.mu.Lock()
	tt.sent = sent
	tt.mu.Unlock()
	a.winMu.Lock()
	if a.lastWin == nil {
		a.lastWin = map[string]WindowReport{}
	}
	if _, ok := a.lastWin[t.req.Session]; !ok && len(a.lastWin) >= maxWindowReports {
		oldest := ""
		for s, r := range a.lastWin {
			if oldest == "" || r.Time.Before(a.lastWin[oldest].Time) {
				oldest = s
			}
		}
		delete(a.lastWin, oldest)
	}
	a.lastWin[t.req.Session] = WindowReport{Session: t.req.Session, TurnID: t.req.TurnID, Round: t.res.Rounds + 1, Time: a.opts.Clock(),
		Sent: len(specs), Tokens: w.Tokens, Left: w.Left, Scores: w.Scores}
	a.winMu.Unlock()
	return tools, specs
}

// maxWindowReports bounds the sessions whose last tool window is kept (the oldest goes first).
const maxWindowReports = 64

// LastWindow returns the tool window of the session's last LLM request; false when none was
// sent since New (or it was evicted: the last windows of 64 sessions are kept).
func (a *Agent) LastWindow(session string) (WindowReport, bool) {
	a.winMu.Lock()
	defer a.winMu.Unlock()
	r, ok := a.lastWin[session]
	r.Scores = append([]toolwin.Scored(nil), r.Scores...)
	return r, ok
}

// toolSearch is the tool_search meta-tool; it works on the running turn's state.
type toolSearch struct{}

func (toolSearch) Spec() llm.Tool {
	return llm.Tool{
		Name: ToolSearchTool,
		Description: "Finds tools that were not offered in this request (only the most relevant are) by words of their names " +
			"and descriptions, and enables the best matches for the rest of this turn. Use it when no offered tool fits.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words describing the tool wanted, or its exact name"}},"required":["query"]}`),
	}
}

func (toolSearch) ParallelSafe() bool { return false }

func (toolSearch) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return "", errors.New("tool_search: give a query")
	}
	tt, ok := ctx.Value(turnToolsKey{}).(*turnTools)
	if !ok {
		return "", errors.New("tool_search: not inside a turn")
	}
	tt.mu.Lock()
	visible, sent := tt.visible, tt.sent
	tt.mu.Unlock()
	var candidates []llm.Tool
	for _, t := range visible {
		if !sent[t.Name] {
			candidates = append(candidates, t)
		}
	}
	hits := toolwin.Search(candidates, a.Query, maxSearchHits)
	if len(hits) == 0 {
		return fmt.Sprintf("no tool matches %q among the %d not offered; the offered tools are all there is for it", a.Query, len(candidates)), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "enabled %d tools for the rest of this turn:\n", len(hits))
	for _, h := range hits {
		tt.enable(h.Name)
		fmt.Fprintf(&b, "- %s: %s\n", h.Name, truncate(h.Description, 200))
	}
	return b.String(), nil
}
