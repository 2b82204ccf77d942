package main

import (
	"strings"
	"testing"
)

// TestNoVariantShipsBenchmarks keeps development tools out of the packages: bin/ also holds
// hologram-bench (make build), which no variant installs.
func TestNoVariantShipsBenchmarks(t *testing.T) {
	for _, v := range variants {
		if len(v.Bins) == 0 {
			t.Errorf("%s ships no program", v.Name)
		}
		for _, p := range v.Bins {
			if strings.Contains(p.File, "bench") || strings.Contains(p.Name, "bench") {
				t.Errorf("%s ships %s", v.Name, p.File)
			}
		}
	}
}
