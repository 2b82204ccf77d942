package shm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// readAvailable reads every event the plugin can read without blocking.
func readAvailable(t *testing.T, p *Region) (evs []string, lost uint64) {
	t.Helper()
	p.waitMu.Lock()
	defer p.waitMu.Unlock()
	for {
		ev, ok := p.readEvent()
		if !ok {
			lost, p.pendingLost = p.pendingLost, 0
			return evs, lost
		}
		evs = append(evs, string(ev))
	}
}

func publishN(t *testing.T, k *Region, from, to int) (drops int) {
	t.Helper()
	for i := from; i <= to; i++ {
		d, err := k.PublishEvent(fmt.Appendf(nil, "event %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if d {
			drops++
		}
	}
	return drops
}

func TestRing(t *testing.T) {
	const slots = 8
	tests := []struct {
		name      string
		batches   [][2]int // publish events [a, b], then read what is there
		wantFirst []string // first event read after each batch
		wantCount []int    // events read after each batch
		wantLost  []uint64
		wantDrops []int
	}{
		{
			name:      "in order",
			batches:   [][2]int{{1, 3}, {4, 4}},
			wantFirst: []string{"event 1", "event 4"}, wantCount: []int{3, 1},
			wantLost: []uint64{0, 0}, wantDrops: []int{0, 0},
		},
		{
			name:      "wrap without loss",
			batches:   [][2]int{{1, 6}, {7, 14}, {15, 21}},
			wantFirst: []string{"event 1", "event 7", "event 15"}, wantCount: []int{6, 8, 7},
			wantLost: []uint64{0, 0, 0}, wantDrops: []int{0, 0, 0},
		},
		{
			name:    "lapped reader jumps to the oldest event",
			batches: [][2]int{{1, 2}, {3, 13}, {14, 14}},
			// After 3..13 the ring holds 6..13: 3, 4 and 5 were overwritten unread.
			wantFirst: []string{"event 1", "event 6", "event 14"}, wantCount: []int{2, 8, 1},
			wantLost: []uint64{0, 3, 0}, wantDrops: []int{0, 3, 0},
		},
		{
			name:      "lapped many times",
			batches:   [][2]int{{1, 1000}},
			wantFirst: []string{"event 993"}, wantCount: []int{8},
			wantLost: []uint64{992}, wantDrops: []int{992},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, p := newPair(t, Options{ArenaSize: pageSize, RingSlots: slots, SlotSize: 64})
			for i, b := range tt.batches {
				drops := publishN(t, k, b[0], b[1])
				evs, lost := readAvailable(t, p)
				if len(evs) != tt.wantCount[i] || evs[0] != tt.wantFirst[i] || lost != tt.wantLost[i] || drops != tt.wantDrops[i] {
					t.Fatalf("batch %d: read %d events from %q, lost %d, kernel dropped %d; want %d from %q, lost %d, dropped %d",
						i, len(evs), evs[0], lost, drops, tt.wantCount[i], tt.wantFirst[i], tt.wantLost[i], tt.wantDrops[i])
				}
				last := fmt.Sprintf("event %d", b[1])
				if evs[len(evs)-1] != last {
					t.Fatalf("batch %d: last event %q, want %q", i, evs[len(evs)-1], last)
				}
			}
			ks, ps := k.Stats(), p.Stats()
			if ks.Dropped != ps.Lost || ks.Published != ps.Received+ps.Lost {
				t.Fatalf("kernel %+v and plugin %+v disagree", ks, ps)
			}
		})
	}
}

// TestRingDamagedSlots covers the reader's defences against slots that do not
// hold what the head promises: being rewritten, already overwritten, garbage.
func TestRingDamagedSlots(t *testing.T) {
	tests := []struct {
		name   string
		damage func(p *Region) // applied to the slot of event 2
		want   []string
		lost   uint64
	}{
		{name: "intact", damage: func(*Region) {}, want: []string{"event 1", "event 2", "event 3"}},
		{name: "being rewritten", damage: func(p *Region) { atomic.StoreUint64(p.u64(p.slot(2)), 0) }, want: []string{"event 1", "event 3"}, lost: 1},
		{name: "overwritten", damage: func(p *Region) { atomic.StoreUint64(p.u64(p.slot(2)), 2+8) }, want: []string{"event 1", "event 3"}, lost: 1},
		{name: "older sequence", damage: func(p *Region) { atomic.StoreUint64(p.u64(p.slot(2)), 1) }, want: []string{"event 1", "event 3"}, lost: 1},
		{name: "length too large", damage: func(p *Region) { p.mem[p.slot(2)+11] = 0xff }, want: []string{"event 1", "event 3"}, lost: 1},
		{name: "head far ahead", damage: func(p *Region) { atomic.StoreUint64(p.u64(offHead), 1<<62) }, lost: 1 << 62},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, p := newPair(t, Options{ArenaSize: pageSize, RingSlots: 8, SlotSize: 64})
			publishN(t, k, 1, 3)
			tt.damage(p)
			evs, lost := readAvailable(t, p)
			if strings.Join(evs, ",") != strings.Join(tt.want, ",") || lost != tt.lost {
				t.Fatalf("read %q, lost %d; want %q, lost %d", evs, lost, tt.want, tt.lost)
			}
		})
	}
}

