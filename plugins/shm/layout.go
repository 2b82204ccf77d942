package shm

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Sizes and limits.
const (
	// DefaultArenaSize is the size of each arena when [Options.ArenaSize] is 0.
	DefaultArenaSize = 32 << 20
	// MaxArenaSize is the largest arena, per direction.
	MaxArenaSize = 256 << 20
	// DefaultRingSlots is the number of event ring slots when [Options.RingSlots] is 0.
	DefaultRingSlots = 256
	// DefaultSlotSize is the size of an event ring slot when [Options.SlotSize] is 0.
	DefaultSlotSize = 512
	// MaxRingBytes bounds RingSlots × SlotSize.
	MaxRingBytes = 64 << 20
	// InlineLimit is the payload size above which media blocks and results
	// travel through an arena instead of inline in a JSON-RPC message.
	InlineLimit = 64 << 10
	// Version is the region layout version written in the header.
	Version = 1
)

// Fixed layout values (see the package documentation).
const (
	pageSize     = 4096
	controlSize  = pageSize // the control page: header + ring control words
	headerBytes  = 128      // kernel-owned header words
	offHead      = 128      // ring head (kernel)
	offReadSeq   = 192      // reader position (plugin)
	offWaiting   = 200      // reader waiting flag (plugin)
	blockAlign   = 64       // arena block alignment
	blockHeader  = 64       // bytes before each payload
	slotHeader   = 16       // sequence u64, length u32, reserved u32
	minSlotSize  = 64
	maxSlotSize  = 64 << 10
	minRingSlots = 2
	maxRingSlots = 1 << 16
	blockMagic   = 0x4b4c4248 // "HBLK"
)

// magic opens every region.
var magic = [8]byte{'H', 'O', 'L', 'O', 'S', 'H', 'M', 0}

// Header field offsets.
const (
	hMagic    = 0
	hVersion  = 8
	hControl  = 12
	hGen      = 16
	hFlags    = 20
	hSize     = 24
	hRingOff  = 32
	hSlots    = 40
	hSlotSize = 44
	hK2POff   = 48
	hK2PSize  = 56
	hP2KOff   = 64
	hP2KSize  = 72
	hRingBase = 80
)

// Options configures a region made by [Create]. The zero value gives the defaults.
type Options struct {
	// ArenaSize is the size of each arena (kernel→plugin and plugin→kernel) in
	// bytes: 0 means DefaultArenaSize, at most MaxArenaSize, at least one page;
	// it is rounded up to whole pages.
	ArenaSize int64
	// RingSlots is the number of event ring slots: 0 means DefaultRingSlots,
	// otherwise a power of two from 2 to 65536.
	RingSlots int
	// SlotSize is the size of one ring slot in bytes, including its 16-byte
	// header: 0 means DefaultSlotSize, otherwise a multiple of 64 from 64 to
	// 65536.
	SlotSize int
}

// layout is where everything lives in a region. Each side keeps its own copy
// and never re-reads it from shared memory.
type layout struct {
	size     uint64 // the whole region
	ringOff  uint64
	slots    uint64
	slotSize uint64
	k2pOff   uint64
	k2pSize  uint64
	p2kOff   uint64
	p2kSize  uint64
}

// newLayout validates opts and lays a region out.
func newLayout(opts Options) (layout, error) {
	arena := opts.ArenaSize
	switch {
	case arena == 0:
		arena = DefaultArenaSize
	case arena < 0:
		return layout{}, fmt.Errorf("shm: arena size %d is negative", arena)
	case arena > MaxArenaSize:
		return layout{}, fmt.Errorf("%w: arena size %d bytes exceeds the limit of %d bytes (256 MiB)", ErrTooLarge, arena, MaxArenaSize)
	}
	arena = (arena + pageSize - 1) &^ (pageSize - 1)
	slots, slotSize := opts.RingSlots, opts.SlotSize
	if slots == 0 {
		slots = DefaultRingSlots
	}
	if slotSize == 0 {
		slotSize = DefaultSlotSize
	}
	return layoutFor(uint64(slots), uint64(slotSize), uint64(arena), uint64(arena))
}

