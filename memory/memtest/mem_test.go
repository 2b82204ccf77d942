package memtest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
)

// tickClock returns a clock that starts in 2024 and advances 1 ms per call.
func tickClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

func TestMem(t *testing.T) {
	memtest.RunStoreTests(t, func(t *testing.T) memory.Store { return memtest.NewMem(tickClock()) })
}

func TestMemRealClock(t *testing.T) {
	memtest.RunStoreTests(t, func(t *testing.T) memory.Store { return memtest.NewMem(nil) })
}

func TestMemIndex(t *testing.T) {
	memtest.RunIndexTests(t, func(t *testing.T) memtest.IndexedStore { return memtest.NewMem(tickClock()) })
}
