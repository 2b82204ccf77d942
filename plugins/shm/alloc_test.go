package shm

import (
	"errors"
	"strings"
	"testing"
)

// checkInvariants verifies that the free list and the live blocks tile the
// arena exactly, with no overlap and no adjacent free extents.
func checkInvariants(t *testing.T, a *allocator) {
	t.Helper()
	type span struct{ off, size uint64 }
	var spans []span
	var free uint64
	for i, e := range a.free {
		if e.size == 0 {
			t.Fatalf("empty free extent %d", i)
		}
		if i > 0 && a.free[i-1].off+a.free[i-1].size >= e.off {
			t.Fatalf("free extents %d and %d overlap or touch: %+v", i-1, i, a.free)
		}
		spans = append(spans, span{e.off, e.size})
		free += e.size
	}
	var used uint64
	for p, b := range a.live {
		spans = append(spans, span{p - blockHeader, b.size})
		used += b.size
	}
	if used != a.inUse || used+free != a.size {
		t.Fatalf("in use %d (counted %d) + free %d != arena %d", a.inUse, used, free, a.size)
	}
	for i := range spans {
		for j := i + 1; j < len(spans); j++ {
			x, y := spans[i], spans[j]
			if x.off < y.off+y.size && y.off < x.off+x.size {
				t.Fatalf("spans %+v and %+v overlap", x, y)
			}
		}
		if spans[i].off < a.base || spans[i].off+spans[i].size > a.base+a.size {
			t.Fatalf("span %+v outside the arena", spans[i])
		}
	}
}

