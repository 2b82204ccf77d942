package sdk

import (
	"context"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/shm"
)

// openRegion maps the region the kernel passed as fds 3, 4 and 5.
func openRegion() (region, error) {
	r, err := shm.Open()
	if err != nil {
		return nil, err
	}
	return shmRegion{r}, nil
}

// shmRegion adapts *shm.Region to region (the wire's Ref is shm.Ref field for field).
type shmRegion struct{ r *shm.Region }

func (s shmRegion) Put(p []byte) (protocol.Ref, error) {
	ref, err := s.r.Put(p)
	return protocol.Ref(ref), err
}

func (s shmRegion) Copy(ref protocol.Ref) ([]byte, error) { return s.r.Copy(shm.Ref(ref)) }
func (s shmRegion) Release(ref protocol.Ref) error        { return s.r.Release(shm.Ref(ref)) }
func (s shmRegion) NextEvent(ctx context.Context) ([]byte, uint64, error) {
	return s.r.NextEvent(ctx)
}
func (s shmRegion) Close() error { return s.r.Close() }
