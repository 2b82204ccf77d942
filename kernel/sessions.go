package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/memory"
)

// deletedSessionPrefix keys, in the settings, the sessions the owner deleted (the value is
// when): a deleted session leaves the session list, but its row stays, because its events,
// kept in memory, refer to it.
const deletedSessionPrefix = memadmin.DeletedSessionPrefix

// RenameSession implements client.SessionAdmin.
func (k sessionRole) RenameSession(ctx context.Context, id, title string) (client.Session, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return client.Session{}, invalid("a session title must not be empty")
	case utf8.RuneCountInString(title) > client.MaxSessionTitle:
		return client.Session{}, invalid("a session title has at most %d characters, got %d", client.MaxSessionTitle, utf8.RuneCountInString(title))
	case strings.IndexFunc(title, unicode.IsControl) >= 0:
		return client.Session{}, invalid("a session title must be one line without control characters")
	}
	s, err := k.liveSession(ctx, id)
	if err != nil {
		return client.Session{}, err
	}
	s.Title = title
	s, err = k.store.UpdateSession(ctx, s)
	if err != nil {
		return client.Session{}, mapErr(err)
	}
	return toClientSession(s), nil
}

// DeleteSession implements client.SessionAdmin: the session is marked deleted (it leaves the
// list) and, with forget, every event of it is forgotten first, in batches of
// [client.MaxForgetEvents], the way [Kernel.Forget] forgets events.
func (k sessionRole) DeleteSession(ctx context.Context, id string, forget bool) (client.SessionDeleted, error) {
	if id == defaultSession {
		return client.SessionDeleted{}, invalid("the main session cannot be deleted (notifications and the default chat go there); delete its memory with `waiter memory forget`")
	}
	if _, err := k.liveSession(ctx, id); err != nil {
		return client.SessionDeleted{}, err
	}
	evs, err := k.db.SessionEventIDs(ctx, id) // every branch's
	if err != nil {
		return client.SessionDeleted{}, mapErr(err)
	}
	out := client.SessionDeleted{Session: id, Events: len(evs)}
	if forget {
		for start := 0; start < len(evs); start += client.MaxForgetEvents {
			ids := evs[start:min(start+client.MaxForgetEvents, len(evs))]
			r, err := k.admin.Forget(ctx, ids)
			if err != nil {
				return out, err
			}
			out.Forget.Events += r.Events
			out.Forget.Blocks += r.Blocks
			out.Forget.Triples += r.Triples
			out.Forget.Trimmed += r.Trimmed
			out.Forget.Entities += r.Entities
		}
		out.Forgotten = true
	}
	if err := k.store.SetSetting(ctx, deletedSessionPrefix+id, k.clock().UTC().Format(time.RFC3339)); err != nil {
		return out, mapErr(err)
	}
	k.log.Info("session deleted", "session", id, "events", out.Events, "forgotten", out.Forgotten)
	return out, nil
}

// liveSession returns the session id unless it is unknown or deleted (ErrNotFound).
func (k sessionRole) liveSession(ctx context.Context, id string) (memory.Session, error) {
	s, err := k.store.GetSession(ctx, id)
	if err != nil {
		return memory.Session{}, mapErr(err)
	}
	if deleted, err := k.sessionDeleted(ctx, id); err != nil {
		return memory.Session{}, err
	} else if deleted {
		return memory.Session{}, notFoundSession(id)
	}
	return s, nil
}

func notFoundSession(id string) error {
	return fmt.Errorf("%w: session %s was deleted", client.ErrNotFound, id)
}

func (k sessionRole) sessionDeleted(ctx context.Context, id string) (bool, error) {
	_, err := k.store.GetSetting(ctx, deletedSessionPrefix+id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, memory.ErrNotFound):
		return false, nil
	}
	return false, mapErr(err)
}

// withoutDeleted drops the sessions the owner deleted from ss.
func (k sessionRole) withoutDeleted(ctx context.Context, ss []memory.Session) ([]memory.Session, error) {
	deleted, err := k.store.ListSettings(ctx, deletedSessionPrefix)
	if err != nil {
		return nil, mapErr(err)
	}
	if len(deleted) == 0 {
		return ss, nil
	}
	out := ss[:0:0]
	for _, s := range ss {
		if _, gone := deleted[deletedSessionPrefix+s.ID]; !gone {
			out = append(out, s)
		}
	}
	return out, nil
}

// ensureChannelSession is ensureSession for a session the kernel keeps for itself, created
// with its channel so that clients can tell it from the owner's chats ([client.Session.System]).
func (k completionRole) ensureChannelSession(ctx context.Context, id, title, channel string, scope memory.Scope) (memory.Session, error) {
	s, err := k.store.GetSession(ctx, id)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, memory.ErrNotFound) {
		return memory.Session{}, err
	}
	s, err = k.store.CreateSession(ctx, memory.Session{ID: id, Title: title, Channel: channel, Scope: scope})
	if errors.Is(err, memory.ErrExists) {
		return k.store.GetSession(ctx, id)
	}
	return s, err
}
