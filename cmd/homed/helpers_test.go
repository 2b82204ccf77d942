package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// contains reports whether list holds s.
func contains(list []string, s string) bool { return slices.Contains(list, s) }

// goTool finds the go command: PATH first (-trimpath leaves runtime.GOROOT empty), else GOROOT.
func goTool(testing.TB) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
