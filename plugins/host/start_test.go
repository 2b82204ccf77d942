package host

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestStarter(t *testing.T) {
	var mu sync.Mutex
	var order []string
	release := make(chan struct{}) // holds "slow" on its first attempt
	began := make(chan string, 8)
	add := func(ctx context.Context, s Spec) (Status, error) {
		began <- s.Name
		if s.Name == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		mu.Lock()
		order = append(order, s.Name)
		mu.Unlock()
		if s.Name == "bad" {
			return Status{}, errors.New("refused")
		}
		return Status{Name: s.Name}, nil
	}
	var refused []string
	groups := [][]Spec{
		{{Name: "files"}, {Name: "notes"}, {Name: "off", Disabled: true}},
		{{Name: "slow"}, {Name: "fast"}, {Name: "bad"}},
	}
	st := Start(context.Background(), add, groups, func(s Spec, err error) {
		mu.Lock()
		refused = append(refused, s.Name+": "+err.Error())
		mu.Unlock()
	})
	// The second group starts after the first, all at once: fast finishes while slow hangs.
	seen := map[string]bool{}
	for len(seen) < 6 {
		seen[<-began] = true
	}
	start := time.Now()
	if got := st.WaitStarted(context.Background(), 200*time.Millisecond); !slices.Equal(got, []string{"slow"}) {
		t.Fatalf("still starting %v, want [slow]", got)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("WaitStarted took %s", waited)
	}
	mu.Lock()
	first := slices.Index(order, "fast")
	if i, j := slices.Index(order, "files"), slices.Index(order, "notes"); i < 0 || j < 0 || i > first || j > first {
		t.Errorf("order %v: the first group must finish before the second starts", order)
	}
	mu.Unlock()
	close(release)
	if got := st.WaitStarted(context.Background(), 10*time.Second); got != nil {
		t.Fatalf("after release: %v", got)
	}
	st.Wait()
	if !slices.Equal(refused, []string{"bad: refused"}) {
		t.Fatalf("refused %v", refused)
	}
	if st.Pending() == nil || len(st.Pending()) != 0 {
		t.Fatalf("pending %v", st.Pending())
	}
	// A cancelled context ends the wait at once.
	hctx, stop := context.WithCancel(context.Background())
	st2 := Start(hctx, func(ctx context.Context, s Spec) (Status, error) { <-ctx.Done(); return Status{}, ctx.Err() },
		[][]Spec{{{Name: "hang"}}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := st2.WaitStarted(ctx, time.Hour); !slices.Equal(got, []string{"hang"}) {
		t.Fatalf("cancelled wait: %v", got)
	}
	stop()
	st2.Wait()
}
