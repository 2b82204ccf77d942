package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock"
	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
)

// ticker records the times Loop calls its tick and answers with the next scripted wake-up.
type ticker struct {
	mu    sync.Mutex
	clk   clock.Clock
	next  []time.Time // what each call returns (zero once they run out)
	calls []time.Time // the clock's reading at each call
	seen  chan struct{}
}

func (tk *ticker) tick(context.Context) time.Time {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	tk.calls = append(tk.calls, tk.clk.Now())
	var n time.Time
	if len(tk.next) > 0 {
		n, tk.next = tk.next[0], tk.next[1:]
	}
	tk.seen <- struct{}{}
	return n
}

func (tk *ticker) count() int {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return len(tk.calls)
}

// TestLoop: the loop ticks at once, then at the time the tick asked for (not before), at a
// poke when the tick asked for no time, and stops when its context ends.
func TestLoop(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := clocktest.New(t0)
	tk := &ticker{clk: clk, next: []time.Time{t0.Add(time.Hour)}, seen: make(chan struct{}, 16)}
	wake := clock.NewWake()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		clock.Loop(ctx, clk, wake, tk.tick)
	}()
	<-tk.seen // the first tick, at once
	clk.WaitForWaiter(t)
	clk.Advance(59 * time.Minute)
	clk.WaitForWaiter(t) // still waiting for the hour
	if n := tk.count(); n != 1 {
		t.Fatalf("%d ticks before the time asked for, want 1", n)
	}
	clk.Advance(time.Minute)
	<-tk.seen // the second tick, at the hour; it asks for no time
	wake.Poke()
	<-tk.seen // the third, at the poke
	cancel()
	<-done
	want := []time.Time{t0, t0.Add(time.Hour), t0.Add(time.Hour)}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if len(tk.calls) != len(want) {
		t.Fatalf("ticks at %v, want %v", tk.calls, want)
	}
	for i := range want {
		if !tk.calls[i].Equal(want[i]) {
			t.Fatalf("ticks at %v, want %v", tk.calls, want)
		}
	}
}

// TestWakeMerges: pokes while one is pending merge into one; Poke never blocks.
func TestWakeMerges(t *testing.T) {
	w := clock.NewWake()
	for range 3 {
		w.Poke()
	}
	if n := len(w); n != 1 {
		t.Fatalf("%d pending pokes, want 1", n)
	}
	<-w
	select {
	case <-w:
		t.Fatal("a second poke was pending")
	default:
	}
}

// TestSystemClock: the system clock reads the time, and At fires for a time already past and
// can be released before it fires.
func TestSystemClock(t *testing.T) {
	var c clock.System
	before := time.Now()
	if now := c.Now(); now.Before(before) {
		t.Fatalf("Now %v is before %v", now, before)
	}
	ch, release := c.At(before.Add(-time.Second))
	<-ch
	release()
	_, release = c.At(time.Now().Add(time.Hour))
	release() // stops the timer; nothing left running
}

// TestFake: waits fire when Advance reaches them, at once when already due, never once
// released; WaitForWaiter sees a waiter.
func TestFake(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := clocktest.New(t0)
	if ch, _ := c.At(t0); len(ch) != 1 {
		t.Fatal("a wait for now did not fire at once")
	}
	soon, _ := c.At(t0.Add(time.Minute))
	later, releaseLater := c.At(t0.Add(2 * time.Minute))
	c.WaitForWaiter(t)
	releaseLater()
	c.Advance(time.Minute)
	if got := <-soon; !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("fired at %v", got)
	}
	c.Advance(time.Hour)
	if len(later) != 0 {
		t.Fatal("a released wait fired")
	}
	if !c.Now().Equal(t0.Add(time.Hour + time.Minute)) {
		t.Fatalf("Now %v", c.Now())
	}
}
