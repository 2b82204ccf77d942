package sqlite_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMemoryNeverImportsTheKernel enforces the floors of ARCHITECTURE.md §2: memory/* sits below
// the kernel and never reaches up to it (nor to the GUI).
func TestMemoryNeverImportsTheKernel(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	out, err := exec.Command(goBin, "list", "-deps", "-tags=sqlite_fts5", "github.com/hologramagent/hologram/memory/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 5 {
		t.Fatalf("go list printed too little: %v", pkgs)
	}
	const mod = "github.com/hologramagent/hologram/"
	for _, p := range pkgs {
		for _, bad := range []string{mod + "kernel", mod + "gui", mod + "cmd", "fyne.io/"} {
			if strings.HasPrefix(p, bad) {
				t.Errorf("memory links %s", p)
			}
		}
	}
}
