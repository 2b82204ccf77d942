package memadmin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
)

// Message is an event as the API shows it in a history.
func Message(e memory.Event) client.Message {
	m := client.Message{ID: e.ID, Time: e.Time, Role: string(e.Role), Content: e.Content, ToolCallID: e.ToolCallID,
		ToolName: e.ToolName, ToolStatus: e.ToolStatus, TurnID: e.TurnID, Parent: e.Parent}
	for _, c := range e.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, client.ToolCall(c))
	}
	for _, b := range e.Blocks {
		m.Blocks = append(m.Blocks, BlockOut(b))
	}
	if e.Role == memory.RoleAssistant && e.Meta[memory.MetaMillis] != "" {
		p, _ := strconv.Atoi(e.Meta[memory.MetaPromptTokens])
		c, _ := strconv.Atoi(e.Meta[memory.MetaCompletionTokens])
		ms, _ := strconv.ParseInt(e.Meta[memory.MetaMillis], 10, 64)
		m.Usage = &client.Usage{PromptTokens: p, CompletionTokens: c, Millis: ms}
		m.Model = e.Meta[memory.MetaModel]
	}
	return m
}

// WithBranches sets Branch on the messages that have siblings.
func (a *Admin) WithBranches(ctx context.Context, session string, msgs []client.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	parents := make([]int64, 0, len(msgs))
	seen := map[int64]bool{}
	for _, m := range msgs {
		if !seen[m.Parent] {
			seen[m.Parent] = true
			parents = append(parents, m.Parent)
		}
	}
	kids, err := a.DB.Children(ctx, session, parents)
	if err != nil {
		return mapErr(err)
	}
	for i := range msgs {
		sib := kids[msgs[i].Parent]
		if len(sib) < 2 {
			continue
		}
		for j, id := range sib {
			if id == msgs[i].ID {
				msgs[i].Branch = &client.Branch{Index: j + 1, Count: len(sib), Siblings: sib}
			}
		}
	}
	return nil
}

// historyPage is a page of a session that exists.
func (a *Admin) historyPage(ctx context.Context, q client.HistoryQuery) (client.HistoryPage, error) {
	switch {
	case q.Limit < 0 || q.Limit > client.MaxHistoryPage:
		return client.HistoryPage{}, invalid("limit must be 1 to %d, got %d", client.MaxHistoryPage, q.Limit)
	case q.Before < 0:
		return client.HistoryPage{}, invalid("before must be a message id, got %d", q.Before)
	case q.Limit == 0:
		q.Limit = client.DefaultHistoryPage
	}
	evs, more, err := a.DB.HistoryPage(ctx, q.Session, q.Before, q.Limit)
	if err != nil {
		return client.HistoryPage{}, mapErr(err)
	}
	out := client.HistoryPage{Messages: make([]client.Message, 0, len(evs)), More: more}
	for _, e := range evs {
		out.Messages = append(out.Messages, Message(e))
	}
	return out, a.WithBranches(ctx, q.Session, out.Messages)
}

// MoveHead makes the path to head the session's current branch and drops the engine's window.
func (a *Admin) MoveHead(ctx context.Context, session string, head int64) error {
	if err := a.DB.SetHead(ctx, session, head); err != nil {
		return mapErr(err)
	}
	a.Mem.BranchChanged(session)
	a.Log.Info("session branch moved", "session", session, "head", head)
	return nil
}

// BranchMove is BranchTurn with the head move as a function (run under the session's lock).
func (a *Admin) BranchMove(ctx context.Context, session string, regenerate, edit int64, input string, attachments bool) (string, int64, func(context.Context) error, error) {
	input, again, head, err := a.BranchTurn(ctx, session, regenerate, edit, input, attachments)
	return input, again, func(ctx context.Context) error { return a.MoveHead(ctx, session, head) }, err
}

