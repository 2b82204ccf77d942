package main

import (
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/builtin/internal/clock/clocktest"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	c := clocktest.New(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	l := NewLimiter(3, time.Minute, c.Now)
	steps := []struct {
		advance time.Duration
		partner string
		want    bool
	}{
		{0, "a", true}, {10 * time.Second, "a", true}, {10 * time.Second, "a", true},
		{0, "a", false}, {0, "b", true}, // b has its own window
		{39 * time.Second, "a", false}, // 59 s after the first: still 3 in the window
		{time.Second, "a", true},       // the first left the window
		{0, "a", false},
		{time.Hour, "a", true},
	}
	for i, s := range steps {
		c.Advance(s.advance)
		if got := l.Allow(s.partner); got != s.want {
			t.Fatalf("step %d (%s at %s): %v, want %v", i, s.partner, c.Now().Format("15:04:05"), got, s.want)
		}
	}
}

func BenchmarkLimiter(b *testing.B) {
	c := clocktest.New(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	l := NewLimiter(5, time.Minute, c.Now)
	partners := []string{"group_1", "group_2", "555", "556"}
	for i := 0; b.Loop(); i++ {
		c.Advance(time.Second)
		l.Allow(partners[i%len(partners)])
	}
}