// layoutFor checks the four parameters of a layout and derives the rest. It is
// shared by [Create] and the plugin's header parser, so both agree exactly.
func layoutFor(slots, slotSize, k2pSize, p2kSize uint64) (layout, error) {
	if slots < minRingSlots || slots > maxRingSlots || slots&(slots-1) != 0 {
		return layout{}, fmt.Errorf("shm: ring slots %d: want a power of two from %d to %d", slots, minRingSlots, maxRingSlots)
	}
	if slotSize < minSlotSize || slotSize > maxSlotSize || slotSize%64 != 0 {
		return layout{}, fmt.Errorf("shm: slot size %d: want a multiple of 64 from %d to %d", slotSize, minSlotSize, maxSlotSize)
	}
	ringBytes := slots * slotSize // both ≤ 2^16: no overflow
	if ringBytes > MaxRingBytes {
		return layout{}, fmt.Errorf("shm: ring of %d slots × %d bytes exceeds %d bytes", slots, slotSize, MaxRingBytes)
	}
	for _, a := range []uint64{k2pSize, p2kSize} {
		if a < pageSize || a > MaxArenaSize || a%pageSize != 0 {
			return layout{}, fmt.Errorf("shm: arena size %d: want whole pages from %d to %d bytes", a, pageSize, MaxArenaSize)
		}
	}
	l := layout{ringOff: controlSize, slots: slots, slotSize: slotSize, k2pSize: k2pSize, p2kSize: p2kSize}
	l.k2pOff = l.ringOff + (ringBytes+pageSize-1)&^(pageSize-1)
	l.p2kOff = l.k2pOff + k2pSize
	l.size = l.p2kOff + p2kSize
	return l, nil
}

// encodeHeader writes the kernel-owned header for l into b[:headerBytes].
func (l layout) encodeHeader(b []byte, gen uint32, ringBase uint64) {
	h := b[:headerBytes]
	clear(h)
	copy(h[hMagic:], magic[:])
	le := binary.LittleEndian
	le.PutUint32(h[hVersion:], Version)
	le.PutUint32(h[hControl:], controlSize)
	le.PutUint32(h[hGen:], gen)
	le.PutUint64(h[hSize:], l.size)
	le.PutUint64(h[hRingOff:], l.ringOff)
	le.PutUint32(h[hSlots:], uint32(l.slots))
	le.PutUint32(h[hSlotSize:], uint32(l.slotSize))
	le.PutUint64(h[hK2POff:], l.k2pOff)
	le.PutUint64(h[hK2PSize:], l.k2pSize)
	le.PutUint64(h[hP2KOff:], l.p2kOff)
	le.PutUint64(h[hP2KSize:], l.p2kSize)
	le.PutUint64(h[hRingBase:], ringBase)
}

// header is what a plugin learns from a region's header.
type header struct {
	layout
	gen      uint32
	ringBase uint64
}

// parseHeader validates a region header against the size of the file it came
// from. b is a private copy (the caller copies the header out of shared memory
// once). A header is accepted only if it is exactly the one [Create] would have
// written for its parameters.
func parseHeader(b []byte, fileSize uint64) (header, error) {
	if len(b) < headerBytes {
		return header{}, fmt.Errorf("shm: header of %d bytes, want %d", len(b), headerBytes)
	}
	if !bytes.Equal(b[hMagic:hMagic+8], magic[:]) {
		return header{}, fmt.Errorf("shm: not a hologram shared-memory region (magic %q)", b[hMagic:hMagic+8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[hVersion:]); v != Version {
		return header{}, fmt.Errorf("shm: region layout version %d, this side speaks version %d", v, Version)
	}
	if c := le.Uint32(b[hControl:]); c != controlSize {
		return header{}, fmt.Errorf("shm: control page of %d bytes, want %d", c, controlSize)
	}
	if f := le.Uint32(b[hFlags:]); f != 0 {
		return header{}, fmt.Errorf("shm: unknown header flags %#x", f)
	}
	for i := hRingBase + 8; i < headerBytes; i++ {
		if b[i] != 0 {
			return header{}, fmt.Errorf("shm: reserved header byte %d is %#x, want 0", i, b[i])
		}
	}
	gen := le.Uint32(b[hGen:])
	if gen == 0 {
		return header{}, fmt.Errorf("shm: header generation 0 is invalid")
	}
	l, err := layoutFor(uint64(le.Uint32(b[hSlots:])), uint64(le.Uint32(b[hSlotSize:])), le.Uint64(b[hK2PSize:]), le.Uint64(b[hP2KSize:]))
	if err != nil {
		return header{}, fmt.Errorf("shm: header: %w", err)
	}
	got := layout{
		size: le.Uint64(b[hSize:]), ringOff: le.Uint64(b[hRingOff:]), slots: l.slots, slotSize: l.slotSize,
		k2pOff: le.Uint64(b[hK2POff:]), k2pSize: l.k2pSize, p2kOff: le.Uint64(b[hP2KOff:]), p2kSize: l.p2kSize,
	}
	if got != l {
		return header{}, fmt.Errorf("shm: header layout %+v is inconsistent, want %+v", got, l)
	}
	if l.size != fileSize {
		return header{}, fmt.Errorf("shm: header says %d bytes, the region file has %d", l.size, fileSize)
	}
	return header{layout: l, gen: gen, ringBase: le.Uint64(b[hRingBase:])}, nil
}