// BranchTurn checks a regenerate (of message regenerate, without input or attachments) or an
// edit (of user message edit, with the new input) on the session's current branch and returns
// the turn's input, the stored user event the turn answers again (regenerate; 0 for an edit)
// and the head to move to before the turn.
func (a *Admin) BranchTurn(ctx context.Context, session string, regenerate, edit int64, input string, attachments bool) (string, int64, int64, error) {
	if regenerate != 0 && edit != 0 {
		return "", 0, 0, invalid("regenerate and edit exclude each other")
	}
	id := regenerate + edit
	hit, err := a.DB.Events(ctx, []int64{id})
	if err != nil {
		return "", 0, 0, mapErr(err)
	}
	if len(hit) == 0 || hit[0].Event.Session != session {
		return "", 0, 0, fmt.Errorf("%w: message %d is not in session %s", client.ErrNotFound, id, session)
	}
	e := hit[0].Event
	if e.OffBranch {
		return "", 0, 0, invalid("message %d is not on the session's current branch (switch to its branch first)", id)
	}
	if edit != 0 {
		if e.Role != memory.RoleUser {
			return "", 0, 0, invalid("only a user message can be edited; message %d is the %s's", id, e.Role)
		}
		if input == "" {
			return "", 0, 0, invalid("input is empty: an edit carries the message's new text")
		}
		return input, 0, e.Parent, nil
	}
	if input != "" || attachments {
		return "", 0, 0, invalid("regenerate takes no input or attachments (it answers the stored message again; edit it instead)")
	}
	// The user message whose turn this is: the message itself or the nearest one before it.
	hist, err := a.DB.History(ctx, session, 0)
	if err != nil {
		return "", 0, 0, mapErr(err)
	}
	var user int64
	for _, h := range hist {
		if h.Role == memory.RoleUser && h.ID <= id {
			user, input = h.ID, h.Content
		}
	}
	if user == 0 {
		return "", 0, 0, invalid("message %d answers no user message; there is nothing to regenerate", id)
	}
	return input, user, user, nil
}

// DeletedSessionPrefix keys, in the settings, the sessions the owner deleted (the value is when):
// a deleted session leaves the session list, but its row stays, because its events, kept in
// memory, refer to it.
const DeletedSessionPrefix = "session.deleted/"

// liveSession checks that a session exists and was not deleted (ErrNotFound).
func (a *Admin) liveSession(ctx context.Context, id string) error {
	if _, err := a.DB.GetSession(ctx, id); err != nil {
		return mapErr(err)
	}
	_, err := a.DB.GetSetting(ctx, DeletedSessionPrefix+id)
	switch {
	case err == nil:
		return fmt.Errorf("%w: session %s was deleted", client.ErrNotFound, id)
	case errors.Is(err, memory.ErrNotFound):
		return nil
	}
	return mapErr(err)
}

// History is client.SessionService.History: the last limit messages of the session's current
// branch (limit <= 0: all), with their branch marks.
func (a *Admin) History(ctx context.Context, id string, limit int) ([]client.Message, error) {
	if _, err := a.DB.GetSession(ctx, id); err != nil {
		return nil, mapErr(err)
	}
	evs, err := a.DB.History(ctx, id, limit)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]client.Message, 0, len(evs))
	for _, e := range evs {
		out = append(out, Message(e))
	}
	return out, a.WithBranches(ctx, id, out)
}

// HistoryPage implements client.BranchService.
func (a *Admin) HistoryPage(ctx context.Context, q client.HistoryQuery) (client.HistoryPage, error) {
	if err := a.liveSession(ctx, q.Session); err != nil {
		return client.HistoryPage{}, err
	}
	return a.historyPage(ctx, q)
}

// SwitchBranch implements client.BranchService: the newest message under message id becomes
// the session's head. It takes the session's turn lock (Admin.SessionLock), waiting up to 2 s
// (wall time) for a turn that is finishing (its final event is out before it lets the session
// go); a turn still running is ErrInvalid.
func (a *Admin) SwitchBranch(ctx context.Context, session string, id int64) error {
	if err := a.liveSession(ctx, session); err != nil {
		return err
	}
	lock := a.SessionLock(session)
	for deadline := time.Now().Add(2 * time.Second); !lock.TryLock(); time.Sleep(10 * time.Millisecond) {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return invalid("a turn is running in session %s; wait for it or cancel it first", session)
		}
	}
	defer lock.Unlock()
	leaf, err := a.DB.BranchLeaf(ctx, session, id)
	if err != nil {
		return mapErr(err)
	}
	return a.MoveHead(ctx, session, leaf)
}
