package shm

import (
	"fmt"
	"sort"
)

// extent is a free range [off, off+size) of an arena, region-relative.
type extent struct{ off, size uint64 }

// block is one live allocation.
type block struct {
	size   uint64 // whole block: header + payload rounded up to blockAlign
	length uint64 // payload length
	gen    uint32
}

// allocator hands out blocks of one arena: first fit over a free list sorted
// by offset, coalescing neighbours on free. It lives in the writer's private
// memory. It is not safe for concurrent use; Region serialises it.
type allocator struct {
	base, size uint64
	free       []extent         // sorted by off, never adjacent
	live       map[uint64]block // by payload offset
	inUse      uint64
}

// newAllocator returns an empty allocator for the arena [base, base+size).
func newAllocator(base, size uint64) *allocator {
	a := &allocator{base: base, size: size}
	a.reset()
	return a
}

// reset forgets every allocation.
func (a *allocator) reset() {
	a.free = append(a.free[:0], extent{a.base, a.size})
	a.live = make(map[uint64]block)
	a.inUse = 0
}

// maxPayload is the largest payload a block can carry in this arena.
func (a *allocator) maxPayload() uint64 { return a.size - blockHeader }

// blockSize is the size of the block holding n payload bytes; n ≤ maxPayload.
func blockSize(n uint64) uint64 {
	return blockHeader + (n+blockAlign-1)&^(blockAlign-1)
}

// alloc reserves a block for n payload bytes (0 < n ≤ maxPayload) and returns
// the payload's offset.
func (a *allocator) alloc(n uint64, gen uint32) (uint64, error) {
	need := blockSize(n)
	for i, e := range a.free {
		if e.size < need {
			continue
		}
		if e.size == need {
			a.free = append(a.free[:i], a.free[i+1:]...)
		} else {
			a.free[i] = extent{e.off + need, e.size - need}
		}
		p := e.off + blockHeader
		a.live[p] = block{size: need, length: n, gen: gen}
		a.inUse += need
		return p, nil
	}
	return 0, fmt.Errorf("%w: %d bytes need a %d-byte block; largest free extent %d bytes, %d of %d bytes in use by %d allocations (release references the peer has acknowledged)",
		ErrFull, n, need, a.largest(), a.inUse, a.size, len(a.live))
}

// release frees the block whose payload starts at off; it must carry exactly
// length bytes of generation gen.
func (a *allocator) release(off, length uint64, gen uint32) error {
	b, ok := a.live[off]
	if !ok {
		return fmt.Errorf("%w: no live allocation at offset %d (double release, or not this side's arena)", ErrBadRef, off)
	}
	if b.length != length || b.gen != gen {
		return fmt.Errorf("%w: allocation at offset %d holds %d bytes of generation %d, the reference says %d bytes of generation %d",
			ErrBadRef, off, b.length, b.gen, length, gen)
	}
	delete(a.live, off)
	a.inUse -= b.size
	start := off - blockHeader
	i := sort.Search(len(a.free), func(i int) bool { return a.free[i].off > start })
	// Merge with the previous and the next extent when adjacent.
	e := extent{start, b.size}
	if i > 0 && a.free[i-1].off+a.free[i-1].size == start {
		i--
		e = extent{a.free[i].off, a.free[i].size + b.size}
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
	if i < len(a.free) && e.off+e.size == a.free[i].off {
		e.size += a.free[i].size
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
	a.free = append(a.free, extent{})
	copy(a.free[i+1:], a.free[i:])
	a.free[i] = e
	return nil
}

// largest is the size of the largest free extent.
func (a *allocator) largest() uint64 {
	var m uint64
	for _, e := range a.free {
		m = max(m, e.size)
	}
	return m
}
