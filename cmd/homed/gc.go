package main

import "runtime/debug"

// gcPercent is homed's garbage-collection target (Go's GOGC), unless GOGC is set. The kernel's
// live heap is small (≈ 12 MB after 1,000 turns) while a turn allocates ≈ 0.6 MB, so at Go's
// default of 100 a collection starts every ≈ 20 turns, and a turn that runs beside one takes
// about twice as long: 5 % of turns, which made the per-turn p99. At 400 it is ≈ 1 % of turns,
// for a peak heap of about 5× the live one instead of 2× (tens of MB; docs/benchmarks.md).
const gcPercent = 400

// tuneGC applies gcPercent unless the environment sets GOGC (which the runtime already read).
func tuneGC(env func(string) string) {
	if env("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
