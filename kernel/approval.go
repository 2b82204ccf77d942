package kernel

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/plugins/protocol"
)

// Events the kernel publishes about approvals (ARCHITECTURE.md §5): the desktop shows a dialog
// or a notification for each request.
const (
	EventApprovalRequested = "approval_requested" // payload: the approval's fields
	EventApprovalAnswered  = "approval_answered"  // payload: id, plugin, state, reason
)

// Bounds of an approval request.
const (
	maxApprovalTitle  = 200  // runes
	maxApprovalDetail = 8000 // runes
	// approvalMargin is left of a tool call's time for the plugin to record the denial when the
	// approval ends with the call's deadline.
	approvalMargin = 2 * time.Second
	// minApprovalWait is the least an approval waits when the call's deadline is near.
	minApprovalWait = time.Second
)

// approvals holds the plugins' pending requests for the owner's approval and the live streams
// of the owner's turns they are shown in. Only the owner's clients answer them (the API's
// routes, the in-process GUI): nothing a channel delivers reaches [approvals.answer]. Safe for
// concurrent use.
type approvals struct {
	k       *Kernel
	timeout time.Duration

	mu      sync.Mutex
	after   func(time.Duration) <-chan time.Time // time.After; tests fire timeouts themselves
	pending map[string]*approval
	streams map[string]func(client.ChatEvent) // turn id → the owner's live stream of that turn
}

// approval is one pending request.
type approval struct {
	client.Approval
	answered chan struct{} // closed when the owner answered (State says how)
}

// newApprovals returns the approvals of k with the configured timeout.
func newApprovals(k *Kernel, cfg config.AgentConfig) *approvals {
	timeout := cfg.ApprovalTimeout.Duration
	if timeout <= 0 {
		timeout = config.DefaultApprovalTimeout
	}
	return &approvals{k: k, timeout: timeout, after: time.After, pending: map[string]*approval{},
		streams: map[string]func(client.ChatEvent){}}
}

// bindTurn makes emit, a turn's live stream, the place where approvals asked in that turn are
// shown, and returns the emit the turn must use from then on (serialised with the approvals'
// events) and the func that unbinds it. A nil emit (a channel's turn) or a turn that is not the
// owner's (a group's, a /v1 end user's) binds nothing: an approval asked there goes to the
// owner's clients only, never to the people of that conversation.
func (a *approvals) bindTurn(turnID string, emit func(client.ChatEvent), owner bool) (func(client.ChatEvent), func()) {
	if emit == nil {
		return func(client.ChatEvent) {}, func() {}
	}
	if !owner {
		return emit, func() {}
	}
	var mu sync.Mutex
	serial := func(ev client.ChatEvent) {
		mu.Lock()
		defer mu.Unlock()
		emit(ev)
	}
	a.mu.Lock()
	a.streams[turnID] = serial
	a.mu.Unlock()
	return serial, func() {
		a.mu.Lock()
		delete(a.streams, turnID)
		a.mu.Unlock()
	}
}

// setAfter replaces the timer of the approval timeouts (tests).
func (a *approvals) setAfter(after func(time.Duration) <-chan time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.after = after
}

// request is what a plugin asks, checked.
type request struct {
	plugin, title, detail string
	timeout               time.Duration
	turn                  string
	session, channel      string
	partner, scope        string
}

// ask registers r, shows it to the owner and waits for the answer, the timeout or the end of
// ctx (the plugin stopped waiting: an error).
func (a *approvals) ask(ctx context.Context, r request) (protocol.ApproveResult, error) {
	k := a.k
	now := k.clock()
	ap := &approval{answered: make(chan struct{}), Approval: client.Approval{
		ID: newID("ap"), Plugin: r.plugin, Title: r.title, Detail: r.detail, TurnID: r.turn, Session: r.session,
		Channel: r.channel, Partner: r.partner, Scope: r.scope, Created: now, Expires: now.Add(r.timeout),
		State: client.ApprovalPending,
	}}
	a.mu.Lock()
	a.pending[ap.ID] = ap
	stream := a.streams[r.turn]
	after := a.after
	snapshot := ap.Approval
	a.mu.Unlock()
	timer := after(r.timeout)

	k.log.Info("approval requested", "id", ap.ID, "plugin", r.plugin, "title", r.title, "turn", r.turn, "session", r.session,
		"channel", r.channel, "timeout", r.timeout)
	k.publish(EventApprovalRequested, approvalPayload(snapshot))
	if stream != nil {
		stream(client.ChatEvent{Type: client.EventApproval, TurnID: r.turn, Session: r.session, Approval: &snapshot})
	}

	var (
		state, reason string
		err           error
	)
	select {
	case <-ap.answered:
	case <-timer:
	case <-ctx.Done():
		err = fmt.Errorf("approval %s: the plugin stopped waiting: %w", ap.ID, ctx.Err())
	}
	a.mu.Lock()
	if ap.State == client.ApprovalPending { // not answered: it ends now, as a denial
		delete(a.pending, ap.ID)
		ap.State = client.ApprovalExpired
		if err != nil {
			ap.State = client.ApprovalCancelled
		}
	} else {
		err = nil // the owner answered first
	}
	state = ap.State
	final := ap.Approval
	stream = a.streams[r.turn]
	a.mu.Unlock()

	approved := state == client.ApprovalApproved
	switch state {
	case client.ApprovalApproved:
		reason = "approved by the owner"
	case client.ApprovalDenied:
		reason = "denied by the owner"
	case client.ApprovalExpired:
		reason = fmt.Sprintf("no answer from the owner within %s: denied", r.timeout)
	default:
		reason = "cancelled: the plugin stopped waiting"
	}
	k.log.Info("approval answered", "id", ap.ID, "plugin", r.plugin, "state", state)
	payload := map[string]any{"id": ap.ID, "plugin": r.plugin, "state": state, "reason": reason}
	if r.turn != "" {
		payload["turn_id"], payload["session"] = r.turn, r.session
	}
	k.publish(EventApprovalAnswered, payload)
	if stream != nil {
		stream(client.ChatEvent{Type: client.EventApproval, TurnID: r.turn, Session: r.session, Approval: &final})
	}
	if err != nil {
		return protocol.ApproveResult{}, err
	}
	return protocol.ApproveResult{ID: ap.ID, Approved: approved, Reason: reason}, nil
}

