// Package archtest holds the one table test of ARCHITECTURE.md §2's dependency rules (the
// floors cmd → gui → kernel → memory, plugins, starmap; what each library and binary may link),
// checked with `go list -deps` as tailscale does. It has no code of its own.
package archtest
