package kernel

import (
	"context"
	"sync"

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
	return k.admin.SwitchBranch(ctx, session, id, k.sessionLock(session))
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
