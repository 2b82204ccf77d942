package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// TurnRequest is one user input to answer.
type TurnRequest struct {
	Session string // required; must exist in the store
	TurnID  string
	Input   string
	Channel string // e.g. "api", "waiter", "qq"
	Partner string
	Scope   memory.Scope
	// Blocks are the input's attachments: new blocks held by the turn's user event. Text
	// blocks reach the model after the input; media blocks by name, MIME type and text.
	Blocks []memory.Block
	// Again, when set, is the id of the stored user event this turn answers again (a
	// regenerated reply): the session's head is that event, Input and Blocks are its own, and
	// no new user event is stored; the reply starts a sibling branch of the old one.
	Again int64
	// ClientTools are tools the turn's client runs itself (clienttools.go); HideTools are
	// registered tools this turn does not offer (those the client's tools stand in for).
	ClientTools []ClientTool
	HideTools   []string
	// Sampling is what the caller asks of the model's replies (an OpenAI client's max_tokens,
	// temperature, top_p, stop, response_format); nil keeps the agent's settings.
	Sampling *Sampling
}

// Sampling are a turn's own model parameters; zero fields keep the agent's.
type Sampling struct {
	MaxTokens      int
	Temperature    *float64
	TopP           *float64
	Stop           []string
	ResponseSchema json.RawMessage // the final reply is one JSON object of this schema
}

// apply sets the turn's parameters on an LLM request.
func (s *Sampling) apply(r *llm.Request) {
	if s == nil {
		return
	}
	if s.MaxTokens > 0 {
		r.MaxTokens = s.MaxTokens
	}
	r.Temperature, r.TopP, r.Stop, r.ResponseSchema = s.Temperature, s.TopP, s.Stop, s.ResponseSchema
}

// Event is a progress report of a running turn. Type is "delta" (assistant text piece),
// "reasoning" (reasoning piece), "tool_call" (a call starts; Tool.Status "running") or
// "tool_result" (a call's result). The final text and errors are Run's return values.
type Event struct {
	Type string
	Text string
	Tool *ToolEvent
}

// ToolEvent describes one tool call in an [Event]. Status is running, ok, error, denied,
// cancelled, timeout or skipped.
type ToolEvent struct {
	ID, Name, Arguments, Result, Status string
}

// Result is the outcome of a turn. Stop is "done", "short_circuit", "all_denied", "cancelled",
// "max_rounds", "max_wall" or "token_budget"; for the limits Text is a message telling the user
// what happened.
type Result struct {
	Text   string
	Rounds int // LLM calls made
	Usage  llm.Usage
	Stop   string
	Model  string // the model that gave the last answer, as the provider named it
}

// Stop reasons of [Result].
const (
	StopDone         = "done"
	StopShortCircuit = "short_circuit"
	StopAllDenied    = "all_denied"
	StopCancelled    = "cancelled"
	StopMaxRounds    = "max_rounds"
	StopMaxWall      = "max_wall"
	StopTokenBudget  = "token_budget"
	// StopLength: the provider cut the answer at its token limit (finish_reason "length").
	StopLength = "length"
	// StopRefusal: the provider refused to answer (finish_reason "content_filter").
	StopRefusal = "refusal"
)

// answerStop is the stop of a round that ends the turn with an answer, from the provider's
// finish_reason.
func answerStop(finish string) string {
	switch finish {
	case "length":
		return StopLength
	case "content_filter":
		return StopRefusal
	}
	return StopDone
}

// cancelledText is the final text of a cancelled turn.
const cancelledText = "cancelled: the turn was stopped before it finished"

// turn is the state of one Run.
type turn struct {
	a     *Agent
	req   TurnRequest
	emit  func(Event)
	start time.Time
	input string
	res   Result
	tools *turnTools
	// client are the turn's client-executed tools (clienttools.go).
	client map[string]toolEntry
}

func (t *turn) data() StageData {
	return StageData{
		Session: t.req.Session, TurnID: t.req.TurnID, Channel: t.req.Channel, Partner: t.req.Partner,
		Scope: t.req.Scope, Round: t.res.Rounds, Input: t.input, Usage: t.res.Usage,
	}
}

