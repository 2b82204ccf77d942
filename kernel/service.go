package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/memory"
)

// defaultSession is the session used when a request names none.
const defaultSession = "main"

var sessionIDRe = regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,128}$`)

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// invalid builds an error the API maps to 400.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", client.ErrInvalid, fmt.Sprintf(format, args...))
}

// mapErr translates store and LLM sentinels into client sentinels, keeping the message.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, memory.ErrNotFound) && !errors.Is(err, client.ErrNotFound):
		return fmt.Errorf("%w: %w", client.ErrNotFound, err)
	case errors.Is(err, memory.ErrExists), errors.Is(err, memory.ErrInvalid):
		return fmt.Errorf("%w: %w", client.ErrInvalid, err)
	case errors.Is(err, llm.ErrNoProvider):
		return fmt.Errorf("%w: %w", client.ErrUnavailable, err)
	case errors.Is(err, ErrClosing):
		return fmt.Errorf("%w: %w", client.ErrUnavailable, err)
	}
	return err
}

// Health implements client.Service.
func (k systemRole) Health(ctx context.Context) (client.Health, error) {
	return client.Health{OK: true, Version: Version, Ready: k.state.Complete()}, nil
}

// Status implements client.Service.
func (k systemRole) Status(ctx context.Context) (client.Status, error) {
	sessions, err := k.store.ListSessions(ctx)
	if err != nil {
		return client.Status{}, mapErr(err)
	}
	markLazy(k.Kernel)
	snap := k.state.Snapshot()
	k.provMu.Lock()
	np := len(k.providers)
	k.provMu.Unlock()
	k.turnMu.Lock()
	active := len(k.turns)
	k.turnMu.Unlock()
	emb := k.embeddingStatus()
	return client.Status{
		Version:        Version,
		PID:            os.Getpid(),
		DataDir:        k.cfg.DataDir,
		Socket:         k.cfg.Socket,
		Started:        k.started,
		Providers:      np,
		Sessions:       len(sessions),
		Tools:          len(k.agent.Tools()),
		Ready:          snap.Ready,
		Pending:        snap.Pending,
		ActiveTurns:    active,
		Paused:         k.paused.Load(),
		Embedding:      &emb,
		MaxUploadBytes: k.uploads.Max(),
	}, nil
}

// Chat implements client.Service: one agent turn, streamed through emit.
func (k chatRole) Chat(ctx context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
	input := strings.TrimSpace(sanitize(req.Input))
	if input == "" && req.Regenerate == 0 && !memadmin.HasAudio(req.Attachments) {
		return client.ChatResult{}, invalid("input is empty")
	}
	session := req.Session
	if session == "" {
		session = defaultSession
	}
	sess, err := k.store.GetSession(ctx, session)
	if err != nil {
		if errors.Is(err, memory.ErrNotFound) {
			return client.ChatResult{}, fmt.Errorf("%w: unknown session %q (create it with `waiter session new %s`)", client.ErrNotFound, session, session)
		}
		return client.ChatResult{}, mapErr(err)
	}
	if err := k.refusePaused(sess); err != nil {
		return client.ChatResult{}, err
	}
	if err := k.checkProvider(sess.Model); err != nil {
		return client.ChatResult{}, err
	}
	channel := req.Channel
	if channel == "" {
		channel = "api"
	}
	if sess.Channel != "" {
		channel = sess.Channel
	}
	blocks, vnotes, err := memadmin.MediaBlocks(ctx, req.Attachments, k.uploads) // videos become keyframe images
	if err != nil {
		return client.ChatResult{}, err
	}
	k.ocr.Blocks(ctx, blocks)
	said, notes := k.stt.Blocks(ctx, blocks)
	var transcript string
	if req.Regenerate == 0 {
		if input == "" && len(said) > 0 {
			transcript = memadmin.VoiceInput(input, said)
		}
		input = memadmin.VoiceInput(input, said)
	}
	emit = memadmin.WithNotices(emit, transcript, append(vnotes, notes...))
	var again int64
	var move func(context.Context) error
	if req.Regenerate != 0 || req.Edit != 0 { // a new branch, made under the session's lock
		if input, again, move, err = k.admin.BranchMove(ctx, session, req.Regenerate, req.Edit, input, len(req.Attachments) > 0); err != nil {
			return client.ChatResult{}, err
		}
	}
	tr := agent.TurnRequest{Session: session, Input: input, Channel: channel, Partner: sess.Partner, Scope: sess.Scope, Blocks: blocks, HideTools: req.HideTools,
		Again: again}
	for _, t := range req.ClientTools { // tools the client runs itself, checked by the agent (docs/api.md)
		tr.ClientTools = append(tr.ClientTools, agent.ClientTool(t))
	}
	return k.runTurn(ctx, tr, move, emit)
}

// checkProvider fails early, before a turn starts streaming, when no provider can answer: so
// the HTTP API can answer 503 instead of opening a stream that only carries the error.
func (k *Kernel) checkProvider(model string) error {
	_, err := k.resolveProvider(model)
	return mapErr(err)
}

// runTurn registers a turn (for Cancel and Drain), serialises turns per session and runs the
// agent, after move (when set: a regenerate's or an edit's branch move) under the session's lock.
func (k *Kernel) runTurn(ctx context.Context, tr agent.TurnRequest, move func(context.Context) error, emit func(client.ChatEvent)) (client.ChatResult, error) {
	if emit == nil {
		emit = func(client.ChatEvent) {}
	}
	tr.TurnID = newID("t")
	emit, unbind := k.plugins.approvals.bindTurn(tr.TurnID, emit, agent.OwnerScope(tr.Scope)) // approvals asked in the owner's turn show in its stream
	defer unbind()
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	k.turnMu.Lock()
	if k.closing {
		k.turnMu.Unlock()
		return client.ChatResult{}, mapErr(ErrClosing)
	}
	k.turns[tr.TurnID] = &turn{id: tr.TurnID, session: tr.Session, cancel: cancel}
	k.turnWG.Add(1)
	k.turnMu.Unlock()
	lock := k.admin.SessionLock(tr.Session)
	defer func() {
		k.turnMu.Lock()
		delete(k.turns, tr.TurnID)
		k.turnMu.Unlock()
		k.turnWG.Done()
	}()
	lock.Lock()
	defer lock.Unlock()
	if move != nil {
		if err := move(tctx); err != nil {
			return client.ChatResult{}, err
		}
	}

	emit(client.ChatEvent{Type: client.EventTurn, TurnID: tr.TurnID, Session: tr.Session})
	k.publish("turn_started", map[string]any{"turn_id": tr.TurnID, "session": tr.Session, "channel": tr.Channel})
	started := k.clock()
	missing := k.plugins.waitStarted(tctx)
	res, err := k.agent.Run(tctx, tr, func(ev agent.Event) {
		ce := client.ChatEvent{Type: ev.Type, TurnID: tr.TurnID, Session: tr.Session, Text: ev.Text}
		if ev.Tool != nil {
			ce.Tool = &client.ToolEvent{ID: ev.Tool.ID, Name: ev.Tool.Name, Arguments: ev.Tool.Arguments, Result: ev.Tool.Result, Status: ev.Tool.Status}
		}
		emit(ce)
	})
	if len(missing) > 0 { // the turn ran without the tools of plugins still starting: it says so
		res.Text += fmt.Sprintf("\n\n(still starting, their tools were not offered: %s)", strings.Join(missing, ", "))
	}
	out := client.ChatResult{TurnID: tr.TurnID, Session: tr.Session, Text: res.Text, Stop: res.Stop}
	out.Usage = memadmin.Usage(res.Rounds, res.Usage.PromptTokens, res.Usage.CompletionTokens, k.clock().Sub(started))
	if err != nil {
		if cause := context.Cause(tctx); cause != nil && errors.Is(cause, ErrClosing) {
			err = fmt.Errorf("turn cancelled: %w", ErrClosing)
		} else if errors.Is(err, context.Canceled) {
			err = fmt.Errorf("turn cancelled: %w", err)
		}
		err = mapErr(err)
		emit(client.ChatEvent{Type: client.EventError, TurnID: tr.TurnID, Session: tr.Session, Text: err.Error()})
		k.publish("turn_failed", map[string]any{"turn_id": tr.TurnID, "session": tr.Session, "error": err.Error()})
		return out, err
	}
	emit(client.ChatEvent{Type: client.EventFinal, TurnID: tr.TurnID, Session: tr.Session, Text: res.Text, Stop: res.Stop, Usage: out.Usage})
	k.publish("turn_finished", map[string]any{"turn_id": tr.TurnID, "session": tr.Session, "stop": res.Stop, "rounds": res.Rounds})
	return out, nil
}

func (k *Kernel) publish(typ string, payload map[string]any) {
	if err := k.bus.Publish(events.Event{Type: typ, Publisher: events.Publisher{Kind: events.KindKernel, Name: "kernel"}, Payload: payload}); err != nil {
		k.log.Warn("event not published", "type", typ, "err", err)
	}
}

// Cancel implements client.Service.
func (k chatRole) Cancel(ctx context.Context, turnID string) error {
	k.turnMu.Lock()
	t := k.turns[turnID]
	k.turnMu.Unlock()
	if t == nil {
		return fmt.Errorf("%w: no running turn %q", client.ErrNotFound, turnID)
	}
	t.cancel(context.Canceled)
	return nil
}

// Upload implements client.Service: a file streamed ahead of its message (kernel/uploads).
func (k chatRole) Upload(ctx context.Context, req client.UploadRequest, r io.Reader) (client.Upload, error) {
	return k.uploads.Put(ctx, req, r)
}

// AnswerToolCall implements client.Service: a client's answer to a call of its own tool.
func (k chatRole) AnswerToolCall(ctx context.Context, turnID, callID string, a client.ToolAnswer) error {
	ans := agent.ClientAnswer{Content: sanitize(a.Content), IsError: a.IsError}
	for i, im := range a.Images {
		name := im.Name
		if name == "" {
			name = fmt.Sprintf("image %d of call %s", i+1, callID)
		}
		ans.Images = append(ans.Images, llm.Image{MIME: im.MIME, Data: im.Data, Name: sanitize(name)})
	}
	return mapErr(k.agent.AnswerClientCall(turnID, callID, ans))
}

func toClientSession(s memory.Session) client.Session {
	return client.Session{ID: s.ID, Title: s.Title, SystemPrompt: s.SystemPrompt, Model: s.Model, Created: s.Created, Updated: s.Updated,
		Channel: s.Channel, Partner: s.Partner, Scope: s.Scope.String()}
}

// Sessions implements client.Service.
func (k sessionRole) Sessions(ctx context.Context) ([]client.Session, error) {
	ss, err := k.store.ListSessions(ctx)
	if err != nil {
		return nil, mapErr(err)
	}
	if ss, err = k.withoutDeleted(ctx, ss); err != nil {
		return nil, err
	}
	out := make([]client.Session, 0, len(ss))
	for _, s := range ss {
		out = append(out, toClientSession(s))
	}
	return out, nil
}

// CreateSession implements client.Service.
func (k sessionRole) CreateSession(ctx context.Context, s client.Session) (client.Session, error) {
	if s.ID == "" {
		s.ID = newID("s")
	}
	if !sessionIDRe.MatchString(s.ID) {
		return client.Session{}, invalid("invalid session id %q (letters, digits and . _ : @ -, at most 128)", s.ID)
	}
	if s.Title == "" {
		s.Title = s.ID
	}
	scope, err := memory.ParseScope(s.Scope)
	if err != nil {
		return client.Session{}, invalid("%v", err)
	}
	ms, err := k.store.CreateSession(ctx, memory.Session{ID: s.ID, Title: s.Title, SystemPrompt: s.SystemPrompt, Model: s.Model,
		Channel: s.Channel, Partner: s.Partner, Scope: scope})
	if err != nil {
		return client.Session{}, mapErr(err)
	}
	return toClientSession(ms), nil
}

func (k *Kernel) ensureSession(ctx context.Context, id, title string) (memory.Session, error) {
	s, err := k.store.GetSession(ctx, id)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, memory.ErrNotFound) {
		return memory.Session{}, err
	}
	s, err = k.store.CreateSession(ctx, memory.Session{ID: id, Title: title})
	if errors.Is(err, memory.ErrExists) {
		return k.store.GetSession(ctx, id)
	}
	return s, err
}

// SetInstructions implements client.Service.
func (k sessionRole) SetInstructions(ctx context.Context, id string, in client.Instructions) (client.Session, error) {
	s, err := k.store.GetSession(ctx, id)
	if err != nil {
		return client.Session{}, mapErr(err)
	}
	s.SystemPrompt, s.Model = in.SystemPrompt, in.Model
	s, err = k.store.UpdateSession(ctx, s)
	if err != nil {
		return client.Session{}, mapErr(err)
	}
	return toClientSession(s), nil
}

// History implements client.Service.
func (k sessionRole) History(ctx context.Context, id string, limit int) ([]client.Message, error) {
	return k.admin.History(ctx, id, limit)
}

// Tools implements client.Service.
func (k pluginRole) Tools(ctx context.Context) ([]client.Tool, error) {
	ts := k.agent.Tools()
	out := make([]client.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, client.Tool{Name: t.Spec.Name, Description: t.Spec.Description, Parameters: t.Spec.Parameters,
			ParallelSafe: t.ParallelSafe, Source: t.Source, Visibility: string(t.Visibility)})
	}
	return out, nil
}
