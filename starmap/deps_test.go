package starmap

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDepsStdlibAndXImage keeps starmap a pure library: the standard library and
// golang.org/x/image only (ARCHITECTURE.md §2) — never fyne, the kernel or memory.
func TestDepsStdlibAndXImage(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go") // empty GOROOT under -trimpath: PATH first
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/hologramagent/hologram/starmap" && !strings.HasPrefix(p, "golang.org/x/image/") && !strings.HasPrefix(p, "golang.org/x/text/") {
			t.Errorf("starmap links %s", p)
		}
	}
}
