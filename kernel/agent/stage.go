package agent

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Stage names a point of the turn where hooks run.
type Stage string

// Stages, in the order a turn passes them.
const (
	StageOnInput        Stage = "on_input"        // Input may be rewritten; Reply short-circuits
	StageContext        Stage = "context"         // Messages may be replaced or appended to
	StagePreAction      Stage = "pre_action"      // AppendMessages injects data; Reply short-circuits
	StagePostAction     Stage = "post_action"     // after every LLM answer: Text, ToolCalls, Reply
	StageBeforeToolCall Stage = "before_toolcall" // per call: Args rewrites, Deny denies that call
	StageAfterToolCall  Stage = "after_toolcall"  // per executed call: Result rewrites
	StageBeforeOutput   Stage = "before_output"   // final Text formatting
	StageAfterOutput    Stage = "after_output"    // read-only (statistics); patches are ignored
)

func (s Stage) valid() bool {
	switch s {
	case StageOnInput, StageContext, StagePreAction, StagePostAction, StageBeforeToolCall,
		StageAfterToolCall, StageBeforeOutput, StageAfterOutput:
		return true
	}
	return false
}

// Hook is a function run at one stage. Hooks of a stage run one after the other in a
// deterministic order: Priority descending, then Name ascending. Each hook sees the state left by
// the patches of the hooks before it. When a hook sets a field that an earlier (so higher or
// equal priority) hook of the same stage already set, its write is skipped and the conflict is
// logged: the higher priority wins. AppendMessages never conflicts; the lists are concatenated.
// A hook that returns an error or panics is logged and skipped; it never aborts the turn.
type Hook struct {
	Name     string
	Stage    Stage
	Priority int
	Fn       func(ctx context.Context, d *StageData) (Patch, error)
}

// StageData is what a hook sees. Hooks receive a copy; changing it has no effect, only the
// returned [Patch] does.
type StageData struct {
	Stage   Stage
	Session string
	TurnID  string
	Channel string
	Partner string
	Scope   memory.Scope
	Round   int // LLM calls made so far in this turn

	Input     string        // the user input (after on_input)
	Messages  []llm.Message // the message list sent to the model (context, pre_action, later read-only)
	Text      string        // assistant text (post_action) or final text (before/after_output)
	Reasoning string        // reasoning of the last answer (post_action)
	ToolCalls []llm.ToolCall
	Call      *llm.ToolCall // the call at before_toolcall / after_toolcall
	// Result and ResultStatus are the outcome of Call at after_toolcall; the final Stop reason at
	// after_output.
	Result       string
	ResultStatus string
	Usage        llm.Usage // the last answer's usage (post_action) or the turn's (after_output)
}

// Patch is a hook's answer: every non-nil field replaces the matching [StageData] field.
// A field outside its stage is ignored.
type Patch struct {
	Input          *string         // on_input
	Messages       *[]llm.Message  // context: replace the message list
	AppendMessages []llm.Message   // context, pre_action: messages appended to the list
	Text           *string         // post_action, before_output
	ToolCalls      *[]llm.ToolCall // post_action: edit or drop tool calls
	Args           *string         // before_toolcall: replacement JSON arguments
	Deny           *string         // before_toolcall: deny this call; the value is the reason
	Result         *string         // after_toolcall: replacement result
	Reply          *string         // on_input, pre_action, post_action: end the turn with this text
}

// stageState is the result of running one stage.
type stageState struct {
	StageData
	reply *string // set by a Reply patch
	deny  *string // set by a Deny patch
}

func (d *StageData) clone() *StageData {
	c := *d
	c.Messages = slices.Clone(d.Messages)
	c.ToolCalls = slices.Clone(d.ToolCalls)
	if d.Call != nil {
		call := *d.Call
		c.Call = &call
	}
	return &c
}

// runStage runs the hooks of a stage over d and returns the patched state.
func (a *Agent) runStage(ctx context.Context, stage Stage, d StageData) stageState {
	d.Stage = stage
	st := stageState{StageData: d}
	setBy := map[string]string{}
	for _, h := range a.hooksFor(stage) {
		p, err := a.callHook(ctx, h, st.StageData.clone())
		if err != nil {
			a.log.Warn("hook failed; skipped", slog.String("hook", h.Name), slog.String("stage", string(stage)), slog.Any("err", err))
			continue
		}
		if stage == StageAfterOutput {
			continue
		}
		claim := func(field string) bool {
			if winner, ok := setBy[field]; ok {
				a.log.Warn("hook patch conflict; higher priority wins", slog.String("stage", string(stage)),
					slog.String("field", field), slog.String("winner", winner), slog.String("loser", h.Name))
				return false
			}
			setBy[field] = h.Name
			return true
		}
		if p.Input != nil && claim("input") {
			st.Input = *p.Input
		}
		if p.Messages != nil && claim("messages") {
			st.Messages = slices.Clone(*p.Messages)
		}
		if len(p.AppendMessages) > 0 {
			st.Messages = append(st.Messages, p.AppendMessages...)
		}
		if p.Text != nil && claim("text") {
			st.Text = *p.Text
		}
		if p.ToolCalls != nil && claim("tool_calls") {
			st.ToolCalls = slices.Clone(*p.ToolCalls)
		}
		if p.Args != nil && st.Call != nil && claim("args") {
			call := *st.Call
			call.Arguments = *p.Args
			st.Call = &call
		}
		if p.Deny != nil && claim("deny") {
			st.deny = p.Deny
		}
		if p.Result != nil && claim("result") {
			st.Result = *p.Result
		}
		if p.Reply != nil && claim("reply") {
			st.reply = p.Reply
		}
	}
	return st
}

// callHook runs one hook, turning a panic into an error.
func (a *Agent) callHook(ctx context.Context, h Hook, d *StageData) (p Patch, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hook panicked: %v", r)
		}
	}()
	return h.Fn(ctx, d)
}
