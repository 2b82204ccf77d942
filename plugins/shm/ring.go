package shm

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// Publish writes event to the ring for the plugin (kernel side) and rings its
// doorbell if it sleeps. It never blocks on the plugin. It reports whether an
// event was lost: this one overwrote an event the plugin had not read yet, or
// this one could not be published at all (see [Region.PublishEvent] for why).
func (r *Region) Publish(event []byte) (dropped bool) {
	dropped, err := r.PublishEvent(event)
	return dropped || err != nil
}

// PublishEvent is [Region.Publish] with an error for an event that was not
// published: wrapping [ErrTooLarge] above [Region.MaxEvent] (put such payloads
// in the arena and publish a reference), [ErrWrongSide] on the plugin side,
// [ErrClosed]. dropped reports whether publishing overwrote an unread event.
func (r *Region) PublishEvent(event []byte) (dropped bool, err error) {
	if !r.kernel {
		return false, fmt.Errorf("%w: only the kernel publishes events", ErrWrongSide)
	}
	if len(event) > r.MaxEvent() {
		r.oversized.Add(1)
		return false, fmt.Errorf("%w: event of %d bytes exceeds the %d-byte ring slot payload (Options.SlotSize %d)", ErrTooLarge, len(event), r.MaxEvent(), r.lay.slotSize)
	}
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return false, ErrClosed
	}
	r.ringMu.Lock()
	defer r.ringMu.Unlock()
	n := r.head + 1
	if n > r.lay.slots {
		// This write overwrites event n-slots. The reader position is the
		// plugin's word: read it once, and it only affects this count.
		old := n - r.lay.slots
		consumed := atomic.LoadUint64(r.u64(offReadSeq))
		if old > r.base && consumed < old {
			dropped = true
			r.dropped.Add(1)
		}
	}
	s := r.slot(n)
	seq := r.u64(s)
	atomic.StoreUint64(seq, 0) // in progress
	binary.LittleEndian.PutUint32(r.mem[s+8:], uint32(len(event)))
	copy(r.mem[s+slotHeader:s+r.lay.slotSize], event)
	atomic.StoreUint64(seq, n)
	atomic.StoreUint64(r.u64(offHead), n)
	r.head = n
	r.published.Add(1)
	if atomic.LoadUint32(r.u32(offWaiting)) != 0 {
		ring(r.bellOut)
	}
	return dropped, nil
}

// slot returns the offset of the slot holding sequence seq (≥ 1).
func (r *Region) slot(seq uint64) uint64 {
	return r.lay.ringOff + ((seq-1)&(r.lay.slots-1))*r.lay.slotSize
}

// startReader places the plugin's reader at the oldest event still in the
// ring that belongs to the current generation.
func (r *Region) startReader() {
	head := atomic.LoadUint64(r.u64(offHead))
	base := min(binary.LittleEndian.Uint64(r.mem[hRingBase:]), head)
	if head > r.lay.slots {
		base = max(base, head-r.lay.slots)
	}
	r.next = base + 1
	atomic.StoreUint64(r.u64(offReadSeq), base)
}

// NextEvent returns the next kernel event (plugin side), blocking until one is
// published, ctx ends or the region closes. lost counts the events the reader
// missed just before this one because the kernel overwrote them first. The
// returned slice is the caller's.
func (r *Region) NextEvent(ctx context.Context) (ev []byte, lost uint64, err error) {
	if r.kernel {
		return nil, 0, fmt.Errorf("%w: only the plugin reads events", ErrWrongSide)
	}
	r.waitMu.Lock()
	defer r.waitMu.Unlock()
	for {
		ev, ok, err := r.nextEvent(ctx)
		if err != nil {
			return nil, 0, err // lost events are reported with the next event
		}
		if ok {
			lost, r.pendingLost = r.pendingLost, 0
			return ev, lost, nil
		}
	}
}

// nextEvent makes one attempt: read an event, or sleep on the doorbell once.
func (r *Region) nextEvent(ctx context.Context) ([]byte, bool, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, false, ErrClosed
	}
	if ev, ok := r.readEvent(); ok {
		return ev, true, nil
	}
	waiting := r.u32(offWaiting)
	atomic.StoreUint32(waiting, 1)
	if ev, ok := r.readEvent(); ok {
		atomic.StoreUint32(waiting, 0)
		return ev, true, nil
	}
	err := r.waitFD(ctx, r.bellIn)
	atomic.StoreUint32(waiting, 0)
	drain(r.bellIn)
	return nil, false, err
}

// readEvent reads the next event if there is one, accounting lost events in
// r.pendingLost. Only the plugin calls it, under r.waitMu and r.life. The ring
// is the kernel's, but a garbage ring still cannot make it loop forever, read
// outside a slot or return more than a slot's payload.
func (r *Region) readEvent() ([]byte, bool) {
	slots, capacity := r.lay.slots, r.lay.slotSize-slotHeader
	for range 2*slots + 8 {
		head := atomic.LoadUint64(r.u64(offHead))
		if head < r.next {
			return nil, false
		}
		if head-r.next >= slots {
			skip := head - slots + 1 - r.next
			r.pendingLost += skip
			r.lost.Add(skip)
			r.next += skip
		}
		s := r.slot(r.next)
		seq := r.u64(s)
		if atomic.LoadUint64(seq) != r.next {
			// Being overwritten (0), overwritten already (later), or garbage:
			// the event is gone.
			r.skipLost()
			continue
		}
		n := uint64(binary.LittleEndian.Uint32(r.mem[s+8:]))
		if n > capacity {
			r.skipLost()
			continue
		}
		ev := make([]byte, n)
		copy(ev, r.mem[s+slotHeader:s+slotHeader+n])
		if atomic.LoadUint64(seq) != r.next { // overwritten during the copy
			r.skipLost()
			continue
		}
		atomic.StoreUint64(r.u64(offReadSeq), r.next)
		r.next++
		r.received.Add(1)
		return ev, true
	}
	return nil, false
}

// skipLost counts the event at r.next as lost and moves past it.
func (r *Region) skipLost() {
	r.pendingLost++
	r.lost.Add(1)
	r.next++
}
