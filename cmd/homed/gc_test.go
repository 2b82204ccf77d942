package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	cases := []struct {
		gogc string
		want int
	}{
		{"", gcPercent}, // homed's default
		{"50", 100},     // GOGC set: the runtime's value (here the test's 100) stays
		{"off", 100},    // likewise
	}
	for _, tc := range cases {
		debug.SetGCPercent(100)
		tuneGC(func(k string) string {
			if k == "GOGC" {
				return tc.gogc
			}
			return ""
		})
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.gogc, got, tc.want)
		}
	}
	if gcPercent < 100 || gcPercent > 1000 {
		t.Errorf("gcPercent %d: want between Go's default and a bound that keeps the heap within 10× the live one", gcPercent)
	}
}
