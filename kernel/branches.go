package kernel

import (
	"sync"
)

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
