package shm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// fuzzOpts keeps fuzz regions small: each input gets a fresh region, so a
// failure reproduces from its input alone.
var fuzzOpts = Options{ArenaSize: 16 << 10, RingSlots: 8, SlotSize: 64}

// blockAt encodes a block header as a plugin would write it.
func blockAt(gen uint32, length uint64) []byte {
	b := make([]byte, blockHeader)
	binary.LittleEndian.PutUint32(b[0:], blockMagic)
	binary.LittleEndian.PutUint32(b[4:], gen)
	binary.LittleEndian.PutUint64(b[8:], length)
	return b
}

// FuzzView is the kernel reading the plugin→kernel arena: the plugin controls
// the arena's bytes (at) and the reference it sends (off, length, gen); mode
// bit 0 makes the offset relative to the arena, bit 1 uses the current
// generation, bit 2 writes header over the region header. View and Copy must
// agree, never panic, and return only bytes inside the arena whose block
// header matches the reference.
func FuzzView(f *testing.F) {
	l, err := newLayout(fuzzOpts)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(0), blockAt(1, 10), uint64(blockHeader), uint64(10), uint32(1), uint8(1), []byte(nil))
	f.Add(uint16(0), blockAt(1, 10), uint64(blockHeader), uint64(11), uint32(1), uint8(3), []byte(nil))
	f.Add(uint16(128), blockAt(1, 100), uint64(192), uint64(100), uint32(2), uint8(1), []byte(nil))
	f.Add(uint16(0), blockAt(1, 10), l.p2kOff+blockHeader, uint64(10), uint32(1), uint8(2), []byte(nil))
	f.Add(uint16(0), blockAt(1, 1<<63), uint64(blockHeader), uint64(1<<63), uint32(1), uint8(3), []byte(nil))
	f.Add(uint16(0), blockAt(1, 10), ^uint64(0), ^uint64(0), uint32(1), uint8(2), []byte(nil))
	f.Add(uint16(16<<10-blockHeader), blockAt(1, 10), uint64(16<<10), uint64(10), uint32(1), uint8(3), []byte(nil))
	f.Add(uint16(0), blockAt(1, 10), uint64(blockHeader), uint64(10), uint32(1), uint8(7), []byte("HOLOSHM\x00\x02"))
	f.Fuzz(func(t *testing.T, at uint16, arena []byte, off, length uint64, gen uint32, mode uint8, header []byte) {
		k, err := Create(fuzzOpts)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		// The plugin writes whatever it likes into its arena and maybe the header.
		copy(k.mem[k.lay.p2kOff+uint64(at)%k.lay.p2kSize:k.lay.size], arena)
		if mode&4 != 0 {
			copy(k.mem[:controlSize], header)
		}
		ref := Ref{Offset: off, Length: length, Gen: gen}
		if mode&1 != 0 {
			ref.Offset += k.lay.p2kOff
		}
		if mode&2 != 0 {
			ref.Gen = k.Generation()
		}
		v, err := k.View(ref)
		c, cerr := k.Copy(ref)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("View: %v; Copy: %v", err, cerr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadRef) && !errors.Is(err, ErrStale) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("View(%v): error without a sentinel: %v", ref, err)
			}
			if v != nil || c != nil {
				t.Fatalf("View(%v) failed but returned bytes", ref)
			}
			if errors.Is(err, ErrCorrupt) != (k.Check() != nil) {
				t.Fatalf("View(%v) = %v but Check() = %v", ref, err, k.Check())
			}
			return
		}
		// Accepted: it must be a real block of the current generation, inside
		// the plugin's arena, with the header intact.
		a0, a1 := k.lay.p2kOff, k.lay.p2kOff+k.lay.p2kSize
		if ref.Length == 0 || ref.Gen != k.Generation() || ref.Offset < a0+blockHeader || ref.Offset+ref.Length > a1 ||
			ref.Offset+ref.Length < ref.Offset || (ref.Offset-a0)%blockAlign != 0 {
			t.Fatalf("View accepted %v outside the arena [%d, %d)", ref, a0, a1)
		}
		if uint64(len(v)) != ref.Length || uint64(cap(v)) != ref.Length || !inside(k, v, a0, a1-a0) || !bytes.Equal(v, c) {
			t.Fatalf("View(%v) returned %d bytes (cap %d)", ref, len(v), cap(v))
		}
		if !bytes.Equal(k.mem[ref.Offset-blockHeader:ref.Offset-blockHeader+16], blockAt(ref.Gen, ref.Length)[:16]) {
			t.Fatalf("View(%v) accepted a block header % x", ref, k.mem[ref.Offset-blockHeader:ref.Offset-blockHeader+16])
		}
		if err := k.Check(); err != nil {
			t.Fatalf("View(%v) accepted with a damaged header: %v", ref, err)
		}
		// Writer-side release of a peer's reference never succeeds.
		if err := k.Release(ref); !errors.Is(err, ErrBadRef) {
			t.Fatalf("kernel released the plugin's %v: %v", ref, err)
		}
	})
}

