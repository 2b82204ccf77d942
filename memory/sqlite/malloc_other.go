//go:build !linux || !cgo

package sqlite

// tuneAllocator is glibc-specific (malloc.go); elsewhere the C allocator keeps its defaults.
func tuneAllocator() {}
