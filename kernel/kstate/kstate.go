// Package kstate is the kernel's readiness bus: facilities are declared,
// marked ready in whatever order their work finishes, waited for without
// polling, mounted under a name for other subsystems to find, and closed in
// reverse registration order when the kernel shuts down.
//
// Lifecycle: [New] → [State.Declare] / [State.Start] / [State.Mount] /
// [State.OnClose] → [State.MarkComplete] → [State.Close]. Close first cancels
// and waits for every goroutine started by [State.Start], then runs the
// closers, newest first.
//
// The API is internal to the kernel and may change between releases.
package kstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrAlreadyMounted is returned by [State.Mount] when the name is taken.
var ErrAlreadyMounted = errors.New("already mounted")

// ErrClosed is recorded for facilities started after [State.Close].
var ErrClosed = errors.New("kstate closed")

// State tracks which named facilities are declared and ready, holds mounted
// values, and owns shutdown. A State is safe for concurrent use; its zero
// value is not usable, create one with [New].
type State struct {
	mu       sync.Mutex
	declared []string
	isDecl   map[string]bool
	ready    []string
	isReady  map[string]bool
	changed  chan struct{} // closed and replaced whenever readiness changes
	complete bool
	mounts   map[string]any
	closers  []closer
	errs     map[string]error
	closed   bool

	runCtx    context.Context
	cancelRun context.CancelFunc
	wg        sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

type closer struct {
	name string
	fn   func() error
}

// Snapshot is a point-in-time copy of a [State]'s readiness. Mutating it
// does not affect the State.
type Snapshot struct {
	// Declared lists every declared facility in declaration order.
	Declared []string
	// Ready lists ready facilities in the order they became ready.
	Ready []string
	// Pending lists declared facilities that are not ready yet, in
	// declaration order.
	Pending []string
	// Complete reports whether [State.MarkComplete] was called.
	Complete bool
}

// New returns an empty State.
func New() *State {
	ctx, cancel := context.WithCancel(context.Background())
	return &State{
		isDecl:    make(map[string]bool),
		isReady:   make(map[string]bool),
		changed:   make(chan struct{}),
		mounts:    make(map[string]any),
		errs:      make(map[string]error),
		runCtx:    ctx,
		cancelRun: cancel,
	}
}

// Declare records that the named facilities exist and will become ready
// later. Declaring a name twice is harmless.
func (s *State) Declare(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.declareLocked(n)
	}
}

func (s *State) declareLocked(name string) {
	if s.isDecl[name] {
		return
	}
	s.isDecl[name] = true
	s.declared = append(s.declared, name)
}

// notifyLocked wakes every waiter. s.mu must be held.
func (s *State) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// MarkReady marks the named facility ready, declaring it if needed.
// Marking a ready facility again is a no-op.
func (s *State) MarkReady(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.declareLocked(name)
	if s.isReady[name] {
		return
	}
	s.isReady[name] = true
	s.ready = append(s.ready, name)
	s.notifyLocked()
}

// IsReady reports whether the named facility is ready. A declared facility
// is not ready until [State.MarkReady] is called for it.
func (s *State) IsReady(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isReady[name]
}

// WaitReady blocks until every named facility is ready or ctx is done, in
// which case it returns the context's error wrapped with the names still
// pending.
func (s *State) WaitReady(ctx context.Context, names ...string) error {
	for {
		s.mu.Lock()
		var pending []string
		for _, n := range names {
			if !s.isReady[n] {
				pending = append(pending, n)
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %v: %w", pending, ctx.Err())
		}
	}
}

// MarkComplete records that the kernel has finished starting. It is
// idempotent.
func (s *State) MarkComplete() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.complete {
		return
	}
	s.complete = true
	s.notifyLocked()
}

// Complete reports whether [State.MarkComplete] was called.
func (s *State) Complete() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.complete
}

// WaitComplete blocks until [State.MarkComplete] is called or ctx is done.
func (s *State) WaitComplete(ctx context.Context) error {
	for {
		s.mu.Lock()
		done, ch := s.complete, s.changed
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for kernel completion: %w", ctx.Err())
		}
	}
}

// Snapshot returns a copy of the current readiness.
func (s *State) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{
		Declared: slices.Clone(s.declared),
		Ready:    slices.Clone(s.ready),
		Pending:  []string{},
		Complete: s.complete,
	}
	if snap.Declared == nil {
		snap.Declared = []string{}
	}
	if snap.Ready == nil {
		snap.Ready = []string{}
	}
	for _, n := range s.declared {
		if !s.isReady[n] {
			snap.Pending = append(snap.Pending, n)
		}
	}
	return snap
}

// Mount stores v under name so other subsystems can find it with
// [State.Get] or [GetAs]. Mounting a taken name returns [ErrAlreadyMounted].
func (s *State) Mount(name string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mounts[name]; ok {
		return fmt.Errorf("mount %q: %w", name, ErrAlreadyMounted)
	}
	s.mounts[name] = v
	return nil
}

// Get returns the value mounted under name.
func (s *State) Get(name string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.mounts[name]
	return v, ok
}

// GetAs returns the value mounted under name if it exists and has type T.
func GetAs[T any](s *State, name string) (T, bool) {
	v, ok := s.Get(name)
	if !ok {
		var zero T
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

// OnClose registers fn to run during [State.Close]. Closers run once, in
// reverse registration order; name labels fn's error.
func (s *State) OnClose(name string, fn func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, closer{name: name, fn: fn})
}

// Start declares name and runs fn in a goroutine once every facility in
// needs is ready. When fn returns nil, name is marked ready; otherwise the
// error is recorded and reported by [State.Err]. The ctx passed to fn is
// cancelled when ctx is done or [State.Close] is called; Close waits for fn
// to return.
func (s *State) Start(ctx context.Context, name string, needs []string, fn func(ctx context.Context) error) {
	s.mu.Lock()
	s.declareLocked(name)
	if s.closed {
		s.errs[name] = fmt.Errorf("start %s: %w", name, ErrClosed)
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()

	runCtx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.runCtx, cancel)
	needs = slices.Clone(needs)
	go func() {
		defer s.wg.Done()
		defer cancel()
		defer stop()
		if err := s.WaitReady(runCtx, needs...); err != nil {
			s.setErr(name, fmt.Errorf("start %s: %w", name, err))
			return
		}
		if err := fn(runCtx); err != nil {
			s.setErr(name, fmt.Errorf("start %s: %w", name, err))
			return
		}
		s.MarkReady(name)
	}()
}

func (s *State) setErr(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs[name] = err
}

// Err returns the error recorded for a facility started with [State.Start],
// or nil if it succeeded, is still running, or was never started.
func (s *State) Err(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[name]
}

// Close cancels the goroutines started by [State.Start], waits for them,
// then runs the registered closers in reverse order and returns their errors
// joined. Close is idempotent: later calls return the first call's result.
func (s *State) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancelRun()
		s.wg.Wait()

		s.mu.Lock()
		closers := s.closers
		s.closers = nil
		s.mu.Unlock()
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			c := closers[i]
			if err := c.fn(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", c.name, err))
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