// approvalPayload is an approval as an event payload.
func approvalPayload(ap client.Approval) map[string]any {
	p := map[string]any{"id": ap.ID, "plugin": ap.Plugin, "title": ap.Title, "created": ap.Created, "expires": ap.Expires}
	for key, v := range map[string]string{"detail": ap.Detail, "turn_id": ap.TurnID, "session": ap.Session,
		"channel": ap.Channel, "partner": ap.Partner, "scope": ap.Scope} {
		if v != "" {
			p[key] = v
		}
	}
	return p
}

// list returns the pending approvals, oldest first.
func (a *approvals) list() []client.Approval {
	a.mu.Lock()
	out := make([]client.Approval, 0, len(a.pending))
	for _, ap := range a.pending {
		out = append(out, ap.Approval)
	}
	a.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// answer settles a pending approval.
func (a *approvals) answer(id string, approve bool) (client.Approval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap := a.pending[id]
	if ap == nil {
		return client.Approval{}, fmt.Errorf("%w: no pending approval %q (answered, expired or never asked)", client.ErrNotFound, id)
	}
	delete(a.pending, id)
	ap.State = client.ApprovalDenied
	if approve {
		ap.State = client.ApprovalApproved
	}
	close(ap.answered)
	return ap.Approval, nil
}

// Approvals implements client.ApprovalService: the pending approvals, oldest first.
func (k approvalRole) Approvals(ctx context.Context) ([]client.Approval, error) {
	return k.plugins.approvals.list(), nil
}

// AnswerApproval implements client.ApprovalService. Only the owner's clients reach it (the API's
// routes and the in-process GUI); a channel's message never does.
func (k approvalRole) AnswerApproval(ctx context.Context, id string, approve bool) (client.Approval, error) {
	if strings.TrimSpace(id) == "" {
		return client.Approval{}, invalid("the approval id is empty")
	}
	ap, err := k.plugins.approvals.answer(id, approve)
	if err != nil {
		return client.Approval{}, err
	}
	k.log.Info("approval answered by the owner", "id", id, "approve", approve)
	return ap, nil
}

// Approve implements host.Approver: owner/approve. The request is shown to the owner (the
// approval_requested event, the pending list of the API and, when the plugin serves one of the
// owner's live turns, an "approval" event in that turn's stream) and answered by the owner
// only. It waits for the kernel's approval timeout (or the plugin's shorter one), bounded by
// the deadline of the tool call the plugin serves so the denial is still that call's result.
func (s nativeServices) Approve(ctx context.Context, plugin string, p protocol.ApproveParams) (protocol.ApproveResult, error) {
	a := s.p.approvals
	title := strings.TrimSpace(sanitize(p.Title))
	detail := strings.TrimSpace(sanitize(p.Detail))
	switch {
	case title == "":
		return protocol.ApproveResult{}, invalid("the title is empty")
	case utf8.RuneCountInString(title) > maxApprovalTitle:
		return protocol.ApproveResult{}, invalid("the title has %d characters, at most %d", utf8.RuneCountInString(title), maxApprovalTitle)
	case utf8.RuneCountInString(detail) > maxApprovalDetail:
		return protocol.ApproveResult{}, invalid("the detail has %d characters, at most %d", utf8.RuneCountInString(detail), maxApprovalDetail)
	case p.TimeoutMS < 0:
		return protocol.ApproveResult{}, invalid("timeout_ms must be 0 (the kernel's) or positive, got %d", p.TimeoutMS)
	}
	r := request{plugin: plugin, title: title, detail: detail, timeout: a.timeout, turn: p.Turn}
	if t := time.Duration(p.TimeoutMS) * time.Millisecond; t > 0 && t < r.timeout {
		r.timeout = t
	}
	if p.Turn != "" {
		sess, err := s.turnSession(ctx, plugin, p.Turn)
		if err != nil {
			return protocol.ApproveResult{}, err
		}
		r.session, r.channel, r.partner, r.scope = sess.ID, sess.Channel, sess.Partner, sess.Scope.String()
		if dl, ok := s.p.grants.deadline(p.Turn, plugin); ok {
			left := (time.Until(dl) - approvalMargin).Truncate(time.Second)
			if left < r.timeout {
				r.timeout = max(left, minApprovalWait)
				s.k.log.Info("approval bounded by the tool call's deadline", "plugin", plugin, "timeout", r.timeout)
			}
		}
	}
	return a.ask(ctx, r)
}
