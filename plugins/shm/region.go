package shm

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sentinel errors; callers test them with errors.Is. Returned errors wrap them
// with the details.
var (
	// ErrTooLarge reports a payload (or an arena size) over the limit; the
	// message names the limit.
	ErrTooLarge = errors.New("shm: too large")
	// ErrBadRef reports a reference that does not point at a live allocation of
	// the peer's arena: out of bounds, misaligned, zero length, or not matching
	// the block it points at.
	ErrBadRef = errors.New("shm: bad reference")
	// ErrStale reports a reference from another generation of the region (it
	// was made before a plugin restart).
	ErrStale = errors.New("shm: stale reference")
	// ErrClosed reports a use of a closed region.
	ErrClosed = errors.New("shm: region closed")
	// ErrFull reports an arena without a free extent large enough for a payload
	// that would fit an empty arena.
	ErrFull = errors.New("shm: arena full")
	// ErrCorrupt reports that the kernel-owned header of the region no longer
	// holds what the kernel wrote: the plugin overwrote it. The kernel refuses
	// to read the plugin's arena until [Region.Reset].
	ErrCorrupt = errors.New("shm: region header overwritten")
	// ErrWrongSide reports a kernel-only call on the plugin side or the reverse.
	ErrWrongSide = errors.New("shm: wrong side of the region")
)

// Fds at which a plugin finds its region (see [Region.ChildFiles]).
const (
	// RegionFD is the memfd holding the region.
	RegionFD = 3
	// DoorbellInFD is the read end of the doorbell the kernel rings.
	DoorbellInFD = 4
	// DoorbellOutFD is the write end of the doorbell the plugin rings.
	DoorbellOutFD = 5
)

// Region is one side of a plugin's shared-memory region: the kernel's (from
// [Create]) or the plugin's (from [Open]). It is safe for concurrent use.
type Region struct {
	kernel bool
	lay    layout
	mem    []byte

	file     *os.File    // the memfd
	child    [2]*os.File // kernel: the plugin's doorbell ends (fd 4 and fd 5 of the child)
	bellOut  int         // our ring-the-peer end (non-blocking)
	bellIn   int         // our woken-by-the-peer end (non-blocking)
	wake     int         // private eventfd that interrupts waits (Close, ctx)
	closeFDs []int       // raw fds to close with the region

	gen atomic.Uint32 // kernel: the generation (authoritative); unused on the plugin side
	// life guards the mapping: every use holds it shared, Close exclusively.
	life   sync.RWMutex
	closed atomic.Bool

	mu  sync.Mutex // guards out and hdr
	out *allocator // the arena this side writes
	hdr [headerBytes]byte

	ringMu sync.Mutex // kernel: serialises producers
	head   uint64     // kernel: last published sequence
	base   uint64     // kernel: head at the last Reset

	waitMu      sync.Mutex // one waiter at a time (NextEvent or Wait)
	next        uint64     // plugin: next sequence to read
	pendingLost uint64     // plugin: lost events not reported yet

	published, dropped, oversized atomic.Uint64
	received, lost, refused       atomic.Uint64
}

