package shm

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Notify rings the peer's doorbell: the plugin wakes the kernel's
// [Region.Wait] (the kernel's doorbell to the plugin is rung by
// [Region.Publish]). It never blocks: when the pipe is full, the peer already
// has rings pending.
func (r *Region) Notify() error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return ErrClosed
	}
	if err := ringErr(r.bellOut); err != nil {
		return fmt.Errorf("shm: ring doorbell: %w", err)
	}
	return nil
}

// Wait blocks until the plugin rings the kernel's doorbell with
// [Region.Notify] (kernel side), ctx ends or the region closes. It returns how
// many rings it consumed (rings coalesce; at least 1).
func (r *Region) Wait(ctx context.Context) (uint64, error) {
	if !r.kernel {
		return 0, fmt.Errorf("%w: the plugin waits with NextEvent", ErrWrongSide)
	}
	r.waitMu.Lock()
	defer r.waitMu.Unlock()
	for {
		n, err := r.waitOnce(ctx)
		if err != nil || n > 0 {
			return n, err
		}
	}
}

// waitOnce drains the doorbell, or sleeps on it once.
func (r *Region) waitOnce(ctx context.Context) (uint64, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return 0, ErrClosed
	}
	if n := drain(r.bellIn); n > 0 {
		return n, nil
	}
	if err := r.waitFD(ctx, r.bellIn); err != nil {
		return 0, err
	}
	return drain(r.bellIn), nil
}

// waitFD blocks in poll(2) until fd is readable, the region closes (ErrClosed)
// or ctx ends (its error). A spurious return (nil, nothing to read) is
// possible; callers loop. r.life is held shared.
func (r *Region) waitFD(ctx context.Context, fd int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop, fired := func() bool { return true }, (chan struct{})(nil)
	if ctx.Done() != nil {
		fired = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			r.poke()
			close(fired)
		})
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(r.wake), Events: unix.POLLIN}}
	var perr error
	for {
		_, perr = unix.Poll(fds, -1)
		if !errors.Is(perr, unix.EINTR) {
			break
		}
	}
	if !stop() {
		<-fired
		if !r.closed.Load() {
			drain(r.wake) // ours alone: waits are serialised
		}
	}
	switch {
	case r.closed.Load():
		return ErrClosed
	case perr != nil:
		return fmt.Errorf("shm: poll doorbell: %w", perr)
	case fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0:
		return fmt.Errorf("shm: doorbell fd %d failed (poll events %#x)", fd, fds[0].Revents)
	case fds[0].Revents&unix.POLLHUP != 0 && fds[0].Revents&unix.POLLIN == 0:
		return fmt.Errorf("shm: doorbell fd %d hung up: the peer closed its end", fd)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return nil
}

// poke interrupts the current wait (Close, or its ctx ending).
func (r *Region) poke() {
	one := [8]byte{1}
	unix.Write(r.wake, one[:]) // an 8-byte counter increment; EAGAIN means it is raised already
}

// ring writes one byte to a non-blocking doorbell, ignoring a full pipe.
func ring(fd int) { _ = ringErr(fd) }

// ringErr is ring reporting errors other than a full pipe.
func ringErr(fd int) error {
	b := [1]byte{1}
	for {
		_, err := unix.Write(fd, b[:])
		switch {
		case err == nil, errors.Is(err, unix.EAGAIN):
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		default:
			return err
		}
	}
}

// drain empties a non-blocking doorbell and returns how many bytes (rings) it
// held.
func drain(fd int) uint64 {
	var buf [512]byte
	var n uint64
	for {
		m, err := unix.Read(fd, buf[:])
		if m > 0 {
			n += uint64(m)
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m < len(buf) {
			return n
		}
	}
}
