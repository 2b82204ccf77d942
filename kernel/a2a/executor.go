package a2a

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/hologramagent/hologram/kernel/client"
)

// maxInputBytes bounds the text of one A2A message (the kernel's attachment limit applies to
// nothing else here: A2A messages are text).
const maxInputBytes = 256 << 10

// executor runs a peer's message as one agent turn in the peer's session.
type executor struct{ s *Service }

var _ a2asrv.AgentExecutor = executor{}

// textOf joins the text parts of a message; other parts are named, not read.
func textOf(m *a2a.Message) (string, []string) {
	var b strings.Builder
	var skipped []string
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if t, ok := p.Content.(a2a.Text); ok {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(string(t))
			continue
		}
		skipped = append(skipped, p.MediaType)
	}
	return b.String(), skipped
}

func agentText(ti a2a.TaskInfoProvider, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ti, a2a.NewTextPart(text))
}

// Execute implements [a2asrv.AgentExecutor]: submitted (a new task), working, the reply as an
// artifact (streamed in chunks while the model writes it, then whole), and the final state
// (completed, failed or canceled; input-required while the owner's approval waits).
func (e executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.User == nil || !ec.User.Authenticated {
			yield(nil, a2a.ErrUnauthenticated)
			return
		}
		name := ec.User.Name
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		}
		text, skipped := textOf(ec.Message)
		fail := func(msg string) { yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, msg)), nil) }
		switch {
		case strings.TrimSpace(text) == "":
			fail("this agent reads text parts only, and the message has none")
			return
		case len(text) > maxInputBytes:
			fail("the message's text is too long for this agent (at most 256 KiB)")
			return
		}
		if len(skipped) > 0 {
			text += "\n\n(the calling agent also sent " + strings.Join(skipped, ", ") + " parts, which this agent cannot read)"
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		// The turn outlives this execution when it stops at input-required (an approval the
		// owner has to give): it is cancelled only by CancelTask or the end of the kernel.
		tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		e.s.mu.Lock()
		e.s.running[ec.TaskID] = cancel
		e.s.mu.Unlock()
		release := func() {
			cancel()
			e.s.mu.Lock()
			delete(e.s.running, ec.TaskID)
			e.s.mu.Unlock()
		}
		done := make(chan turnResult, 1)
		turnID := make(chan string, 1)
		var (
			mu      sync.Mutex
			pending strings.Builder // reply text not yet sent
		)
		go func() {
			res, err := e.s.turn(tctx, name, text, func(ev client.ChatEvent) {
				switch ev.Type {
				case client.EventTurn:
					select {
					case turnID <- ev.TurnID:
					default:
					}
				case client.EventDelta:
					mu.Lock()
					pending.WriteString(ev.Text)
					mu.Unlock()
				}
			})
			done <- turnResult{res, err}
		}()
		// The reply streams as chunks of one artifact, at most one a tick (each is a write of
		// the task); the final event replaces them with the whole reply.
		var art a2a.ArtifactID
		flush := func() bool {
			mu.Lock()
			chunk := pending.String()
			pending.Reset()
			mu.Unlock()
			if chunk == "" {
				return true
			}
			var ev *a2a.TaskArtifactUpdateEvent
			if art == "" {
				ev = a2a.NewArtifactEvent(ec, a2a.NewTextPart(chunk))
				ev.Artifact.Name = "reply"
				art = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(ec, art, a2a.NewTextPart(chunk))
			}
			return yield(ev, nil)
		}
		tick := time.NewTicker(e.s.approvalPoll)
		defer tick.Stop()
		tid := ""
		for {
			select {
			case r := <-done:
				release()
				for _, ev := range e.s.outcome(ec, name, r, tctx, art) {
					if !yield(ev, nil) {
						return
					}
				}
				return
			case tid = <-turnID:
			case <-tick.C:
				if !flush() {
					release()
					return
				}
				title, ok := e.s.pendingApproval(ctx, tid)
				if !ok {
					continue
				}
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, agentText(ec, "waiting for the owner's approval: "+title)), nil)
				go e.s.finishLater(ec.TaskInfo(), name, done, release, tctx, art)
				return
			case <-ctx.Done(): // the execution was stopped (CancelTask, shutdown)
				release()
				<-done
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentText(ec, "the task was canceled")), nil)
				return
			}
		}
	}
}

