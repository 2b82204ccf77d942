// Package shm is the shared-memory data plane between the kernel and one native
// plugin (ARCHITECTURE.md §5, "Bulk data"): a memfd region with two arenas for
// bulk payloads and an event ring for kernel events, plus two doorbells.
//
// The kernel makes a region with [Create] and passes [Region.ChildFiles] to the
// plugin process as exec.Cmd.ExtraFiles, so that the plugin finds them as
// fd 3 (the region), fd 4 (doorbell kernel→plugin) and fd 5 (doorbell
// plugin→kernel); the plugin maps them with [Open]. Control messages keep
// travelling as JSON-RPC over stdin/stdout: they carry [Ref] values
// ({"offset":…,"length":…,"generation":…}) instead of the bytes. Payloads
// larger than [InlineLimit] travel through the arenas.
//
// The package works on Linux only (memfd, pipes, poll) and imports only the
// standard library and golang.org/x/sys/unix.
//
// # Layout
//
// All offsets are bytes from the start of the region; every multi-byte field
// is little-endian (the native order of the supported CPUs).
//
//	[0, 4096)       control page
//	  [0, 128)        header, written by the kernel only:
//	                    magic "HOLOSHM\x00", version, control size, generation,
//	                    region size, ring offset/slots/slot size, arena
//	                    offsets and sizes, ring base sequence
//	  [128, 136)      ring head: sequence of the last published event (kernel)
//	  [192, 200)      reader position: last sequence the plugin consumed (plugin)
//	  [200, 204)      reader waiting flag (plugin)
//	[4096, …)       event ring: RingSlots slots of SlotSize bytes
//	[…, +ArenaSize) kernel→plugin arena (written by the kernel)
//	[…, +ArenaSize) plugin→kernel arena (written by the plugin)
//
// The memfd is sealed against shrinking and growing (F_SEAL_SHRINK,
// F_SEAL_GROW, F_SEAL_SEAL) before the plugin sees it: a plugin cannot
// truncate the file under the kernel's mapping, which would turn the kernel's
// reads into SIGBUS.
//
// # Arenas and references
//
// Each side owns the arena it writes to and keeps its allocator in private
// memory: the plugin cannot corrupt the kernel's allocator. The allocator is a
// first-fit free list over 64-byte aligned blocks with coalescing on free:
// first fit keeps reusing the low, already-faulted pages, so a steady stream of
// transfers stays cache and TLB friendly. A block starts with a 64-byte block
// header (magic, generation, payload length) followed by the payload; a
// [Ref] points at the payload. [Region.Put] copies bytes in,
// [Region.Alloc] reserves space for writing in place.
//
// The writer frees its own allocations with [Region.Release], after the peer
// acknowledged that it is done with them: the kernel releases a kernel→plugin
// reference when the plugin answers the request that carried it; the plugin
// releases a plugin→kernel reference when the kernel tells it (for example in
// the next request, or with a notification). Until then the bytes stay put.
//
// The reader resolves a reference into the peer's arena with [Region.View] (a
// slice into the mapping, no copy) or [Region.Copy]. Every use checks, against
// values the reader keeps privately and never against values read from shared
// memory: the generation ([ErrStale]), a non-zero length, that
// [offset, offset+length) lies inside the peer's arena without overflow, the
// block alignment, and the block header (read once into locals, so a peer
// changing it concurrently cannot make the checks and the use disagree).
// Failures wrap [ErrBadRef] or [ErrStale] and say what was wrong. A view stays
// inside the mapping by construction (Go slice bounds, capacity clipped), but
// its contents are the peer's: the peer can change them while they are read.
// Callers that need stable bytes (to hash, parse or store them) use Copy, and
// treat the contents as untrusted input either way.
//
// A payload larger than an arena can hold ([Region.MaxPayload], the arena
// size minus one block header) is refused with [ErrTooLarge], which names the
// limit; a payload that fits the arena but not its free space gets [ErrFull]
// with the largest free extent, so the caller can release or fall back.
//
// The generation starts at 1 and is bumped by [Region.Reset] (the kernel
// calls it after a plugin restarted, before starting the new process): every
// allocation of the old generation is forgotten and its references fail with
// [ErrStale].
//
// # Event ring
//
// The ring carries kernel events to the plugin: one producer (the kernel,
// [Region.Publish]), one consumer (the plugin, [Region.NextEvent]). Slots have
// a fixed size; an event longer than [Region.MaxEvent] is not published (the
// host puts such payloads in the arena and publishes a reference). Each slot
// starts with the event's sequence number (1, 2, …) and length. The producer
// never waits: it overwrites the oldest slot, marking it in-progress (sequence
// 0) while it writes, then publishes the sequence and the head. It counts an
// event as dropped when it overwrites it before the plugin's reader position
// says it was consumed; the reader position is untrusted input and only
// affects that count. The reader detects, by sequence numbers, when it fell
// more than a ring behind or when the slot it copied was overwritten during the
// copy; it then jumps to the oldest event still in the ring and reports how
// many it lost. On amd64 (total store order) the slot protocol is a seqlock;
// the kernel never reads slot contents back, so a torn or garbage slot can
// only confuse the plugin that caused it.
//
// # Doorbells
//
// After publishing, the kernel rings fd 4 if the plugin said it is about to
// sleep (the waiting flag: the reader sets it, re-checks the ring, then blocks;
// the producer publishes, then reads the flag; both with sequentially
// consistent atomics, so no wake-up is lost). The plugin rings fd 5 with
// [Region.Notify] and the kernel blocks in [Region.Wait]. Waiting blocks in
// poll(2), never spins: spinning on a 2-core machine made the tail latency
// worse (toolchain-notes-data.md §5).
//
// The doorbells are pipes, one byte per ring, rather than eventfds: an eventfd
// has a single open file description shared by both processes, so a plugin
// could clear O_NONBLOCK on it and fill its counter to make the kernel's next
// write (or read) block forever. With a pipe each process holds its own end:
// the kernel's ends are non-blocking whatever the plugin does, a full pipe
// just means the peer already has a pending ring, and nothing the plugin does
// with its ends can block the kernel. For plugins written in other languages:
// block on read(4) (any bytes; drain them), write one byte to fd 5 to ring.
//
// # Concurrency and lifetime
//
// A Region is safe for concurrent use. Views and in-place allocations point
// into the mapping and must not be used after [Region.Close], which unmaps it
// (Close waits for blocked NextEvent and Wait calls to return [ErrClosed]).
//
// The exported API is stable within the plugin host issue; additions are
// backwards compatible.
package shm
