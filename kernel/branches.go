package kernel

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/memory"
)

// toMessage is an event as the API shows it in a history.
func toMessage(e memory.Event) client.Message {
	m := client.Message{ID: e.ID, Time: e.Time, Role: string(e.Role), Content: e.Content, ToolCallID: e.ToolCallID,
		ToolName: e.ToolName, ToolStatus: e.ToolStatus, TurnID: e.TurnID, Parent: e.Parent}
	for _, c := range e.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, client.ToolCall(c))
	}
	for _, b := range e.Blocks {
		m.Blocks = append(m.Blocks, memadmin.BlockOut(b))
	}
	if e.Role == memory.RoleAssistant && e.Meta[agent.MetaMillis] != "" {
		p, _ := strconv.Atoi(e.Meta[agent.MetaPromptTokens])
		c, _ := strconv.Atoi(e.Meta[agent.MetaCompletionTokens])
		ms, _ := strconv.ParseInt(e.Meta[agent.MetaMillis], 10, 64)
		m.Usage = &client.Usage{PromptTokens: p, CompletionTokens: c, Millis: ms}
		m.Model = e.Meta[agent.MetaModel]
	}
	return m
}

// withBranches sets Branch on the messages that have siblings.
func (k sessionRole) withBranches(ctx context.Context, session string, msgs []client.Message) error {
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
	kids, err := k.db.Children(ctx, session, parents)
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

// HistoryPage implements client.BranchService.
func (k sessionRole) HistoryPage(ctx context.Context, q client.HistoryQuery) (client.HistoryPage, error) {
	switch {
	case q.Limit < 0 || q.Limit > client.MaxHistoryPage:
		return client.HistoryPage{}, invalid("limit must be 1 to %d, got %d", client.MaxHistoryPage, q.Limit)
	case q.Before < 0:
		return client.HistoryPage{}, invalid("before must be a message id, got %d", q.Before)
	case q.Limit == 0:
		q.Limit = client.DefaultHistoryPage
	}
	if _, err := k.liveSession(ctx, q.Session); err != nil {
		return client.HistoryPage{}, err
	}
	evs, more, err := k.db.HistoryPage(ctx, q.Session, q.Before, q.Limit)
	if err != nil {
		return client.HistoryPage{}, mapErr(err)
	}
	out := client.HistoryPage{Messages: make([]client.Message, 0, len(evs)), More: more}
	for _, e := range evs {
		out.Messages = append(out.Messages, toMessage(e))
	}
	return out, k.withBranches(ctx, q.Session, out.Messages)
}

// SwitchBranch implements client.BranchService.
func (k sessionRole) SwitchBranch(ctx context.Context, session string, id int64) error {
	if _, err := k.liveSession(ctx, session); err != nil {
		return err
	}
	unlock, err := k.trySessionLock(ctx, session)
	if err != nil {
		return err
	}
	defer unlock()
	leaf, err := k.db.BranchLeaf(ctx, session, id)
	if err != nil {
		return mapErr(err)
	}
	return k.moveHead(ctx, session, leaf)
}

// moveHead makes the path to head the session's current branch and drops the engine's window.
func (k sessionRole) moveHead(ctx context.Context, session string, head int64) error {
	if err := k.db.SetHead(ctx, session, head); err != nil {
		return mapErr(err)
	}
	k.mem.BranchChanged(session)
	k.log.Info("session branch moved", "session", session, "head", head)
	return nil
}

// sessionLock returns the mutex that serialises a session's turns and branch moves.
func (k sessionRole) sessionLock(session string) *sync.Mutex {
	k.turnMu.Lock()
	defer k.turnMu.Unlock()
	lock := k.sessLock[session]
	if lock == nil {
		lock = &sync.Mutex{}
		k.sessLock[session] = lock
	}
	return lock
}

// trySessionLock takes the session's lock, waiting up to [branchLockWait] for a turn that is
// finishing (its final event is out before it lets go); a turn still running is ErrInvalid.
func (k sessionRole) trySessionLock(ctx context.Context, session string) (func(), error) {
	lock := k.sessionLock(session)
	deadline := time.Now().Add(branchLockWait) // wall time: a wait, not a rule
	for !lock.TryLock() {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, invalid("a turn is running in session %s; wait for it or cancel it first", session)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return lock.Unlock, nil
}

// branchLockWait is how long a branch switch waits for the session's turn to finish.
const branchLockWait = 2 * time.Second

// branchTurn prepares a regenerate or an edit (req.Regenerate / req.Edit): it checks the message
// and returns the turn's input, the stored user event answered again (Again; regenerate only)
// and the branch move that runTurn makes under the session's lock.
func (k chatRole) branchTurn(ctx context.Context, session string, req client.ChatRequest, input string) (string, int64, func(context.Context) error, error) {
	if req.Regenerate != 0 && req.Edit != 0 {
		return "", 0, nil, invalid("regenerate and edit exclude each other")
	}
	id := req.Regenerate + req.Edit
	hit, err := k.db.Events(ctx, []int64{id})
	if err != nil {
		return "", 0, nil, mapErr(err)
	}
	if len(hit) == 0 || hit[0].Event.Session != session {
		return "", 0, nil, fmt.Errorf("%w: message %d is not in session %s", client.ErrNotFound, id, session)
	}
	e := hit[0].Event
	if e.OffBranch {
		return "", 0, nil, invalid("message %d is not on the session's current branch (switch to its branch first)", id)
	}
	if req.Edit != 0 {
		if e.Role != memory.RoleUser {
			return "", 0, nil, invalid("only a user message can be edited; message %d is the %s's", id, e.Role)
		}
		if input == "" {
			return "", 0, nil, invalid("input is empty: an edit carries the message's new text")
		}
		return input, 0, func(ctx context.Context) error { return sessionRole(k).moveHead(ctx, session, e.Parent) }, nil
	}
	if input != "" || len(req.Attachments) > 0 {
		return "", 0, nil, invalid("regenerate takes no input or attachments (it answers the stored message again; edit it instead)")
	}
	// The user message whose turn this is: the message itself or the nearest one before it.
	hist, err := k.db.History(ctx, session, 0)
	if err != nil {
		return "", 0, nil, mapErr(err)
	}
	var user *memory.Event
	for i := range hist {
		if hist[i].Role == memory.RoleUser && hist[i].ID <= id {
			user = &hist[i]
		}
	}
	if user == nil {
		return "", 0, nil, invalid("message %d answers no user message; there is nothing to regenerate", id)
	}
	u := *user
	return u.Content, u.ID, func(ctx context.Context) error { return sessionRole(k).moveHead(ctx, session, u.ID) }, nil
}
