package plugmain

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPluginDeps keeps every built-in plugin's binary free of the kernel and the memory
// (ARCHITECTURE.md §2: plugins talk to the kernel only through plugins/sdk) and of test code:
// no package "testing" and none of the test helpers.
func TestPluginDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list dependencies: %v", err)
	}
	const builtin = "github.com/hologramagent/hologram/plugins/builtin/"
	out, err := exec.Command(goBin, "list", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", builtin+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	plugins := strings.Fields(string(out))
	if len(plugins) < 8 {
		t.Fatalf("go list found the plugins %v; want at least the 8 built-in ones", plugins)
	}
	for _, p := range plugins {
		out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", p, err, out)
		}
		for _, d := range strings.Fields(string(out)) {
			switch {
			case strings.HasPrefix(d, "github.com/hologramagent/hologram/kernel"),
				strings.HasPrefix(d, "github.com/hologramagent/hologram/memory"),
				d == "testing",
				d == builtin+"internal/plugintest", d == builtin+"internal/hosttest", d == builtin+"internal/clock/clocktest",
				d == builtin+"internal/sandbox/sandboxtest":
				t.Errorf("%s links %s", p, d)
			}
		}
	}
}
