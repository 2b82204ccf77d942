package shm

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestNewLayout(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		arena   uint64
		slots   uint64
		slot    uint64
		wantErr string
		is      error
	}{
		{name: "defaults", arena: DefaultArenaSize, slots: DefaultRingSlots, slot: DefaultSlotSize},
		{name: "max arena", opts: Options{ArenaSize: MaxArenaSize}, arena: MaxArenaSize, slots: DefaultRingSlots, slot: DefaultSlotSize},
		{name: "rounded up to a page", opts: Options{ArenaSize: 5000, RingSlots: 2, SlotSize: 64}, arena: 8192, slots: 2, slot: 64},
		{name: "arena too large", opts: Options{ArenaSize: MaxArenaSize + 1}, wantErr: "exceeds the limit of 268435456", is: ErrTooLarge},
		{name: "negative arena", opts: Options{ArenaSize: -1}, wantErr: "negative"},
		{name: "slots not a power of two", opts: Options{RingSlots: 3}, wantErr: "ring slots 3"},
		{name: "one slot", opts: Options{RingSlots: 1}, wantErr: "ring slots 1"},
		{name: "too many slots", opts: Options{RingSlots: 1 << 17}, wantErr: "ring slots 131072"},
		{name: "negative slots", opts: Options{RingSlots: -4}, wantErr: "ring slots"},
		{name: "slot not a multiple of 64", opts: Options{SlotSize: 100}, wantErr: "slot size 100"},
		{name: "slot too small", opts: Options{SlotSize: 32}, wantErr: "slot size 32"},
		{name: "ring too large", opts: Options{RingSlots: 1 << 16, SlotSize: 4096}, wantErr: "exceeds 67108864"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := newLayout(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Fatalf("err = %v, want errors.Is %v", err, tt.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.k2pSize != tt.arena || l.p2kSize != tt.arena || l.slots != tt.slots || l.slotSize != tt.slot {
				t.Fatalf("layout %+v, want arenas %d, %d slots of %d", l, tt.arena, tt.slots, tt.slot)
			}
			if l.ringOff != controlSize || l.k2pOff%pageSize != 0 || l.k2pOff < l.ringOff+l.slots*l.slotSize ||
				l.p2kOff != l.k2pOff+l.k2pSize || l.size != l.p2kOff+l.p2kSize {
				t.Fatalf("inconsistent layout %+v", l)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	l, err := newLayout(Options{ArenaSize: 1 << 20, RingSlots: 16, SlotSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	good := make([]byte, headerBytes)
	l.encodeHeader(good, 7, 42)
	h, err := parseHeader(good, l.size)
	if err != nil {
		t.Fatal(err)
	}
	if h.layout != l || h.gen != 7 || h.ringBase != 42 {
		t.Fatalf("parsed %+v, want %+v gen 7 base 42", h, l)
	}
	le := binary.LittleEndian
	tests := []struct {
		name    string
		edit    func(b []byte)
		keep    int    // bytes of the header kept; 0 = all
		size    uint64 // file size; 0 = the layout's
		wantErr string
	}{
		{name: "short", keep: 64, wantErr: "header of 64 bytes"},
		{name: "magic", edit: func(b []byte) { b[0] = 'X' }, wantErr: "not a hologram shared-memory region"},
		{name: "version", edit: func(b []byte) { le.PutUint32(b[hVersion:], 2) }, wantErr: "version 2, this side speaks version 1"},
		{name: "control size", edit: func(b []byte) { le.PutUint32(b[hControl:], 8192) }, wantErr: "control page of 8192"},
		{name: "flags", edit: func(b []byte) { le.PutUint32(b[hFlags:], 1) }, wantErr: "unknown header flags"},
		{name: "reserved", edit: func(b []byte) { b[100] = 1 }, wantErr: "reserved header byte 100"},
		{name: "generation 0", edit: func(b []byte) { le.PutUint32(b[hGen:], 0) }, wantErr: "generation 0"},
		{name: "slots", edit: func(b []byte) { le.PutUint32(b[hSlots:], 17) }, wantErr: "ring slots 17"},
		{name: "slot size", edit: func(b []byte) { le.PutUint32(b[hSlotSize:], 65) }, wantErr: "slot size 65"},
		{name: "arena size huge", edit: func(b []byte) { le.PutUint64(b[hP2KSize:], 1<<62) }, wantErr: "arena size 4611686018427387904"},
		{name: "arena offset", edit: func(b []byte) { le.PutUint64(b[hP2KOff:], l.p2kOff+pageSize) }, wantErr: "inconsistent"},
		{name: "ring offset", edit: func(b []byte) { le.PutUint64(b[hRingOff:], 0) }, wantErr: "inconsistent"},
		{name: "region size", edit: func(b []byte) { le.PutUint64(b[hSize:], l.size-1) }, wantErr: "inconsistent"},
		{name: "file smaller", size: l.size - pageSize, wantErr: "the region file has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := append([]byte(nil), good...)
			if tt.keep != 0 {
				b = b[:tt.keep]
			}
			if tt.edit != nil {
				tt.edit(b)
			}
			size := l.size
			if tt.size != 0 {
				size = tt.size
			}
			_, err := parseHeader(b, size)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
