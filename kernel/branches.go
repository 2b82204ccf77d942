package kernel

import (
	"context"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// HistoryPage implements client.BranchService.
func (k sessionRole) HistoryPage(ctx context.Context, q client.HistoryQuery) (client.HistoryPage, error) {
	if _, err := k.liveSession(ctx, q.Session); err != nil {
		return client.HistoryPage{}, err
	}
	return k.admin.HistoryPage(ctx, q)
}

// SwitchBranch implements client.BranchService.
func (k sessionRole) SwitchBranch(ctx context.Context, session string, id int64) error {
	if _, err := k.liveSession(ctx, session); err != nil {
		return err
	}
	// Wait up to 2 s (wall time) for a turn that is finishing: its final event is out before
	// it lets the session go. A turn still running is ErrInvalid.
	lock := k.sessionLock(session)
	for deadline := time.Now().Add(2 * time.Second); !lock.TryLock(); time.Sleep(10 * time.Millisecond) {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return invalid("a turn is running in session %s; wait for it or cancel it first", session)
		}
	}
	defer lock.Unlock()
	leaf, err := k.db.BranchLeaf(ctx, session, id)
	if err != nil {
		return mapErr(err)
	}
	return k.admin.MoveHead(ctx, session, leaf)
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
