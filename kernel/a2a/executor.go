package a2a

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

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

// Execute implements [a2asrv.AgentExecutor]: submitted (a new task), working, then the reply as
// an artifact and the final state (completed, failed, or canceled).
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
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		e.s.mu.Lock()
		e.s.running[ec.TaskID] = cancel
		e.s.mu.Unlock()
		defer func() {
			e.s.mu.Lock()
			delete(e.s.running, ec.TaskID)
			e.s.mu.Unlock()
		}()
		res, err := e.s.turn(tctx, name, text)
		switch {
		case err != nil && tctx.Err() != nil:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentText(ec, "the task was canceled")), nil)
			return
		case err != nil:
			e.s.log.Warn("a2a: turn failed", "peer", name, "task", ec.TaskID, "err", err)
			fail("the agent could not answer: " + err.Error())
			return
		}
		art := a2a.NewArtifactEvent(ec, a2a.NewTextPart(res.Text))
		art.Artifact.Name = "reply"
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentText(ec, res.Text)), nil)
	}
}

// turn runs one turn in the peer's session, creating the session again if the owner deleted it.
func (s *Service) turn(ctx context.Context, name, text string) (client.ChatResult, error) {
	req := client.ChatRequest{Session: SessionID(name), Input: text, Channel: Channel}
	res, err := s.b.Chat(ctx, req, nil)
	if errors.Is(err, client.ErrNotFound) && ctx.Err() == nil {
		if err := s.ensureSession(ctx, name); err != nil {
			return res, err
		}
		res, err = s.b.Chat(ctx, req, nil)
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
