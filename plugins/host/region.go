package host

import (
	"os"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// ShmOptions size a native plugin's shared-memory region (ARCHITECTURE.md §5).
type ShmOptions struct {
	// ArenaSize is the size of each arena (kernel→plugin and plugin→kernel) in bytes; 0: 32 MiB.
	// Larger payloads are refused with a clear error.
	ArenaSize int64
	// RingSlots and SlotSize shape the event ring; 0: the shm package's defaults.
	RingSlots, SlotSize int
}

// region is the kernel's side of a plugin's shared-memory region (plugins/shm.Region).
type region interface {
	// Info describes the region for the plugin's hello.
	Info() protocol.ShmInfo
	// ChildFiles are the region and its two doorbells, passed as fds 3, 4 and 5.
	ChildFiles() []*os.File
	// Put copies p into the kernel→plugin arena.
	Put(p []byte) (protocol.Ref, error)
	// Copy returns a copy of the bytes at ref in the plugin→kernel arena.
	Copy(ref protocol.Ref) ([]byte, error)
	// Release frees ref once read.
	Release(ref protocol.Ref) error
	// MaxEvent is the largest event the ring carries.
	MaxEvent() int
	// Publish puts an event in the ring without blocking; it reports a drop.
	Publish(event []byte) (dropped bool)
	Close() error
}