// Run answers one input: it runs the stages and the tool loop and persists the turn (the user
// event first, then each tool round atomically, then the final answer). emit receives progress
// events from one goroutine at a time (it may be nil). A call's "tool_call" event comes before
// it runs and its "tool_result" event after it ran; in a parallel batch the results are reported
// after the whole batch finished, in the model's order.
//
// A cancelled ctx stops the turn: the results recorded so far and "cancelled" results for the
// calls not run are committed, and Run returns the Result (Stop "cancelled") with an error
// wrapping ctx's error. When the LLM fails, Run returns an error wrapping the provider's error
// (e.g. *llm.APIError); the user event stays committed.
func (a *Agent) Run(ctx context.Context, req TurnRequest, emit func(Event)) (Result, error) {
	ctx = WithTurn(ctx, req)
	t := &turn{a: a, req: req, emit: serialize(emit), start: a.opts.Clock(), input: req.Input, tools: &turnTools{}}
	ctx = context.WithValue(ctx, turnToolsKey{}, t.tools)
	sess, err := a.opts.Store.GetSession(ctx, req.Session)
	if errors.Is(err, memory.ErrNotFound) {
		return Result{}, fmt.Errorf("unknown session %q: %w", req.Session, err)
	}
	if err != nil {
		return Result{}, fmt.Errorf("get session %q: %w", req.Session, err)
	}
	if t.client, err = t.clientEntries(); err != nil {
		return Result{}, fmt.Errorf("client tools: %w", err)
	}
	provider, err := a.opts.Provider(sess.Model)
	if err != nil {
		return Result{}, fmt.Errorf("resolve provider for model %q: %w", sess.Model, err)
	}

	st := a.runStage(ctx, StageOnInput, t.data())
	t.input = st.Input
	var hist []memory.Event
	if a.opts.Window != nil {
		hist, err = a.opts.Window(ctx, req.Session, t.input)
	} else {
		hist, err = a.opts.Store.History(ctx, req.Session, a.opts.HistoryLimit)
	}
	if err != nil {
		return Result{}, fmt.Errorf("load context: %w", err)
	}
	for i := len(hist) - 1; i >= 0 && len(t.tools.used) < 16; i-- {
		if hist[i].Role == memory.RoleTool && hist[i].ToolName != "" {
			t.tools.used = append(t.tools.used, hist[i].ToolName) // most recent first
		}
	}
	if req.Again != 0 { // the question is stored already; the model sees it once, last
		for _, e := range hist {
			if e.ID == req.Again {
				req.Blocks = e.Blocks // its attachments' text reaches the model again
			}
		}
		// A copy: hist may be shared with the memory engine's explanation of the window, and
		// DeleteFunc moves and clears elements in place.
		hist = slices.DeleteFunc(slices.Clone(hist), func(e memory.Event) bool { return e.ID == req.Again })
	} else {
		user := t.event(memory.RoleUser, t.input)
		user.Blocks = req.Blocks
		if err := t.commit(ctx, user); err != nil {
			return Result{}, err
		}
	}
	if st.reply != nil {
		return t.finish(ctx, *st.reply, "", StopShortCircuit)
	}

	var msgs []llm.Message
	system := sess.SystemPrompt
	if a.opts.BasePrompt != nil {
		if base := strings.TrimSpace(a.opts.BasePrompt(ctx, req.Session, req.Scope)); base != "" && system != "" {
			system = base + "\n\n" + system
		} else if base != "" {
			system = base
		}
	}
	if system != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: system})
	}
	msgs = append(msgs, historyMessages(hist, a.opts.MaxResultBytes)...)
	msgs = append(msgs, llm.Message{Role: "user", Content: inputPreview(t.input, a.opts.MaxResultBytes) + attachmentText(req.Blocks, t.input), Images: blockImages(req.Blocks)})
	d := t.data()
	d.Messages = msgs
	msgs = a.runStage(ctx, StageContext, d).Messages
	d.Messages = msgs
	st = a.runStage(ctx, StagePreAction, d)
	if st.reply != nil {
		return t.finish(ctx, *st.reply, "", StopShortCircuit)
	}
	msgs = st.Messages

	windowText := t.input
	shrunk := false // a context-length error shrinks the request once
	maxTools := 0   // the window's count; 0 = configured
	for {
		if ctx.Err() != nil {
			return t.cancelled(ctx, "")
		}
		if stop, text := t.limit(); stop != "" {
			return t.finish(ctx, text, "", stop)
		}
		msgs = a.selfCheck(msgs)
		tools, specs := t.window(ctx, windowText, maxTools)
		var partial strings.Builder
		onDelta := func(d llm.Delta) {
			if d.Content != "" {
				partial.WriteString(d.Content)
				t.emit(Event{Type: "delta", Text: d.Content})
			}
			if d.Reasoning != "" {
				t.emit(Event{Type: "reasoning", Text: d.Reasoning})
			}
		}
		lreq := llm.Request{Model: sess.Model, Messages: msgs, Tools: specs, MaxTokens: a.opts.MaxTokens}
		req.Sampling.apply(&lreq)
		resp, err := provider.Chat(ctx, lreq, onDelta)
		t.res.Rounds++
		if err != nil {
			if ctx.Err() != nil {
				return t.cancelled(ctx, partial.String())
			}
			if !shrunk && partial.Len() == 0 && contextLengthError(err) {
				shrunk = true
				before := len(msgs)
				msgs = shrinkMessages(msgs)
				maxTools = max(len(specs)/2, 8)
				a.log.Warn("provider refused the request's length; retrying once with less context",
					slog.Int("messages", before), slog.Int("kept", len(msgs)), slog.Int("tools", len(specs)), slog.Int("max_tools", maxTools), slog.Any("err", err))
				t.res.Rounds--
				continue
			}
			return t.res, &ProviderError{Err: fmt.Errorf("llm request (round %d) via %s: %w", t.res.Rounds, provider.Name(), err)}
		}
		t.res.Usage = addUsage(t.res.Usage, resp.Usage)
		if resp.Model != "" {
			t.res.Model = resp.Model
		}

		d := t.data()
		d.Messages = msgs
		d.Text, d.Reasoning, d.ToolCalls, d.Usage = resp.Message.Content, resp.Message.Reasoning, resp.Message.ToolCalls, resp.Usage
		post := a.runStage(ctx, StagePostAction, d)
		if post.reply != nil {
			return t.finish(ctx, *post.reply, post.Reasoning, StopShortCircuit)
		}
		calls := a.normalizeCalls(post.ToolCalls, t.res.Rounds)
		if len(calls) == 0 {
			return t.finish(ctx, post.Text, post.Reasoning, answerStop(resp.FinishReason))
		}

		for _, c := range calls {
			t.tools.use(c.Name)
		}
		if post.Text != "" {
			windowText = t.input + "\n" + post.Text
		}
		rec := t.runBatch(ctx, calls, tools)
		evs, batchMsgs := t.batchRecords(post.Text, post.Reasoning, rec)
		msgs = append(msgs, batchMsgs...)
		if err := t.commit(ctx, evs...); err != nil {
			return t.res, err
		}
		releaseLargeResults(rec)
		if ctx.Err() != nil {
			return t.cancelled(ctx, "")
		}
		if reasons := deniedReasons(rec); len(reasons) == len(rec.calls) {
			text := "I stopped: every tool call was denied (" + strings.Join(reasons, "; ") + ")."
			if strings.TrimSpace(post.Text) != "" {
				text = post.Text + "\n\n" + text
			}
			return t.finish(ctx, text, "", StopAllDenied)
		}
	}
}

