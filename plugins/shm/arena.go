package shm

import (
	"encoding/binary"
	"fmt"
)

// Ref is a reference to a payload in one of a region's arenas. It travels
// inside JSON-RPC messages as {"offset":…,"length":…,"generation":…}.
type Ref struct {
	// Offset is the payload's first byte, relative to the start of the region.
	Offset uint64 `json:"offset"`
	// Length is the payload's length in bytes.
	Length uint64 `json:"length"`
	// Gen is the generation of the region the payload was written in.
	Gen uint32 `json:"generation"`
}

// String renders r for logs and errors.
func (r Ref) String() string {
	return fmt.Sprintf("ref{offset %d, length %d, generation %d}", r.Offset, r.Length, r.Gen)
}

// Put copies p into the arena this side writes and returns its reference. A
// payload over [Region.MaxPayload] gets [ErrTooLarge]; one that does not fit
// the free space gets [ErrFull]; an empty one gets [ErrBadRef] (send it inline).
func (r *Region) Put(p []byte) (Ref, error) {
	ref, dst, err := r.alloc(len(p))
	if err != nil {
		return Ref{}, err
	}
	copy(dst, p)
	r.life.RUnlock()
	return ref, nil
}

// Alloc reserves n bytes in the arena this side writes and returns their
// reference and the bytes, to be filled in place before the reference is sent.
// Errors are those of [Region.Put].
func (r *Region) Alloc(n int) (Ref, []byte, error) {
	ref, dst, err := r.alloc(n)
	if err != nil {
		return Ref{}, nil, err
	}
	r.life.RUnlock()
	return ref, dst, nil
}

// alloc is Alloc with r.life held shared on success (the caller releases it).
func (r *Region) alloc(n int) (Ref, []byte, error) {
	if n <= 0 {
		return Ref{}, nil, fmt.Errorf("%w: payload of %d bytes: empty payloads travel inline", ErrBadRef, n)
	}
	if limit := r.MaxPayload(); n > limit {
		return Ref{}, nil, fmt.Errorf("%w: payload of %d bytes exceeds the %d-byte arena (largest payload %d bytes; arenas are at most %d bytes)",
			ErrTooLarge, n, r.out.size, limit, MaxArenaSize)
	}
	r.life.RLock()
	if r.closed.Load() {
		r.life.RUnlock()
		return Ref{}, nil, ErrClosed
	}
	gen := r.curGen()
	r.mu.Lock()
	off, err := r.out.alloc(uint64(n), gen)
	r.mu.Unlock()
	if err != nil {
		r.life.RUnlock()
		return Ref{}, nil, err
	}
	h := r.mem[off-blockHeader : off]
	binary.LittleEndian.PutUint32(h[0:], blockMagic)
	binary.LittleEndian.PutUint32(h[4:], gen)
	binary.LittleEndian.PutUint64(h[8:], uint64(n))
	end := off + uint64(n)
	return Ref{Offset: off, Length: uint64(n), Gen: gen}, r.mem[off:end:end], nil
}

// Release frees an allocation this side made, once the peer acknowledged it
// is done with it. The reference must be exactly the one Put or Alloc
// returned; a second release, or a reference from another generation, is an
// error.
func (r *Region) Release(ref Ref) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return ErrClosed
	}
	if gen := r.curGen(); ref.Gen != gen {
		r.refused.Add(1)
		return fmt.Errorf("%w: release of %v: the region is at generation %d", ErrStale, ref, gen)
	}
	r.mu.Lock()
	err := r.out.release(ref.Offset, ref.Length, ref.Gen)
	r.mu.Unlock()
	if err != nil {
		r.refused.Add(1)
		return fmt.Errorf("release %v: %w", ref, err)
	}
	return nil
}

// View returns the payload ref points at in the peer's arena, in place. The
// slice aliases shared memory the peer can still write: use it read-only, treat
// its bytes as untrusted, and use [Region.Copy] when they must not change
// while in use. It must not be used after the peer released the allocation or
// after [Region.Close].
func (r *Region) View(ref Ref) ([]byte, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, ErrClosed
	}
	v, err := r.view(ref)
	if err != nil {
		r.refused.Add(1)
		return nil, err
	}
	return v, nil
}

// Copy returns a private copy of the payload ref points at in the peer's
// arena. The checks are those of [Region.View]; if the peer writes the payload
// during the copy, the copy holds a mix of old and new bytes.
func (r *Region) Copy(ref Ref) ([]byte, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, ErrClosed
	}
	v, err := r.view(ref)
	if err != nil {
		r.refused.Add(1)
		return nil, err
	}
	return append([]byte(nil), v...), nil
}

// view checks ref against the peer's arena; r.life is held. Every value read
// from shared memory is read once, into a local.
func (r *Region) view(ref Ref) ([]byte, error) {
	base, size := r.lay.p2kOff, r.lay.p2kSize
	if r.kernel {
		if err := r.checkHeader(); err != nil {
			return nil, err
		}
	} else {
		base, size = r.lay.k2pOff, r.lay.k2pSize
	}
	gen := r.curGen()
	end := base + size // no overflow: the layout is at most a few hundred MiB
	switch {
	case ref.Length == 0:
		return nil, fmt.Errorf("%w: %v has zero length", ErrBadRef, ref)
	case ref.Gen != gen:
		return nil, fmt.Errorf("%w: %v is of generation %d, the region is at generation %d (the plugin restarted)", ErrStale, ref, ref.Gen, gen)
	case ref.Offset < base+blockHeader || ref.Offset > end:
		return nil, fmt.Errorf("%w: %v starts outside the %s arena [%d, %d)", ErrBadRef, ref, r.peerName(), base+blockHeader, end)
	case ref.Length > end-ref.Offset:
		return nil, fmt.Errorf("%w: %v runs past the end of the %s arena at %d", ErrBadRef, ref, r.peerName(), end)
	case (ref.Offset-base)%blockAlign != 0:
		return nil, fmt.Errorf("%w: %v is not %d-byte aligned in the %s arena", ErrBadRef, ref, blockAlign, r.peerName())
	}
	var h [16]byte
	copy(h[:], r.mem[ref.Offset-blockHeader:]) // once
	bm, bg, bl := binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint64(h[8:])
	if bm != blockMagic || bg != ref.Gen || bl != ref.Length {
		return nil, fmt.Errorf("%w: %v does not match its block header (magic %#x, generation %d, length %d): released, overwritten or never allocated",
			ErrBadRef, ref, bm, bg, bl)
	}
	e := ref.Offset + ref.Length
	return r.mem[ref.Offset:e:e], nil
}

// peerName names the arena this side reads.
func (r *Region) peerName() string {
	if r.kernel {
		return "plugin→kernel"
	}
	return "kernel→plugin"
}
