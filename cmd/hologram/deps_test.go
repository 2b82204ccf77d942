package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestClientVariantLinksNoKernel keeps `hologram -tags nokernel` a pure client: no SQLite, no
// jieba, no ONNX Runtime, nothing under kernel/ but kernel/client and kernel/config; the
// default build does link the kernel.
func TestClientVariantLinksNoKernel(t *testing.T) {
	tests := []struct {
		tags      string
		forbidden []string
		required  []string
	}{
		{
			tags: "sqlite_fts5,nokernel",
			forbidden: []string{"github.com/mattn/go-sqlite3", "github.com/yanyiwu/gojieba", "github.com/yalue/onnxruntime_go",
				"github.com/hologramagent/hologram/kernel", "github.com/hologramagent/hologram/memory",
				"github.com/hologramagent/hologram/cmd/internal/daemon"},
			required: []string{"fyne.io/fyne/v2/app", "github.com/hologramagent/hologram/gui", "github.com/hologramagent/hologram/kernel/client"},
		},
		{
			tags:     "sqlite_fts5",
			required: []string{"github.com/mattn/go-sqlite3", "github.com/hologramagent/hologram/kernel", "github.com/hologramagent/hologram/cmd/internal/daemon", "fyne.io/fyne/v2/app"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.tags, func(t *testing.T) {
			out, err := exec.Command(goTool(), "list", "-deps", "-tags="+tc.tags, ".").CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			for _, d := range deps {
				for _, bad := range tc.forbidden {
					allowed := strings.HasPrefix(d, "github.com/hologramagent/hologram/kernel/client") ||
						strings.HasPrefix(d, "github.com/hologramagent/hologram/kernel/config")
					if (d == bad || strings.HasPrefix(d, bad+"/")) && !allowed {
						t.Errorf("-tags %s links %s", tc.tags, d)
					}
				}
			}
			have := map[string]bool{}
			for _, d := range deps {
				have[d] = true
			}
			for _, r := range tc.required {
				if !have[r] {
					t.Errorf("-tags %s does not link %s: the dependency list is wrong", tc.tags, r)
				}
			}
		})
	}
}

// goTool finds the go command: -trimpath leaves runtime.GOROOT empty, so PATH comes first.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if r := runtime.GOROOT(); r != "" {
		return filepath.Join(r, "bin", "go")
	}
	return "/usr/local/go/bin/go"
}