// Create makes a kernel-side region for one native plugin: the sealed memfd,
// its mapping and the two doorbells. Pass [Region.ChildFiles] to the plugin
// process as exec.Cmd.ExtraFiles.
func Create(opts Options) (*Region, error) {
	l, err := newLayout(opts)
	if err != nil {
		return nil, err
	}
	r := &Region{kernel: true, lay: l, bellOut: -1, bellIn: -1, wake: -1}
	ok := false
	defer func() {
		if !ok {
			r.release()
		}
	}()
	fd, err := unix.MemfdCreate("hologram-shm", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("shm: memfd_create: %w", err)
	}
	r.file = os.NewFile(uintptr(fd), "hologram-shm")
	if err := unix.Ftruncate(fd, int64(l.size)); err != nil {
		return nil, fmt.Errorf("shm: size region to %d bytes: %w", l.size, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return nil, fmt.Errorf("shm: seal region: %w", err)
	}
	if r.mem, err = unix.Mmap(fd, 0, int(l.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return nil, fmt.Errorf("shm: map region of %d bytes: %w", l.size, err)
	}
	// Doorbell kernel→plugin: the plugin gets the read end, we keep the write end.
	var k2p, p2k [2]int
	if err := unix.Pipe2(k2p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("shm: doorbell pipe: %w", err)
	}
	r.child[0] = os.NewFile(uintptr(k2p[0]), "hologram-shm-bell-in")
	r.bellOut = k2p[1]
	r.closeFDs = append(r.closeFDs, k2p[1])
	if err := unix.Pipe2(p2k[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("shm: doorbell pipe: %w", err)
	}
	r.child[1] = os.NewFile(uintptr(p2k[1]), "hologram-shm-bell-out")
	r.bellIn = p2k[0]
	r.closeFDs = append(r.closeFDs, p2k[0])
	for _, fd := range []int{r.bellOut, r.bellIn} {
		if err := unix.SetNonblock(fd, true); err != nil {
			return nil, fmt.Errorf("shm: doorbell non-blocking: %w", err)
		}
	}
	if err := r.openWake(); err != nil {
		return nil, err
	}
	r.gen.Store(1)
	l.encodeHeader(r.hdr[:], 1, 0)
	copy(r.mem, r.hdr[:])
	r.out = newAllocator(l.k2pOff, l.k2pSize)
	ok = true
	return r, nil
}

// Open maps the plugin side of the region the kernel passed as fds 3 (region),
// 4 (doorbell kernel→plugin) and 5 (doorbell plugin→kernel). The region takes
// ownership of the fds.
func Open() (*Region, error) {
	var st unix.Stat_t
	for _, fd := range []int{RegionFD, DoorbellInFD, DoorbellOutFD} {
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, fmt.Errorf("shm: fd %d: %w (was the plugin started with a shared-memory region?)", fd, err)
		}
	}
	return OpenFiles(os.NewFile(RegionFD, "hologram-shm"), os.NewFile(DoorbellInFD, "hologram-shm-bell-in"), os.NewFile(DoorbellOutFD, "hologram-shm-bell-out"))
}

// OpenFiles is [Open] with explicit files: the region memfd, the doorbell the
// kernel rings and the doorbell the plugin rings. It takes ownership of them
// (also on error).
func OpenFiles(region, doorbellIn, doorbellOut *os.File) (*Region, error) {
	r := &Region{file: region, child: [2]*os.File{doorbellIn, doorbellOut}, bellOut: -1, bellIn: -1, wake: -1}
	ok := false
	defer func() {
		if !ok {
			r.release()
		}
	}()
	if region == nil || doorbellIn == nil || doorbellOut == nil {
		return nil, errors.New("shm: open: a nil file")
	}
	fd := int(region.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("shm: stat region: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < controlSize {
		return nil, fmt.Errorf("shm: fd %d is not a shared-memory region (mode %#o, %d bytes)", fd, st.Mode, st.Size)
	}
	hb := make([]byte, headerBytes)
	if _, err := unix.Pread(fd, hb, 0); err != nil {
		return nil, fmt.Errorf("shm: read region header: %w", err)
	}
	h, err := parseHeader(hb, uint64(st.Size))
	if err != nil {
		return nil, err
	}
	r.lay = h.layout
	if r.mem, err = unix.Mmap(fd, 0, int(h.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return nil, fmt.Errorf("shm: map region of %d bytes: %w", h.size, err)
	}
	r.bellIn, r.bellOut = int(doorbellIn.Fd()), int(doorbellOut.Fd())
	for _, fd := range []int{r.bellIn, r.bellOut} {
		if err := unix.SetNonblock(fd, true); err != nil {
			return nil, fmt.Errorf("shm: doorbell fd %d: %w", fd, err)
		}
	}
	if err := r.openWake(); err != nil {
		return nil, err
	}
	r.out = newAllocator(h.p2kOff, h.p2kSize)
	r.startReader()
	ok = true
	return r, nil
}

// openWake makes the private eventfd that interrupts waits.
func (r *Region) openWake() error {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("shm: eventfd: %w", err)
	}
	r.wake = fd
	r.closeFDs = append(r.closeFDs, fd)
	return nil
}

// ChildFiles returns exactly [region, doorbell kernel→plugin, doorbell
// plugin→kernel] for exec.Cmd.ExtraFiles, so the plugin finds them as fds 3,
// 4 and 5. The files stay owned by the region (do not close them); the same
// files serve a restarted plugin after [Region.Reset]. On the plugin side it
// returns nil.
func (r *Region) ChildFiles() []*os.File {
	if !r.kernel {
		return nil
	}
	return []*os.File{r.file, r.child[0], r.child[1]}
}

// Kernel reports whether r is the kernel side.
func (r *Region) Kernel() bool { return r.kernel }

// Generation returns the region's current generation (the one new references
// carry).
func (r *Region) Generation() uint32 {
	if r.kernel {
		return r.gen.Load()
	}
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return 0
	}
	return r.curGen()
}

// curGen is Generation with r.life held: the kernel's private value, or on the
// plugin side the one the kernel last wrote in the header.
func (r *Region) curGen() uint32 {
	if r.kernel {
		return r.gen.Load()
	}
	return atomic.LoadUint32(r.u32(hGen))
}

// ArenaSize returns the size of each arena in bytes.
func (r *Region) ArenaSize() int64 { return int64(r.lay.k2pSize) }

// MaxPayload returns the largest payload [Region.Put] accepts.
func (r *Region) MaxPayload() int { return int(r.lay.k2pSize - blockHeader) }

// MaxEvent returns the largest event [Region.Publish] carries.
func (r *Region) MaxEvent() int { return int(r.lay.slotSize - slotHeader) }

// Stats are a region's counters.
type Stats struct {
	// Kernel reports whether these are the kernel side's.
	Kernel bool
	// Generation is the current generation.
	Generation uint32
	// ArenaSize is the size of each arena in bytes.
	ArenaSize int64
	// InUse is the number of bytes held by live allocations in the arena this
	// side writes (block headers and padding included).
	InUse int64
	// Allocations is the number of live allocations in that arena.
	Allocations int
	// Published counts events the kernel wrote to the ring.
	Published uint64
	// Dropped counts events the kernel overwrote before the plugin read them.
	Dropped uint64
	// Oversized counts events refused because they exceed a ring slot.
	Oversized uint64
	// Received counts events the plugin read.
	Received uint64
	// Lost counts events the plugin missed because the kernel lapped it.
	Lost uint64
	// Refused counts references refused by View, Copy or Release.
	Refused uint64
}

// Stats returns r's counters.
func (r *Region) Stats() Stats {
	r.mu.Lock()
	inUse, n := r.out.inUse, len(r.out.live)
	r.mu.Unlock()
	return Stats{
		Kernel:      r.kernel,
		Generation:  r.Generation(),
		ArenaSize:   r.ArenaSize(),
		InUse:       int64(inUse),
		Allocations: n,
		Published:   r.published.Load(),
		Dropped:     r.dropped.Load(),
		Oversized:   r.oversized.Load(),
		Received:    r.received.Load(),
		Lost:        r.lost.Load(),
		Refused:     r.refused.Load(),
	}
}

// Check reports whether the region header still holds what the kernel wrote
// (kernel side: it wraps [ErrCorrupt] otherwise) or still parses (plugin side).
func (r *Region) Check() error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return ErrClosed
	}
	return r.checkHeader()
}

