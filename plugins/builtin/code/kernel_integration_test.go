//go:build integration

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestThroughKernel runs the built plugin under the real host and kernel: a matplotlib plot
// reaches the chat and memory as an image block, the run's workspace is the session's (the
// host passes the session in tools/call's _meta), and 100 MB of output comes back capped at
// 1 MiB, through the shared memory.
func TestThroughKernel(t *testing.T) {
	tk := hosttest.Start(t, hosttest.Options{})
	fake := tk.AddModel(t)
	home := t.TempDir()
	data := filepath.Join(home, "data")
	p := tk.RunPlugin(t, "code", pluginDir, "HOME="+home, "HOLOGRAM_DATA_DIR="+data, "HOLOGRAM_CONFIG_DIR="+filepath.Join(home, "conf"))
	if tools := slices.Sorted(slices.Values(p.Tools)); strings.Join(tools, ",") != "code_files,code_languages,code_reset,code_run" {
		t.Errorf("tools %v", p.Tools)
	}
	plot := py("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.savefig('plot.png')\nprint('saved')", 120)
	flood := py("import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(100000):\n    sys.stdout.write(line)", 60)
	fake.Script(hosttest.Call("c1", "code_run", plot), hosttest.Call("c2", "code_run", flood), llmtest.Reply{Text: "plotted"})
	tk.Ask(t, "main", "plot squares")
	m := tk.ToolResult(t, "main", "c1")
	if m.ToolStatus != "ok" || !strings.Contains(m.Content, "saved") || !strings.Contains(m.Content, "[image image/png, ") {
		t.Fatalf("code_run's plot: %+v", m)
	}
	var image bool
	for _, b := range m.Blocks {
		image = image || b.Kind == "image" && b.MIME == "image/png" && b.Size > 1000
	}
	if !image {
		t.Errorf("the plot is not an image block of the tool's result: %+v", m.Blocks)
	}
	if _, err := os.Stat(filepath.Join(data, "code", "sessions", "main", "work", "plot.png")); err != nil {
		t.Errorf("the run did not use session main's workspace: %v", err)
	}
	m = tk.ToolResult(t, "main", "c2")
	if !strings.Contains(m.Content, "[stdout truncated: 100000000 bytes written, the first 1048576 kept, the rest dropped]") ||
		strings.Contains(m.Content, "without shared memory") {
		t.Errorf("100 MB through the kernel: %d bytes, ending %q", len(m.Content), m.Content[max(0, len(m.Content)-300):])
	}
}
