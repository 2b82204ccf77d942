package host

import (
	"os"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/shm"
)

// newRegion makes the kernel side of a plugin's region.
func newRegion(o ShmOptions) (region, error) {
	r, err := shm.Create(shm.Options{ArenaSize: o.ArenaSize, RingSlots: o.RingSlots, SlotSize: o.SlotSize})
	if err != nil {
		return nil, err
	}
	info := protocol.ShmInfo{ArenaSize: r.ArenaSize(), RingSlots: o.RingSlots, SlotSize: o.SlotSize}
	if info.RingSlots == 0 {
		info.RingSlots = shm.DefaultRingSlots
	}
	if info.SlotSize == 0 {
		info.SlotSize = shm.DefaultSlotSize
	}
	return shmRegion{r: r, info: info}, nil
}

// shmRegion adapts *shm.Region to region (the wire's Ref is shm.Ref field for field).
type shmRegion struct {
	r    *shm.Region
	info protocol.ShmInfo
}

func (s shmRegion) Info() protocol.ShmInfo { return s.info }
func (s shmRegion) ChildFiles() []*os.File { return s.r.ChildFiles() }
func (s shmRegion) Put(p []byte) (protocol.Ref, error) {
	ref, err := s.r.Put(p)
	return protocol.Ref(ref), err
}
func (s shmRegion) Copy(ref protocol.Ref) ([]byte, error) { return s.r.Copy(shm.Ref(ref)) }
func (s shmRegion) Release(ref protocol.Ref) error        { return s.r.Release(shm.Ref(ref)) }
func (s shmRegion) MaxEvent() int                         { return s.r.MaxEvent() }
func (s shmRegion) Publish(event []byte) bool             { return s.r.Publish(event) }
func (s shmRegion) Close() error                          { return s.r.Close() }