// checkHeader is Check with r.life held.
func (r *Region) checkHeader() error {
	var got [headerBytes]byte
	copy(got[:], r.mem[:headerBytes]) // read shared memory once
	if !r.kernel {
		_, err := parseHeader(got[:], r.lay.size)
		return err
	}
	r.mu.Lock()
	want := r.hdr
	r.mu.Unlock()
	if got != want {
		i := 0
		for i < headerBytes && got[i] == want[i] {
			i++
		}
		return fmt.Errorf("%w: byte %d is %#x, the kernel wrote %#x", ErrCorrupt, i, got[i], want[i])
	}
	return nil
}

// Reset starts a new generation (kernel side): every allocation of both arenas
// is forgotten and its references become stale, the header is rewritten, the
// event ring restarts after the events published so far, and the kernel's
// doorbell is drained. Call it after the plugin process exited and before starting its
// successor with the same [Region.ChildFiles].
func (r *Region) Reset() error {
	if !r.kernel {
		return fmt.Errorf("%w: Reset is the kernel's", ErrWrongSide)
	}
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return ErrClosed
	}
	r.ringMu.Lock()
	defer r.ringMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	gen := r.gen.Load() + 1
	if gen == 0 {
		gen = 1
	}
	r.out.reset()
	r.base = r.head
	atomic.StoreUint64(r.u64(offHead), r.head)
	atomic.StoreUint64(r.u64(offReadSeq), r.head)
	atomic.StoreUint32(r.u32(offWaiting), 0)
	r.lay.encodeHeader(r.hdr[:], gen, r.base)
	copy(r.mem[:headerBytes], r.hdr[:])
	r.gen.Store(gen)
	// Rings the old process left for us are stale. Those it did not read
	// stay in its pipe (another process holding that end could race a read
	// and block us): the new process just wakes once for nothing.
	drain(r.bellIn)
	return nil
}

// Close unmaps the region and closes its files; blocked NextEvent and Wait
// calls return ErrClosed first. Views and allocations must not be used after
// Close. Closing twice is a no-op.
func (r *Region) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return nil
	}
	r.poke()
	r.life.Lock()
	defer r.life.Unlock()
	return r.release()
}

// release frees what r holds; it tolerates a partly built region.
func (r *Region) release() error {
	var errs []error
	if r.mem != nil {
		if err := unix.Munmap(r.mem); err != nil {
			errs = append(errs, fmt.Errorf("shm: unmap: %w", err))
		}
		r.mem = nil
	}
	for _, fd := range r.closeFDs {
		unix.Close(fd)
	}
	r.closeFDs = nil
	for _, f := range []*os.File{r.file, r.child[0], r.child[1]} {
		if f != nil {
			if err := f.Close(); err != nil {
				errs = append(errs, fmt.Errorf("shm: close: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// u64 returns the shared word at off (8-byte aligned, inside the mapping).
func (r *Region) u64(off uint64) *uint64 {
	return (*uint64)(unsafe.Pointer(&r.mem[off : off+8][0]))
}

// u32 returns the shared word at off (4-byte aligned, inside the mapping).
func (r *Region) u32(off uint64) *uint32 {
	return (*uint32)(unsafe.Pointer(&r.mem[off : off+4][0]))
}
