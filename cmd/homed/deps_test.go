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
	// `testing` may come in only through a third-party package that imports it in a non-test
	// file: the Snowball stemmer's romance package (testing_helpers.go, its own test helpers;
	// nothing of it runs in homed). Any other importer, ours above all, fails here.
	allowed := map[string]bool{"github.com/kljensen/snowball/romance": true}
	out, err = exec.Command(goTool(t), "list", "-deps", "-tags=sqlite_fts5", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && contains(f[1:], "testing") && !allowed[f[0]] {
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