// batchRecords turns a finished batch into the events to commit (the assistant event with all
// its calls, then one tool event per call in the model's order) and the matching messages. A call
// without a recorded result is an agent bug: it is logged, counted as a repair and recorded as
// skipped so neither the store nor the model ever sees an unpaired call.
func (t *turn) batchRecords(text, reasoning string, rec *recorder) ([]memory.Event, []llm.Message) {
	asst := t.event(memory.RoleAssistant, text)
	asst.Reasoning = reasoning
	for _, c := range rec.calls {
		asst.ToolCalls = append(asst.ToolCalls, memory.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		asst.Tokens += estimateTokens(c.Name, c.Arguments)
	}
	evs := []memory.Event{asst}
	msgs := []llm.Message{{Role: "assistant", Content: text, ToolCalls: rec.calls}}
	for i := 0; i < len(rec.calls); i++ {
		if !rec.recorded(i) {
			t.a.repairs.Add(1)
			t.a.log.Error("tool call finished without a result; recorded as skipped", slog.String("call", rec.calls[i].ID), slog.String("tool", rec.calls[i].Name))
			rec.add(i, "skipped: no result was recorded for this call", StatusSkipped) // pairing:record
		}
		c, o := rec.calls[i], rec.outs[i]
		evs = append(evs, t.toolEvent(c, o))                                                                  // pairing:record
		msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: c.ID, Content: o.result, Images: o.images}) // pairing:record
	}
	return evs, msgs
}

