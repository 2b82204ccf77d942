//go:build linux && cgo

package sqlite

/*
#include <malloc.h>
*/
import "C"

import "sync"

// trimThreshold is how much free memory at the top of a glibc malloc heap is kept rather than
// handed back to the kernel.
const trimThreshold = 8 << 20

var tuneOnce sync.Once

// tuneAllocator keeps glibc from handing memory back to the kernel after every transaction.
// SQLite allocates and frees its page and statement buffers per transaction on whichever OS
// thread the cgo call runs on, so they come from glibc's per-thread arenas, which glibc shrinks
// with madvise as soon as their free top passes the (128 KiB) trim threshold. Each shrink flushes
// the TLBs of every CPU and the next transaction faults the pages back in: one single-row UPDATE
// took 0.2–0.5 ms instead of ≈ 0.12 ms (memory/sqlite's BenchmarkSetLayer, docs/benchmarks.md).
// The threshold is process-wide; it bounds what a heap keeps, it does not grow memory use.
func tuneAllocator() {
	tuneOnce.Do(func() { C.mallopt(C.M_TRIM_THRESHOLD, trimThreshold) })
}
