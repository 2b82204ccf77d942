//go:build !(linux && cgo)

package embed

// releaseFreedMemory does nothing where the C library has no malloc_trim.
func releaseFreedMemory() {}