// deniedReasons returns the results of the denied calls of a batch.
func deniedReasons(rec *recorder) []string {
	var out []string
	for _, o := range rec.outs {
		if o.status == StatusDenied {
			out = append(out, o.result)
		}
	}
	return out
}

// limit reports whether a turn limit is reached before the next LLM call.
func (t *turn) limit() (stop, text string) {
	o := t.a.opts
	switch {
	case t.res.Rounds >= o.MaxRounds:
		return StopMaxRounds, fmt.Sprintf("stopped after %d tool rounds (limit %d); ask me to continue", t.res.Rounds, o.MaxRounds)
	case o.Clock().Sub(t.start) >= o.MaxWall:
		return StopMaxWall, fmt.Sprintf("stopped after %s of work (time limit %s per turn); ask me to continue", o.Clock().Sub(t.start).Round(time.Second), o.MaxWall)
	case o.TokenBudget > 0 && t.res.Usage.TotalTokens >= o.TokenBudget:
		return StopTokenBudget, fmt.Sprintf("stopped after using %d tokens (budget %d per turn); ask me to continue", t.res.Usage.TotalTokens, o.TokenBudget)
	}
	return "", ""
}

// normalizeCalls gives every call a unique, non-empty id so each can be paired with its result.
func (a *Agent) normalizeCalls(calls []llm.ToolCall, round int) []llm.ToolCall {
	out := make([]llm.ToolCall, 0, len(calls))
	seen := map[string]bool{}
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			old := c.ID
			c.ID = fmt.Sprintf("call_r%d_%d", round, i)
			for n := 2; seen[c.ID]; n++ {
				c.ID = fmt.Sprintf("call_r%d_%d_%d", round, i, n)
			}
			a.log.Warn("tool call without a unique id; renamed", slog.String("old", old), slog.String("new", c.ID))
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	return out
}

// finish runs before_output over the final text, commits it, runs after_output and returns.
func (t *turn) finish(ctx context.Context, text, reasoning, stop string) (Result, error) {
	d := t.data()
	d.Text = text
	text = t.a.runStage(ctx, StageBeforeOutput, d).Text
	ev := t.event(memory.RoleAssistant, text)
	ev.Reasoning = reasoning
	if t.res.Rounds > 0 {
		ev.Meta = map[string]string{
			memory.MetaPromptTokens:     strconv.Itoa(t.res.Usage.PromptTokens),
			memory.MetaCompletionTokens: strconv.Itoa(t.res.Usage.CompletionTokens),
			memory.MetaMillis:           strconv.FormatInt(t.a.opts.Clock().Sub(t.start).Milliseconds(), 10),
		}
		if t.res.Model != "" {
			ev.Meta[memory.MetaModel] = t.res.Model
		}
	}
	if err := t.commit(ctx, ev); err != nil {
		return t.res, err
	}
	t.res.Text, t.res.Stop = text, stop
	d = t.data()
	d.Text, d.ResultStatus = text, stop
	t.a.runStage(ctx, StageAfterOutput, d)
	return t.res, nil
}

// cancelled ends a cancelled turn, committing the partial assistant text (if any) with a
// "[cancelled]" marker.
func (t *turn) cancelled(ctx context.Context, partial string) (Result, error) {
	t.res.Text, t.res.Stop = cancelledText, StopCancelled
	if strings.TrimSpace(partial) != "" {
		if err := t.commit(ctx, t.event(memory.RoleAssistant, partial+" [cancelled]")); err != nil {
			return t.res, errors.Join(fmt.Errorf("turn cancelled: %w", ctx.Err()), err)
		}
	}
	return t.res, fmt.Errorf("turn cancelled: %w", ctx.Err())
}

// commit appends evs atomically. It ignores ctx's cancellation so a cancelled turn still records
// what happened.
func (t *turn) commit(ctx context.Context, evs ...memory.Event) error {
	if _, err := t.a.opts.Store.AppendEvents(context.WithoutCancel(ctx), evs); err != nil {
		return fmt.Errorf("commit turn events: %w", err)
	}
	return nil
}

func (t *turn) event(role memory.Role, content string) memory.Event {
	return memory.Event{
		Session: t.req.Session, TurnID: t.req.TurnID, Time: t.a.opts.Clock(), Role: role, Content: content,
		Channel: t.req.Channel, Partner: t.req.Partner, Scope: t.req.Scope, Tokens: estimateTokens(content),
	}
}

