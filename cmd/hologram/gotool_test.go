package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
)

// goTool finds the go command: PATH first (-trimpath leaves runtime.GOROOT empty), else GOROOT.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
