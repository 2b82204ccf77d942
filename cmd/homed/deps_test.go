package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestHomedLinksNoGUI keeps the server face headless: homed never links Fyne, X11 or GL, and
// it is a product, not a test harness: no `testing`, no memory/memtest (benchmarks live in
// cmd/hologram-bench).
func TestHomedLinksNoGUI(t *testing.T) {
	out, err := exec.Command(goTool(t), "list", "-deps", "-tags=sqlite_fts5", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list returned too few packages to be real: %v", deps)
	}
	for _, d := range deps {
		for _, bad := range []string{"fyne.io/", "github.com/go-gl/", "x11", "github.com/hologramagent/hologram/gui", "github.com/hologramagent/hologram/starmap"} {
			if strings.Contains(strings.ToLower(d), strings.ToLower(bad)) {
				t.Errorf("homed links %s", d)
			}
		}
	}
	if contains(deps, "github.com/hologramagent/hologram/memory/memtest") {
		t.Errorf("homed links memory/memtest")
	}
	// No package homed links may import `testing`: not ours, not a third party's (a non-test
	// file importing it, as the former Snowball stemmer's romance package did, fails too).
	if contains(deps, "testing") {
		t.Errorf("homed links testing")
	}
	out, err = exec.Command(goTool(t), "list", "-deps", "-tags=sqlite_fts5", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && contains(f[1:], "testing") {
			t.Errorf("homed links testing through %s", f[0])
		}
	}
	if !contains(deps, "github.com/mattn/go-sqlite3") {
		t.Errorf("homed does not link the SQLite store; the dependency list is wrong")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// goTool finds the go command: -trimpath leaves runtime.GOROOT empty, so PATH comes first.
func goTool(t testing.TB) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if r := runtime.GOROOT(); r != "" {
		return filepath.Join(r, "bin", "go")
	}
	return "/usr/local/go/bin/go"
}
