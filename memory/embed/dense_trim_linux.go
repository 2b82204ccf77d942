//go:build linux && cgo

package embed

// #include <malloc.h>
import "C"

// releaseFreedMemory asks glibc to return the free pages of all its heaps to the system
// (malloc_trim). ONNX Runtime frees a batch's tensors at the end of a run, but glibc keeps
// the pages for reuse, so without this the process's RSS stays at its peak.
func releaseFreedMemory() { C.malloc_trim(0) }
