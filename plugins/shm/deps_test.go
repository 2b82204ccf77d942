package shm

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps keeps the package light enough for plugins to import: the standard
// library and golang.org/x/sys only (ARCHITECTURE.md §2).
func TestDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list dependencies: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list listed nothing")
	}
	for _, p := range deps {
		if p != "github.com/hologramagent/hologram/plugins/shm" && !strings.HasPrefix(p, "golang.org/x/sys/") {
			t.Errorf("plugins/shm links %s", p)
		}
	}
}