type turnResult struct {
	res client.ChatResult
	err error
}

// outcome is the events that end a task whose turn returned r: the whole reply (replacing the
// chunks of artifact art, when some were sent) and the final state.
func (s *Service) outcome(ti a2a.TaskInfoProvider, name string, r turnResult, tctx context.Context, art a2a.ArtifactID) []a2a.Event {
	switch {
	case r.err != nil && tctx.Err() != nil:
		return []a2a.Event{a2a.NewStatusUpdateEvent(ti, a2a.TaskStateCanceled, agentText(ti, "the task was canceled"))}
	case r.err != nil:
		s.log.Warn("a2a: turn failed", "peer", name, "task", ti.TaskInfo().TaskID, "err", r.err)
		return []a2a.Event{a2a.NewStatusUpdateEvent(ti, a2a.TaskStateFailed, agentText(ti, "the agent could not answer: "+r.err.Error()))}
	}
	ev := a2a.NewArtifactEvent(ti, a2a.NewTextPart(r.res.Text))
	if art != "" {
		ev.Artifact.ID = art
	}
	ev.Artifact.Name = "reply"
	ev.LastChunk = true
	return []a2a.Event{ev, a2a.NewStatusUpdateEvent(ti, a2a.TaskStateCompleted, agentText(ti, r.res.Text))}
}

// pendingApproval reports whether the kernel holds an approval for the owner asked in turn tid.
func (s *Service) pendingApproval(ctx context.Context, tid string) (string, bool) {
	if tid == "" || s.approvals == nil {
		return "", false
	}
	aps, err := s.approvals.Approvals(ctx)
	if err != nil {
		return "", false
	}
	for _, ap := range aps {
		if ap.TurnID == tid && ap.State == client.ApprovalPending {
			return ap.Title, true
		}
	}
	return "", false
}

// finishLater waits for a turn whose task stopped at input-required and writes its outcome
// into the task, unless the task moved on meanwhile (cancelled, or continued by the peer).
func (s *Service) finishLater(ti a2a.TaskInfo, name string, done <-chan turnResult, release func(), tctx context.Context, art a2a.ArtifactID) {
	r := <-done
	release()
	ctx := context.Background()
	st, err := s.tasks.Get(ctx, ti.TaskID)
	if err != nil || st.Task.Status.State != a2a.TaskStateInputRequired {
		return
	}
	task := st.Task
	for _, ev := range s.outcome(ti, name, r, tctx, art) {
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			task.Artifacts = slices.DeleteFunc(task.Artifacts, func(a *a2a.Artifact) bool { return a != nil && a.ID == ev.Artifact.ID })
			task.Artifacts = append(task.Artifacts, ev.Artifact)
		case *a2a.TaskStatusUpdateEvent:
			task.Status = ev.Status
		}
	}
	if _, err := s.tasks.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: st.Version}); err != nil {
		s.log.Warn("a2a: the task's outcome after the owner's approval was not stored", "peer", name, "task", ti.TaskID, "err", err)
	}
}

// turn runs one turn in the peer's session, creating the session again if the owner deleted it.
func (s *Service) turn(ctx context.Context, name, text string, emit func(client.ChatEvent)) (client.ChatResult, error) {
	req := client.ChatRequest{Session: SessionID(name), Input: text, Channel: Channel}
	res, err := s.b.Chat(ctx, req, emit)
	if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
		if err := s.ensureSession(ctx, name); err != nil {
			return res, err
		}
		res, err = s.b.Chat(ctx, req, emit)
	}
	return res, err
}

// Cancel implements [a2asrv.AgentExecutor]: the task's turn is cancelled and the task canceled.
func (e executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		e.s.mu.Lock()
		cancel := e.s.running[ec.TaskID]
		e.s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentText(ec, "canceled by the calling agent")), nil)
	}
}