// FuzzRing is the event ring and the header under garbage: the plugin may
// write anything over the control page (header, head, reader position,
// waiting flag) and the slots between two bursts of events. The kernel's
// Check, Publish and Stats must hold up (they read the reader's words), the
// plugin's header parser must refuse or return a layout inside the file, and
// the plugin's reader must stop, returning only events that fit a slot. When
// nothing was damaged, the reader gets exactly the newest events.
func FuzzRing(f *testing.F) {
	f.Add([]byte{10, 20, 30}, uint8(0), []byte(nil), []byte(nil), uint16(0))
	f.Add(bytes.Repeat([]byte{5}, 30), uint8(0), []byte(nil), []byte(nil), uint16(0))
	f.Add(bytes.Repeat([]byte{48, 49, 0}, 6), uint8(1), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, []byte(nil), uint16(offHead))
	f.Add(bytes.Repeat([]byte{7}, 20), uint8(1), []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, []byte(nil), uint16(offReadSeq))
	f.Add(bytes.Repeat([]byte{9}, 12), uint8(2), []byte(nil), bytes.Repeat([]byte{0xff}, 200), uint16(0))
	f.Add([]byte{1, 2}, uint8(1), []byte("HOLOSHM\x00\x01\x00\x00\x00\x00\x10\x00\x00"), []byte(nil), uint16(0))
	f.Fuzz(func(t *testing.T, events []byte, mode uint8, ctrl, slots []byte, at uint16) {
		k, err := Create(fuzzOpts)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		// The plugin's reader, opened before any event.
		p := &Region{lay: k.lay, mem: k.mem}
		p.startReader()
		// events: each byte is the length of one event (over MaxEvent → refused).
		half := len(events) / 2
		var sent []string
		publish := func(lens []byte) {
			for i, n := range lens {
				ev := bytes.Repeat([]byte{byte('a' + i%26)}, int(n))
				before := k.Stats()
				dropped, err := k.PublishEvent(ev)
				after := k.Stats()
				switch {
				case int(n) > k.MaxEvent():
					if !errors.Is(err, ErrTooLarge) || dropped || after.Oversized != before.Oversized+1 {
						t.Fatalf("event of %d bytes: %v, %v", n, dropped, err)
					}
					continue
				case err != nil:
					t.Fatalf("event of %d bytes: %v", n, err)
				}
				sent = append(sent, string(ev))
				if after.Published != before.Published+1 || after.Dropped != before.Dropped+b2u(dropped) {
					t.Fatalf("stats %+v → %+v for a publish that dropped=%v", before, after, dropped)
				}
			}
		}
		publish(events[:half])
		if mode&1 != 0 {
			copy(k.mem[min(uint64(at), controlSize):controlSize], ctrl)
		}
		if mode&2 != 0 {
			copy(k.mem[k.lay.ringOff+uint64(at)%(k.lay.slots*k.lay.slotSize):k.lay.k2pOff], slots)
		}
		damaged := mode&3 != 0
		publish(events[half:])
		s := k.Stats()
		if s.Dropped > s.Published || s.Published != uint64(len(sent)) {
			t.Fatalf("stats %+v for %d events", s, len(sent))
		}
		var hb [headerBytes]byte
		copy(hb[:], k.mem)
		if err := k.Check(); (err != nil) != (hb != k.hdr) || (err != nil && !errors.Is(err, ErrCorrupt)) {
			t.Fatalf("Check() = %v with header % x", err, hb)
		}

		// The plugin's side of the same memory.
		if h, err := parseHeader(hb[:], k.lay.size); err == nil {
			// Another consistent header may parse, but only one inside the file.
			l := h.layout
			if l.size != k.lay.size || l.ringOff < controlSize || l.ringOff+l.slots*l.slotSize > l.k2pOff ||
				l.k2pOff+l.k2pSize != l.p2kOff || l.p2kOff+l.p2kSize != l.size || h.gen == 0 || l.slotSize <= slotHeader {
				t.Fatalf("accepted layout %+v does not fit a %d-byte region", l, k.lay.size)
			}
		} else if hb == k.hdr {
			t.Fatalf("the kernel's own header was refused: %v", err)
		}
		drainReader := func(p *Region) (got []string) {
			for range 4 * k.lay.slots {
				ev, ok := p.readEvent()
				if !ok {
					return got
				}
				if len(ev) > p.MaxEvent() {
					t.Fatalf("the reader returned %d bytes from a %d-byte slot", len(ev), k.lay.slotSize)
				}
				got = append(got, string(ev))
			}
			if !damaged {
				t.Fatal("the reader never ran out of events")
			}
			return got
		}
		got := drainReader(p)
		// A reader opened now starts from whatever the control page says.
		late := &Region{lay: k.lay, mem: k.mem}
		late.startReader()
		drainReader(late)
		if damaged {
			return
		}
		want := sent[max(0, len(sent)-int(k.lay.slots)):]
		if fmt.Sprint(got) != fmt.Sprint(want) || p.pendingLost != uint64(len(sent)-len(want)) || s.Dropped != p.pendingLost {
			t.Fatalf("read %q (lost %d, kernel dropped %d), want %q", got, p.pendingLost, s.Dropped, want)
		}
	})
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