// toolEvent is the stored result of a call. A result a tool produced is stored in the
// narrower of the tool's scope and the session's ([ResultScope]); the kernel's own words (a
// denial, an unknown tool, a cancellation before the run) stay in the session's scope.
func (t *turn) toolEvent(c llm.ToolCall, o outcome) memory.Event {
	ev := t.event(memory.RoleTool, o.result)
	ev.ToolCallID, ev.ToolName, ev.ToolStatus = c.ID, c.Name, o.status
	if o.ran {
		ev.Scope = ResultScope(o.vis, t.req.Scope)
	}
	if o.block != "" { // the whole result, in the event's scope (result_read reads only its own)
		ev.Blocks = []memory.Block{{ID: o.block, Kind: memory.BlockText, Name: "result of " + c.Name + " (" + c.ID + ")",
			MIME: "text/plain", Text: o.full}}
	}
	ev.Blocks = append(ev.Blocks, imageBlocks(c.Name, o.images, o.imageText)...)
	return ev
}

func addUsage(a, b llm.Usage) llm.Usage {
	return llm.Usage{
		PromptTokens:     a.PromptTokens + b.PromptTokens,
		CompletionTokens: a.CompletionTokens + b.CompletionTokens,
		TotalTokens:      a.TotalTokens + b.TotalTokens,
	}
}

// serialize makes emit safe to call from several goroutines, one call at a time.
func serialize(emit func(Event)) func(Event) {
	if emit == nil {
		return func(Event) {}
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		emit(e)
	}
}

// maxAttachmentRunes bounds the text of one attachment shown to the model.
const maxAttachmentRunes = 20_000

// attachmentText renders a turn's attachments for the model, after the input.
// A block whose text is the input itself (a voice message's transcript) is not repeated.
func attachmentText(bs []memory.Block, input string) string {
	var b strings.Builder
	for _, bl := range bs {
		name := bl.Name
		if name == "" {
			name = "unnamed"
		}
		switch bl.Kind {
		case memory.BlockText:
			fmt.Fprintf(&b, "\n\n[attached text %q]\n%s", name, truncate(bl.Text, maxAttachmentRunes))
		default:
			size := int64(len(bl.Data))
			if size == 0 { // a stored block, read back without its data
				size = bl.Size
			}
			if bl.Kind == memory.BlockAudio && bl.Text != "" && strings.TrimSpace(bl.Text) == strings.TrimSpace(input) {
				fmt.Fprintf(&b, "\n\n[attached %s %q, %s, %d bytes: the message above is its transcript]", bl.Kind, name, bl.MIME, size)
				continue
			}
			fmt.Fprintf(&b, "\n\n[attached %s %q, %s, %d bytes]", bl.Kind, name, bl.MIME, size)
			if bl.Text != "" {
				fmt.Fprintf(&b, "\n%s", truncate(bl.Text, maxAttachmentRunes))
			}
		}
	}
	return b.String()
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// contextLengthError reports whether err is a provider refusing a request for its length
// (OpenAI's context_length_exceeded and the wordings compatible servers use).
func contextLengthError(err error) bool {
	var ae *llm.APIError
	if !errors.As(err, &ae) || (ae.Status != 400 && ae.Status != 413) {
		return false
	}
	m := strings.ToLower(ae.Message)
	for _, s := range []string{"context length", "context_length", "maximum context", "context window", "too many tokens", "prompt is too long", "reduce the length"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// shrinkMessages drops the older half of the history before the turn's own messages (from its
// user message on), keeping the leading system messages; pairs of tool calls and results are
// dropped whole (a cut starts at a user message).
func shrinkMessages(msgs []llm.Message) []llm.Message {
	sys := 0
	for sys < len(msgs) && msgs[sys].Role == "system" {
		sys++
	}
	lastUser := len(msgs) - 1
	for lastUser > sys && msgs[lastUser].Role != "user" {
		lastUser--
	}
	hist := msgs[sys:lastUser]
	cut := len(hist) / 2
	for cut < len(hist) && hist[cut].Role != "user" {
		cut++
	}
	out := append([]llm.Message(nil), msgs[:sys]...)
	out = append(out, hist[cut:]...)
	return append(out, msgs[lastUser:]...)
}

// ProviderError is a turn that failed because its provider did (an HTTP error answer, a
// network failure, a timeout): the caller's request was fine, the upstream was not. Its message
// is the wrapped error's.
type ProviderError struct{ Err error }

func (e *ProviderError) Error() string { return e.Err.Error() }
func (e *ProviderError) Unwrap() error { return e.Err }