func TestPublishLimits(t *testing.T) {
	k, p := newPair(t, Options{ArenaSize: pageSize, RingSlots: 2, SlotSize: 64})
	if d, err := k.PublishEvent(make([]byte, 49)); !errors.Is(err, ErrTooLarge) || d || !strings.Contains(err.Error(), "48-byte ring slot payload") {
		t.Fatalf("PublishEvent(49 bytes) = %v, %v", d, err)
	}
	if !k.Publish(make([]byte, 49)) {
		t.Fatal("Publish of an oversized event reported it delivered")
	}
	if k.Publish(make([]byte, 48)) {
		t.Fatal("Publish of a full-slot event reported a drop")
	}
	if k.Publish(nil) {
		t.Fatal("Publish of an empty event reported a drop")
	}
	if s := k.Stats(); s.Oversized != 2 || s.Published != 2 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := p.PublishEvent([]byte("x")); !errors.Is(err, ErrWrongSide) {
		t.Fatalf("plugin PublishEvent = %v", err)
	}
	if _, _, err := k.NextEvent(t.Context()); !errors.Is(err, ErrWrongSide) {
		t.Fatalf("kernel NextEvent = %v", err)
	}
	if _, err := p.Wait(t.Context()); !errors.Is(err, ErrWrongSide) {
		t.Fatalf("plugin Wait = %v", err)
	}
	evs, _ := readAvailable(t, p)
	if len(evs) != 2 || len(evs[0]) != 48 || evs[1] != "" {
		t.Fatalf("read %q", evs)
	}
}

// TestNextEventBlocks checks the doorbell: NextEvent sleeps until an event is
// published, and the plugin's Notify wakes the kernel's Wait.
func TestNextEventBlocks(t *testing.T) {
	k, p := newPair(t, smallOpts)
	type result struct {
		ev   string
		lost uint64
		err  error
	}
	got := make(chan result)
	go func() {
		for range 3 {
			ev, lost, err := p.NextEvent(context.Background())
			got <- result{string(ev), lost, err}
			if err != nil {
				return
			}
			if err := p.Notify(); err != nil {
				got <- result{err: err}
				return
			}
		}
	}()
	for i := range 3 {
		// The reader may or may not be asleep yet: both paths must deliver.
		ev := fmt.Sprintf("ping %d", i)
		if k.Publish([]byte(ev)) {
			t.Fatal("Publish reported a drop")
		}
		r := <-got
		if r.err != nil || r.ev != ev || r.lost != 0 {
			t.Fatalf("NextEvent = %+v, want %q", r, ev)
		}
		n, err := k.Wait(context.Background())
		if err != nil || n < 1 {
			t.Fatalf("Wait = %d, %v", n, err)
		}
	}
}

func TestWaitCancel(t *testing.T) {
	k, p := newPair(t, smallOpts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() {
		_, _, err := p.NextEvent(ctx)
		done <- err
	}()
	go func() {
		_, err := k.Wait(ctx)
		done <- err
	}()
	cancel()
	for range 2 {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("wait = %v, want context.Canceled", err)
		}
	}
	// A cancelled wait leaves the region usable.
	k.Publish([]byte("after"))
	ev, _, err := p.NextEvent(context.Background())
	if err != nil || string(ev) != "after" {
		t.Fatalf("NextEvent = %q, %v", ev, err)
	}
	if err := p.Notify(); err != nil {
		t.Fatal(err)
	}
	if n, err := k.Wait(context.Background()); err != nil || n != 1 {
		t.Fatalf("Wait = %d, %v", n, err)
	}
}

func TestCloseWakesWaiters(t *testing.T) {
	k, p := newPair(t, smallOpts)
	done := make(chan error, 2)
	go func() {
		_, _, err := p.NextEvent(context.Background())
		done <- err
	}()
	go func() {
		_, err := k.Wait(context.Background())
		done <- err
	}()
	// Close must wake whichever waiter already sleeps and refuse the others.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter returned %v, want ErrClosed", err)
		}
	}
}

func TestPluginSeesKernelGone(t *testing.T) {
	k := newKernel(t, smallOpts)
	p := openPlugin(t, k)
	// The kernel's write end of the plugin's doorbell closes with the kernel.
	k.Close()
	_, _, err := p.NextEvent(context.Background())
	if err == nil || !strings.Contains(err.Error(), "hung up") {
		t.Fatalf("NextEvent after the kernel closed = %v", err)
	}
}

// TestResetRestartsRing checks that a restarted plugin starts after the
// events published for its predecessor and that those do not count as drops.
func TestResetRestartsRing(t *testing.T) {
	k := newKernel(t, Options{ArenaSize: pageSize, RingSlots: 4, SlotSize: 64})
	p := openPlugin(t, k)
	publishN(t, k, 1, 3)
	p.Close()
	if err := k.Reset(); err != nil {
		t.Fatal(err)
	}
	p2 := openPlugin(t, k)
	if evs, lost := readAvailable(t, p2); len(evs) != 0 || lost != 0 {
		t.Fatalf("the new plugin read %q (lost %d) from its predecessor", evs, lost)
	}
	if drops := publishN(t, k, 4, 7); drops != 0 {
		t.Fatalf("%d drops of the old generation's events", drops)
	}
	if evs, lost := readAvailable(t, p2); strings.Join(evs, ",") != "event 4,event 5,event 6,event 7" || lost != 0 {
		t.Fatalf("read %q, lost %d", evs, lost)
	}
}
