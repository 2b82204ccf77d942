package host

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Starter adds plugins to a host in parallel, in groups: every plugin of a group starts at once,
// and a group starts when each plugin of the one before has made its first start attempt (the
// built-in plugins go first, so they keep their tool names and no slow server delays them). It
// tracks which plugins are still on their first attempt, so a turn can wait for them, bounded,
// and say which are missing. A Starter is safe for concurrent use.
type Starter struct {
	mu      sync.Mutex
	pending map[string]bool
	changed chan struct{} // closed and replaced whenever pending shrinks
	wg      sync.WaitGroup
}

// Start adds every spec of groups with add (normally [Host.Add]), group after group, and returns
// at once; onErr gets each spec add refused. The plugins run until the host closes; cancelling
// ctx stops adding the ones not added yet. [Starter.Wait] returns when all adds returned.
func Start(ctx context.Context, add func(context.Context, Spec) (Status, error), groups [][]Spec, onErr func(Spec, error)) *Starter {
	s := &Starter{pending: map[string]bool{}, changed: make(chan struct{})}
	for _, g := range groups {
		for _, spec := range g {
			if !spec.Disabled {
				s.pending[spec.Name] = true
			}
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for _, g := range groups {
			var wg sync.WaitGroup
			for _, spec := range g {
				wg.Go(func() {
					defer s.done(spec.Name)
					if ctx.Err() != nil {
						return
					}
					if _, err := add(ctx, spec); err != nil && onErr != nil {
						onErr(spec, err)
					}
				})
			}
			wg.Wait()
		}
	}()
	return s
}

func (s *Starter) done(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[name] {
		delete(s.pending, name)
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// Pending returns the plugins still on their first start attempt, sorted.
func (s *Starter) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for n := range s.pending {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// WaitStarted waits until no plugin is on its first start attempt, for at most max (or until ctx
// ends), and returns those still starting then.
func (s *Starter) WaitStarted(ctx context.Context, max time.Duration) []string {
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		s.mu.Lock()
		n, ch := len(s.pending), s.changed
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
			return s.Pending()
		case <-ctx.Done():
			return s.Pending()
		}
	}
}

// Wait blocks until every add has returned.
func (s *Starter) Wait() { s.wg.Wait() }
