package backup_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportsOnlyMemoryAndStdlib keeps the package what its doc says: the formats, on top of
// memory and the standard library (the store comes in through Source and Sink).
func TestImportsOnlyMemoryAndStdlib(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/hologramagent/hologram/memory/backup").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	want := []string{"github.com/hologramagent/hologram/memory", "github.com/hologramagent/hologram/memory/backup"}
	if !slices.Equal(got, want) {
		t.Errorf("memory/backup links %q, want only %q and the standard library", got, want)
	}
}
