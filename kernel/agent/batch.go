package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
)

// Tool result statuses (memory.Event.ToolStatus and ToolEvent.Status).
const (
	StatusRunning   = "running"
	StatusOK        = "ok"
	StatusError     = "error"
	StatusDenied    = "denied"
	StatusCancelled = "cancelled"
	StatusTimeout   = "timeout"
	StatusSkipped   = "skipped"
)

// outcome is the recorded result of one call.
type outcome struct {
	result string
	status string
	done   bool
	ran    bool       // the tool ran (its result is the tool's, stored in its scope)
	vis    Visibility // the tool's, when it ran
	// full is a result longer than the agent's MaxResultBytes, stored whole as the text block
	// block; result is then its preview.
	full, block string
	images      []llm.Image // the tool's images (AddResultImages), sent and stored with the result
	imageText   []string    // the text read in each image (Options.ImageText), stored with its block
}

// recorder holds the results of one batch, indexed like the model's calls, so they are always
// recorded in the model's order whatever order the calls finish in. It is safe for concurrent use.
type recorder struct {
	mu      sync.Mutex
	calls   []llm.ToolCall // the batch; Arguments are rewritten by before_toolcall
	outs    []outcome
	started []bool
	emit    func(Event)
	max     int // results longer than this are stored as blocks (0: never)
}

func newRecorder(calls []llm.ToolCall, emit func(Event), maxResult int) *recorder {
	return &recorder{calls: calls, outs: make([]outcome, len(calls)), started: make([]bool, len(calls)), emit: emit, max: maxResult}
}

// start announces call i (with its final arguments) as running.
func (r *recorder) start(i int, args string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[i].Arguments = args
	r.startLocked(i)
}

func (r *recorder) startLocked(i int) {
	if r.started[i] {
		return
	}
	r.started[i] = true
	c := r.calls[i]
	r.emit(Event{Type: "tool_call", Tool: &ToolEvent{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Status: StatusRunning}})
}

// add records the result of call i. The first result wins; later ones are ignored.
func (r *recorder) add(i int, result, status string) {
	r.record(i, outcome{result: result, status: status})
}

// addRan is add for the result of a tool that ran: it is stored in the tool's scope narrowed by
// the session's ([ResultScope]).
func (r *recorder) addRan(i int, result, status string, vis Visibility, images []llm.Image, imageText []string) {
	r.record(i, outcome{result: result, status: status, ran: true, vis: vis, images: images, imageText: imageText})
}

func (r *recorder) record(i int, o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outs[i].done {
		return
	}
	r.startLocked(i)
	o.done = true
	if r.max > 0 && len(o.result) > r.max {
		o.full, o.block = o.result, newResultID()
		o.result = resultPreview(o.result, o.block, r.max)
	}
	r.outs[i] = o
	c := r.calls[i]
	r.emit(Event{Type: "tool_result", Tool: &ToolEvent{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Result: o.result, Status: o.status}})
}

// recorded reports whether call i has a result.
func (r *recorder) recorded(i int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outs[i].done
}

// prepared is a call that passed before_toolcall and validation and is ready to run.
type prepared struct {
	entry toolEntry
	call  llm.ToolCall
	args  json.RawMessage
}

// runBatch runs the calls of one assistant message and returns their recorded results. Every
// call gets exactly one result. The batch runs in parallel only when it has more than one call
// and every call names a known parallel-safe tool; otherwise serially.
func (t *turn) runBatch(ctx context.Context, calls []llm.ToolCall, tools map[string]toolEntry) *recorder {
	rec := newRecorder(calls, t.emit, t.a.opts.MaxResultBytes)
	if parallelBatch(calls, tools) {
		preps := make([]*prepared, len(calls))
		for i := range calls {
			preps[i] = t.prepareCall(ctx, rec, i, tools)
		}
		var wg sync.WaitGroup
		outs := make([]outcome, len(calls))
		for i, p := range preps {
			if p == nil {
				continue
			}
			wg.Go(func() { outs[i] = t.a.runTool(ctx, p) })
		}
		wg.Wait()
		for i, p := range preps {
			if p != nil {
				t.finishCall(ctx, rec, i, p, outs[i])
			}
		}
		return rec
	}
	for i := range calls {
		if ctx.Err() != nil {
			rec.add(i, "cancelled: the turn was stopped before this call ran", StatusCancelled) // pairing:record
			continue
		}
		p := t.prepareCall(ctx, rec, i, tools)
		if p == nil {
			continue
		}
		out := t.a.runTool(ctx, p)
		t.finishCall(ctx, rec, i, p, out)
	}
	return rec
}

func parallelBatch(calls []llm.ToolCall, tools map[string]toolEntry) bool {
	if len(calls) < 2 {
		return false
	}
	for _, c := range calls {
		e, ok := tools[c.Name]
		if !ok || !e.tool.ParallelSafe() {
			return false
		}
	}
	return true
}

