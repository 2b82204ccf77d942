package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDeps keeps waiter a thin client: no SQLite, jieba, ONNX or Fyne, and nothing of the kernel
// or memory but kernel/client.
func TestDeps(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go binary: %v", err)
		}
	}
	out, err := exec.Command(goBin, "list", "-deps", "-tags=sqlite_fts5", "github.com/hologramagent/hologram/cmd/waiter").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/hologramagent/hologram/"
	forbidden := []struct{ prefix, why string }{
		{"github.com/mattn/go-sqlite3", "SQLite"},
		{"github.com/yanyiwu/gojieba", "jieba"},
		{"github.com/yalue/onnxruntime_go", "ONNX"},
		{"fyne.io/", "Fyne"},
		{mod + "kernel/", "the kernel (only kernel/client is allowed)"},
		{mod + "memory", "memory"},
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 {
		t.Fatal("go list printed no packages")
	}
	for _, p := range pkgs {
		if p == mod+"kernel/client" {
			continue
		}
		for _, f := range forbidden {
			if strings.HasPrefix(p, f.prefix) {
				t.Errorf("waiter links %s (%s)", p, f.why)
			}
		}
	}
}
