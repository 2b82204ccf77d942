package graph_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDepsStdlibAndMemoryOnly keeps the extractors light (ARCHITECTURE.md §2): the package links
// the standard library and memory only — no kernel, no SQLite, no jieba, no cgo.
func TestDepsStdlibAndMemoryOnly(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}",
		"github.com/hologramagent/hologram/memory/graph").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/hologramagent/hologram/memory":       true,
		"github.com/hologramagent/hologram/memory/graph": true,
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		path, std, _ := strings.Cut(strings.TrimSpace(line), " ")
		n++
		if std != "true" && !allowed[path] {
			t.Errorf("memory/graph links %s", path)
		}
		if path == "runtime/cgo" {
			t.Error("memory/graph links cgo")
		}
	}
	if n < 10 {
		t.Fatalf("go list printed too little:\n%s", out)
	}
}
