package main

import (
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestLandlock: the notes plugin, confined as its main confines it, cannot read the key file or
// write outside its notes directory, and works within it.
func TestLandlock(t *testing.T) { sandboxtest.Check(t, confine) }