func TestAllocator(t *testing.T) {
	const base, size = 8192, 64 * 64 // room for 64 blocks of 64 bytes: 32 one-line payloads
	type step struct {
		op     string // "alloc" (n bytes, into slot), "free" (slot), "freebad"
		n      uint64
		slot   int
		want   uint64 // alloc: wanted payload offset (0 = any)
		errIs  error
		errHas string
	}
	tests := []struct {
		name  string
		steps []step
		inUse uint64
	}{
		{name: "fill", steps: []step{
			{op: "alloc", n: size/2 - blockHeader, slot: 0, want: base + blockHeader},
			{op: "alloc", n: size/2 - blockHeader, slot: 1, want: base + size/2 + blockHeader},
			{op: "alloc", n: 1, slot: 2, errIs: ErrFull, errHas: "largest free extent 0 bytes"},
		}, inUse: size},
		{name: "one block fills the arena", steps: []step{
			{op: "alloc", n: size - blockHeader, slot: 0, want: base + blockHeader},
			{op: "free", slot: 0},
			{op: "alloc", n: size - blockHeader, slot: 0, want: base + blockHeader},
		}, inUse: size},
		{name: "rounding", steps: []step{
			{op: "alloc", n: 1, slot: 0, want: base + blockHeader},
			{op: "alloc", n: 65, slot: 1, want: base + 128 + blockHeader},
			{op: "alloc", n: 64, slot: 2, want: base + 128 + 192 + blockHeader},
		}, inUse: 128 + 192 + 128},
		{name: "wrap: back to the start when the end is too small", steps: []step{
			{op: "alloc", n: 1024, slot: 0, want: base + blockHeader},
			{op: "alloc", n: 1024, slot: 1},
			{op: "alloc", n: 1024, slot: 2},
			{op: "alloc", n: 1000, slot: 3, errIs: ErrFull, errHas: "largest free extent 832 bytes"},
			{op: "free", slot: 0},
			{op: "alloc", n: 1000, slot: 3, want: base + blockHeader},
			{op: "alloc", n: 700, slot: 4, want: base + 3*1088 + blockHeader},
		}, inUse: 3*1088 + 768},
		{name: "fragmentation", steps: []step{
			{op: "alloc", n: 1024 - blockHeader, slot: 0},
			{op: "alloc", n: 1024 - blockHeader, slot: 1},
			{op: "alloc", n: 1024 - blockHeader, slot: 2},
			{op: "alloc", n: 1024 - blockHeader, slot: 3},
			{op: "free", slot: 0},
			{op: "free", slot: 2},
			// 2048 bytes free, but in two 1024-byte holes.
			{op: "alloc", n: 1024, slot: 4, errIs: ErrFull, errHas: "largest free extent 1024 bytes, 2048 of 4096 bytes in use by 2 allocations"},
			{op: "free", slot: 1}, // coalesces with both neighbours
			{op: "alloc", n: 3072 - blockHeader, slot: 4, want: base + blockHeader},
		}, inUse: 4096},
		{name: "coalesce in any order", steps: []step{
			{op: "alloc", n: 100, slot: 0},
			{op: "alloc", n: 100, slot: 1},
			{op: "alloc", n: 100, slot: 2},
			{op: "free", slot: 2},
			{op: "free", slot: 0},
			{op: "free", slot: 1},
			{op: "alloc", n: size - blockHeader, slot: 3, want: base + blockHeader},
		}, inUse: size},
		{name: "double free", steps: []step{
			{op: "alloc", n: 10, slot: 0},
			{op: "free", slot: 0},
			{op: "free", slot: 0, errIs: ErrBadRef, errHas: "double release"},
		}},
		{name: "free with the wrong length", steps: []step{
			{op: "alloc", n: 10, slot: 0},
			{op: "freebad", slot: 0, errIs: ErrBadRef, errHas: "holds 10 bytes of generation 1, the reference says 11 bytes"},
		}, inUse: 128},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAllocator(base, size)
			refs := map[int]Ref{}
			for i, s := range tt.steps {
				var err error
				switch s.op {
				case "alloc":
					var off uint64
					off, err = a.alloc(s.n, 1)
					if err == nil {
						if s.want != 0 && off != s.want {
							t.Fatalf("step %d: alloc at %d, want %d", i, off, s.want)
						}
						if (off-base)%blockAlign != 0 || off < base+blockHeader || off+s.n > base+size {
							t.Fatalf("step %d: alloc at %d of %d bytes is misplaced", i, off, s.n)
						}
						refs[s.slot] = Ref{Offset: off, Length: s.n, Gen: 1}
					}
				case "free":
					r := refs[s.slot]
					err = a.release(r.Offset, r.Length, r.Gen)
				case "freebad":
					r := refs[s.slot]
					err = a.release(r.Offset, r.Length+1, r.Gen)
				}
				if s.errIs != nil {
					if !errors.Is(err, s.errIs) || !strings.Contains(err.Error(), s.errHas) {
						t.Fatalf("step %d: err = %v, want %v containing %q", i, err, s.errIs, s.errHas)
					}
				} else if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				checkInvariants(t, a)
			}
			if a.inUse != tt.inUse {
				t.Fatalf("in use %d, want %d", a.inUse, tt.inUse)
			}
			a.reset()
			checkInvariants(t, a)
			if a.inUse != 0 || len(a.live) != 0 || a.largest() != size {
				t.Fatalf("after reset: in use %d, %d live, largest %d", a.inUse, len(a.live), a.largest())
			}
		})
	}
}

// TestAllocatorChurn allocates and frees in a pseudo-random order and checks
// the invariants after every step.
func TestAllocatorChurn(t *testing.T) {
	a := newAllocator(pageSize, 64<<10)
	var live []Ref
	x := uint64(88172645463325252) // xorshift state: deterministic
	rnd := func(n uint64) uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x % n
	}
	full := 0
	for i := range 5000 {
		if len(live) > 0 && rnd(3) == 0 {
			j := int(rnd(uint64(len(live))))
			r := live[j]
			if err := a.release(r.Offset, r.Length, r.Gen); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			live = append(live[:j], live[j+1:]...)
		} else {
			n := 1 + rnd(4000)
			off, err := a.alloc(n, 1)
			switch {
			case errors.Is(err, ErrFull):
				full++
				if a.largest() >= blockSize(n) {
					t.Fatalf("step %d: full with a %d-byte extent for a %d-byte block", i, a.largest(), blockSize(n))
				}
			case err != nil:
				t.Fatalf("step %d: %v", i, err)
			default:
				live = append(live, Ref{Offset: off, Length: n, Gen: 1})
			}
		}
		checkInvariants(t, a)
	}
	if full == 0 {
		t.Fatal("the churn never filled the arena: the test does not cover ErrFull")
	}
	for _, r := range live {
		if err := a.release(r.Offset, r.Length, r.Gen); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.free) != 1 || a.free[0] != (extent{pageSize, 64 << 10}) {
		t.Fatalf("after freeing everything the free list is %+v", a.free)
	}
}
