package shm

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// smallOpts keeps test regions small.
var smallOpts = Options{ArenaSize: 64 << 10, RingSlots: 8, SlotSize: 128}

// newKernel makes a kernel-side region closed at the end of the test.
func newKernel(t testing.TB, opts Options) *Region {
	t.Helper()
	k, err := Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// openPlugin opens the plugin side of k in this process, on duplicates of the
// files the kernel would pass to a child.
func openPlugin(t testing.TB, k *Region) *Region {
	t.Helper()
	var files [3]*os.File
	for i, f := range k.ChildFiles() {
		fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = os.NewFile(uintptr(fd), f.Name())
	}
	p, err := OpenFiles(files[0], files[1], files[2])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// newPair makes both sides of one region in this process.
func newPair(t testing.TB, opts Options) (k, p *Region) {
	t.Helper()
	k = newKernel(t, opts)
	return k, openPlugin(t, k)
}

// inside reports whether v lies within [off, off+size) of r's mapping.
func inside(r *Region, v []byte, off, size uint64) bool {
	if len(v) == 0 {
		return true
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.mem)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	return start >= base+uintptr(off) && start+uintptr(cap(v)) <= base+uintptr(off+size)
}

func TestCreateAndOpen(t *testing.T) {
	k, p := newPair(t, smallOpts)
	files := k.ChildFiles()
	if len(files) != 3 {
		t.Fatalf("ChildFiles() = %d files, want 3", len(files))
	}
	seals, err := unix.FcntlInt(files[0].Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL; seals&want != want {
		t.Fatalf("seals %#x, want %#x", seals, want)
	}
	if err := unix.Ftruncate(int(files[0].Fd()), 0); !errors.Is(err, unix.EPERM) {
		t.Fatalf("truncating the region: %v, want EPERM", err)
	}
	if p.ChildFiles() != nil {
		t.Fatal("the plugin side has child files")
	}
	if !k.Kernel() || p.Kernel() {
		t.Fatal("sides mixed up")
	}
	if k.Generation() != 1 || p.Generation() != 1 {
		t.Fatalf("generations %d, %d, want 1", k.Generation(), p.Generation())
	}
	if k.lay != p.lay {
		t.Fatalf("layouts differ: kernel %+v, plugin %+v", k.lay, p.lay)
	}
	if err := k.Check(); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if got := k.MaxPayload(); got != 64<<10-blockHeader {
		t.Fatalf("MaxPayload() = %d", got)
	}
	if got := k.MaxEvent(); got != 128-slotHeader {
		t.Fatalf("MaxEvent() = %d", got)
	}
}

func TestOpenRefusesBadFiles(t *testing.T) {
	tmp, err := os.CreateTemp(t.TempDir(), "region")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(make([]byte, 2*pageSize)); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFiles(tmp, r, w); err == nil || !strings.Contains(err.Error(), "not a hologram shared-memory region") {
		t.Fatalf("OpenFiles(zero file) = %v", err)
	}
	r, w, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	if _, err := OpenFiles(r, w, w2); err == nil || !strings.Contains(err.Error(), "is not a shared-memory region") {
		t.Fatalf("OpenFiles(pipe) = %v", err)
	}
	if _, err := OpenFiles(nil, nil, nil); err == nil {
		t.Fatal("OpenFiles(nil) succeeded")
	}
}

func TestPutViewBothWays(t *testing.T) {
	k, p := newPair(t, smallOpts)
	for _, tc := range []struct {
		name           string
		writer, reader *Region
	}{{"kernel to plugin", k, p}, {"plugin to kernel", p, k}} {
		t.Run(tc.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte(tc.name), 1000)
			ref, err := tc.writer.Put(payload)
			if err != nil {
				t.Fatal(err)
			}
			v, err := tc.reader.View(ref)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(v, payload) || cap(v) != len(payload) {
				t.Fatalf("view of %d bytes (cap %d) differs from the payload", len(v), cap(v))
			}
			c, err := tc.reader.Copy(ref)
			if err != nil || !bytes.Equal(c, payload) {
				t.Fatalf("Copy = %d bytes, %v", len(c), err)
			}
			// The writer cannot view its own arena with View: it reads the peer's.
			if _, err := tc.writer.View(ref); !errors.Is(err, ErrBadRef) {
				t.Fatalf("writer viewing its own arena: %v, want ErrBadRef", err)
			}
			ref2, buf, err := tc.writer.Alloc(5)
			if err != nil {
				t.Fatal(err)
			}
			copy(buf, "hello")
			if c, err := tc.reader.Copy(ref2); err != nil || string(c) != "hello" {
				t.Fatalf("Copy(in-place) = %q, %v", c, err)
			}
			if s := tc.writer.Stats(); s.Allocations != 2 || s.InUse != int64(blockSize(uint64(len(payload)))+blockSize(5)) {
				t.Fatalf("stats %+v", s)
			}
			for _, r := range []Ref{ref, ref2} {
				if err := tc.writer.Release(r); err != nil {
					t.Fatal(err)
				}
			}
			if s := tc.writer.Stats(); s.Allocations != 0 || s.InUse != 0 {
				t.Fatalf("stats after release %+v", s)
			}
			// A new allocation over a released block rewrites its block
			// header: the old reference stops matching.
			if _, err := tc.writer.Put(bytes.Repeat([]byte{1}, 3*64)); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.reader.View(ref); !errors.Is(err, ErrBadRef) {
				t.Fatalf("view of a reused block: %v, want ErrBadRef", err)
			}
		})
	}
}

func TestRefJSON(t *testing.T) {
	b, err := json.Marshal(Ref{Offset: 4096, Length: 10, Gen: 3})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"offset":4096,"length":10,"generation":3}` {
		t.Fatalf("Ref JSON %s", b)
	}
	var r Ref
	if err := json.Unmarshal([]byte(`{"offset":1,"length":2,"generation":3}`), &r); err != nil || r != (Ref{1, 2, 3}) {
		t.Fatalf("decoded %+v, %v", r, err)
	}
}

func TestViewChecks(t *testing.T) {
	k, p := newPair(t, smallOpts)
	good, err := p.Put([]byte("payload in the plugin arena"))
	if err != nil {
		t.Fatal(err)
	}
	base, end := k.lay.p2kOff, k.lay.p2kOff+k.lay.p2kSize
	tests := []struct {
		name   string
		ref    Ref
		is     error
		errHas string
	}{
		{name: "good", ref: good},
		{name: "zero length", ref: Ref{good.Offset, 0, 1}, is: ErrBadRef, errHas: "zero length"},
		{name: "zero ref", ref: Ref{}, is: ErrBadRef, errHas: "zero length"},
		{name: "wrong generation", ref: Ref{good.Offset, good.Length, 2}, is: ErrStale, errHas: "generation 2, the region is at generation 1"},
		{name: "generation 0", ref: Ref{good.Offset, good.Length, 0}, is: ErrStale},
		{name: "before the arena", ref: Ref{base, 1, 1}, is: ErrBadRef, errHas: "starts outside the plugin→kernel arena"},
		{name: "in the header", ref: Ref{16, 8, 1}, is: ErrBadRef, errHas: "starts outside"},
		{name: "kernel arena", ref: Ref{k.lay.k2pOff + blockHeader, 8, 1}, is: ErrBadRef, errHas: "starts outside"},
		{name: "past the end", ref: Ref{end + blockHeader, 1, 1}, is: ErrBadRef, errHas: "starts outside"},
		{name: "offset max", ref: Ref{^uint64(0), 1, 1}, is: ErrBadRef, errHas: "starts outside"},
		{name: "runs past the end", ref: Ref{end - 64, 65, 1}, is: ErrBadRef, errHas: "runs past the end"},
		{name: "length overflows", ref: Ref{good.Offset, ^uint64(0) - good.Offset + 2, 1}, is: ErrBadRef, errHas: "runs past the end"},
		{name: "length max", ref: Ref{good.Offset, ^uint64(0), 1}, is: ErrBadRef, errHas: "runs past the end"},
		{name: "at the end", ref: Ref{end, 1, 1}, is: ErrBadRef, errHas: "runs past the end"},
		{name: "misaligned", ref: Ref{good.Offset + 8, 4, 1}, is: ErrBadRef, errHas: "aligned"},
		{name: "wrong length", ref: Ref{good.Offset, good.Length - 1, 1}, is: ErrBadRef, errHas: "does not match its block header"},
		{name: "longer than the block", ref: Ref{good.Offset, good.Length + 1000, 1}, is: ErrBadRef, errHas: "does not match its block header"},
		{name: "unallocated block", ref: Ref{good.Offset + 1024, 10, 1}, is: ErrBadRef, errHas: "magic 0x0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := k.Stats().Refused
			v, err := k.View(tt.ref)
			c, cerr := k.Copy(tt.ref)
			if tt.is == nil {
				if err != nil || cerr != nil {
					t.Fatalf("View: %v, Copy: %v", err, cerr)
				}
				if !inside(k, v, base, end-base) || !bytes.Equal(v, c) {
					t.Fatal("view outside the arena or differs from the copy")
				}
				return
			}
			for _, e := range []error{err, cerr} {
				if !errors.Is(e, tt.is) || !strings.Contains(e.Error(), tt.errHas) {
					t.Fatalf("err = %v, want %v containing %q", e, tt.is, tt.errHas)
				}
			}
			if v != nil || c != nil {
				t.Fatal("a refused reference returned bytes")
			}
			if got := k.Stats().Refused - before; got != 2 {
				t.Fatalf("refused counter moved by %d, want 2", got)
			}
		})
	}
}

func TestPutLimits(t *testing.T) {
	k, _ := newPair(t, smallOpts)
	if _, err := k.Put(make([]byte, k.MaxPayload()+1)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "exceeds the 65536-byte arena") {
		t.Fatalf("Put(too large) = %v", err)
	}
	if _, _, err := k.Alloc(-1); !errors.Is(err, ErrBadRef) {
		t.Fatalf("Alloc(-1) = %v", err)
	}
	if _, err := k.Put(nil); !errors.Is(err, ErrBadRef) || !strings.Contains(err.Error(), "inline") {
		t.Fatalf("Put(nil) = %v", err)
	}
	ref, err := k.Put(make([]byte, k.MaxPayload()))
	if err != nil {
		t.Fatalf("Put(max) = %v", err)
	}
	if _, err := k.Put([]byte{1}); !errors.Is(err, ErrFull) {
		t.Fatalf("Put(into a full arena) = %v", err)
	}
	if err := k.Release(ref); err != nil {
		t.Fatal(err)
	}
	if err := k.Release(ref); !errors.Is(err, ErrBadRef) {
		t.Fatalf("second Release = %v", err)
	}
	if err := k.Release(Ref{ref.Offset, ref.Length, 9}); !errors.Is(err, ErrStale) {
		t.Fatalf("Release(other generation) = %v", err)
	}
}

func TestResetMakesReferencesStale(t *testing.T) {
	k := newKernel(t, smallOpts)
	p := openPlugin(t, k)
	kref, err := k.Put([]byte("kernel data"))
	if err != nil {
		t.Fatal(err)
	}
	pref, err := p.Put([]byte("plugin data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Reset(); !errors.Is(err, ErrWrongSide) {
		t.Fatalf("plugin Reset = %v", err)
	}
	p.Close() // the plugin process ends
	if err := k.Reset(); err != nil {
		t.Fatal(err)
	}
	if k.Generation() != 2 || k.Stats().Allocations != 0 {
		t.Fatalf("after Reset: %+v", k.Stats())
	}
	if _, err := k.View(pref); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "restarted") {
		t.Fatalf("View(old plugin ref) = %v", err)
	}
	if err := k.Release(kref); !errors.Is(err, ErrStale) {
		t.Fatalf("Release(old kernel ref) = %v", err)
	}
	p2 := openPlugin(t, k) // its successor
	if p2.Generation() != 2 {
		t.Fatalf("new plugin sees generation %d", p2.Generation())
	}
	if _, err := p2.View(kref); !errors.Is(err, ErrStale) {
		t.Fatalf("new plugin viewing an old ref: %v", err)
	}
	ref, err := p2.Put([]byte("fresh"))
	if err != nil {
		t.Fatal(err)
	}
	if ref.Gen != 2 {
		t.Fatalf("new ref of generation %d", ref.Gen)
	}
	if c, err := k.Copy(ref); err != nil || string(c) != "fresh" {
		t.Fatalf("Copy = %q, %v", c, err)
	}
}

func TestHeaderOverwritten(t *testing.T) {
	k, p := newPair(t, smallOpts)
	ref, err := p.Put([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	p.mem[hGen]++ // the plugin scribbles on the kernel's header
	if err := k.Check(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "byte 16") {
		t.Fatalf("Check = %v", err)
	}
	if _, err := k.View(ref); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("View after the header was overwritten: %v", err)
	}
	if err := k.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(); err != nil {
		t.Fatalf("Check after Reset: %v", err)
	}
}

func TestClose(t *testing.T) {
	k, p := newPair(t, smallOpts)
	ref, err := p.Put([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Region{k, p} {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
	if _, err := k.View(ref); !errors.Is(err, ErrClosed) {
		t.Fatalf("View after Close: %v", err)
	}
	if _, err := k.Copy(ref); !errors.Is(err, ErrClosed) {
		t.Fatalf("Copy after Close: %v", err)
	}
	if _, err := p.Put([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	if err := p.Release(ref); !errors.Is(err, ErrClosed) {
		t.Fatalf("Release after Close: %v", err)
	}
	if _, err := k.PublishEvent([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close: %v", err)
	}
	if err := k.Reset(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reset after Close: %v", err)
	}
	if err := k.Check(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Check after Close: %v", err)
	}
	if err := p.Notify(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after Close: %v", err)
	}
	if _, _, err := p.NextEvent(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("NextEvent after Close: %v", err)
	}
	if _, err := k.Wait(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait after Close: %v", err)
	}
	if g := p.Generation(); g != 0 {
		t.Fatalf("Generation after Close = %d", g)
	}
}