// prepareCall resolves call i, runs before_toolcall and validates the arguments. It returns nil
// when the call must not run; a result has then been recorded.
func (t *turn) prepareCall(ctx context.Context, rec *recorder, i int, tools map[string]toolEntry) *prepared {
	call := rec.calls[i]
	entry, ok := tools[call.Name]
	if !ok {
		rec.add(i, unknownTool(call.Name, tools, t.req.Scope), StatusError) // pairing:record
		return nil
	}
	if !MayCall(entry.vis, t.req.Scope) {
		rec.add(i, ownerOnlyDenial(call.Name, t.req.Scope), StatusDenied) // pairing:record
		return nil
	}
	d := t.data()
	d.Call = &call
	st := t.a.runStage(ctx, StageBeforeToolCall, d)
	if st.Call != nil {
		call = *st.Call
	}
	rec.start(i, call.Arguments)
	if st.deny != nil {
		rec.add(i, denial(call.Name, *st.deny), StatusDenied) // pairing:record
		return nil
	}
	args, err := validateArgs(entry.spec.Parameters, call.Arguments)
	if err != nil {
		rec.add(i, fmt.Sprintf("invalid arguments for tool %s: %v; parameters schema: %s", call.Name, err, entry.spec.Parameters), StatusError) // pairing:record
		return nil
	}
	return &prepared{entry: entry, call: call, args: args}
}

// finishCall runs after_toolcall over an executed call and records its result.
func (t *turn) finishCall(ctx context.Context, rec *recorder, i int, p *prepared, out outcome) {
	d := t.data()
	d.Call = &p.call
	d.Result, d.ResultStatus = out.result, out.status
	out.result = t.a.runStage(ctx, StageAfterToolCall, d).Result
	rec.addRan(i, out.result, out.status, p.entry.vis, out.images, out.imageText) // pairing:record
}

// unknownTool is the result of a call to a tool nobody registered; it lists the tools a turn
// in scope sc may call (never the owner's to anyone else).
func unknownTool(name string, tools map[string]toolEntry, sc memory.Scope) string {
	names := make([]string, 0, len(tools))
	for _, e := range tools {
		if MayCall(e.vis, sc) {
			names = append(names, e.spec.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf("unknown tool %s; no tools are available", name)
	}
	sort.Strings(names)
	if len(names) > 40 {
		return fmt.Sprintf("unknown tool %s; %d tools are available, among them %s…; %s finds the others", name, len(names), strings.Join(names[:40], ", "), ToolSearchTool)
	}
	return fmt.Sprintf("unknown tool %s; available tools: %s", name, strings.Join(names, ", "))
}

func denial(name, reason string) string {
	if strings.TrimSpace(reason) == "" {
		return fmt.Sprintf("tool %s was denied", name)
	}
	return fmt.Sprintf("tool %s was denied: %s", name, reason)
}

// errToolPanic marks a recovered panic.
var errToolPanic = errors.New("tool panicked")

// runTool executes one prepared call with the tool timeout, recovering panics. It returns when the
// tool returns or its context is done; a tool that ignores its context is left behind (logged).
func (a *Agent) runTool(ctx context.Context, p *prepared) outcome {
	if ctx.Err() != nil {
		return outcome{result: fmt.Sprintf("cancelled: the turn was stopped before tool %s ran", p.call.Name), status: StatusCancelled}
	}
	tctx, cancel := context.WithTimeout(context.WithValue(ctx, callIDKey{}, p.call.ID), a.opts.ToolTimeout)
	defer cancel()
	sink := &imageSink{}
	tctx = context.WithValue(tctx, imageSinkKey{}, sink)
	type ret struct {
		s   string
		err error
	}
	ch := make(chan ret, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- ret{err: fmt.Errorf("%w: %v", errToolPanic, r)}
			}
		}()
		s, err := p.entry.tool.Run(tctx, p.args)
		ch <- ret{s: s, err: err}
	}()
	var r ret
	select {
	case r = <-ch:
	case <-tctx.Done():
		select {
		case r = <-ch:
		default:
			a.log.Warn("tool did not return after its context ended", slog.String("tool", p.call.Name), slog.String("call", p.call.ID))
			r = ret{err: tctx.Err()}
		}
	}
	name := p.call.Name
	switch {
	case errors.Is(r.err, errToolPanic):
		a.log.Error("tool panicked", slog.String("tool", name), slog.Any("err", r.err))
		return outcome{result: fmt.Sprintf("error: tool %s failed: %v", name, r.err), status: StatusError}
	case r.err != nil && ctx.Err() != nil:
		return outcome{result: fmt.Sprintf("cancelled: the turn was stopped while tool %s was running", name), status: StatusCancelled}
	case r.err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded):
		return outcome{result: fmt.Sprintf("timeout: tool %s did not finish within %s", name, a.opts.ToolTimeout), status: StatusTimeout}
	case errors.Is(r.err, ErrToolUnavailable):
		return outcome{result: fmt.Sprintf("error: tool %s is unavailable (its plugin is not running): %v", name, r.err), status: StatusError}
	case r.err != nil:
		return outcome{result: fmt.Sprintf("error: %v", r.err), status: StatusError}
	}
	imgs := sink.taken()
	texts := a.readImages(ctx, imgs)
	return outcome{result: r.s + imageNotes(imgs, texts), status: StatusOK, images: imgs, imageText: texts}
}
