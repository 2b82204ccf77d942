//go:build integration

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestConfinedThroughKernel runs the built plugin under the real host and kernel with a home
// of its own: approved commands work in the root and in their TMPDIR, while reading the key
// file in that home and writing outside the root are refused by the confinement the commands
// inherit (the allow-list permits them: only the sandbox stands in the way).
func TestConfinedThroughKernel(t *testing.T) {
	tk := hosttest.Start(t, hosttest.Options{})
	fake := tk.AddModel(t)
	home := t.TempDir()
	key := filepath.Join(home, ".config", "hologram", "key")
	root, outside := filepath.Join(home, "work"), filepath.Join(home, "elsewhere")
	data, conf := filepath.Join(home, ".local", "share", "hologram"), filepath.Join(home, ".config", "hologram")
	for _, d := range []string{filepath.Dir(key), root, outside, filepath.Join(conf, "plugins")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(key, []byte("v1 deadbeef SECRET-MASTER-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Ann Owner\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kite.txt"), []byte("a kite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	toml := "roots = [\"" + root + "\"]\n" +
		"[[allow]]\nprogram = \"ls\"\n[[allow]]\nprogram = \"echo\"\n[[allow]]\nprogram = \"cat\"\n[[allow]]\nprogram = \"touch\"\n" +
		"[[allow]]\nshell = \"*\"\n"
	if err := os.WriteFile(filepath.Join(conf, "plugins", "shell.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := tk.RunPlugin(t, "shell", hosttest.Build(t), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "HOLOGRAM_DATA_DIR="+data, "HOLOGRAM_CONFIG_DIR="+conf)
	sandboxtest.CheckProcess(t, p.PID)

	// The owner approves every command while the turns run.
	ctx, cancel := context.WithCancel(hosttest.Context(t))
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			list, _ := tk.Service().Approvals(ctx)
			for _, a := range list {
				tk.Service().AnswerApproval(ctx, a.ID, true)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for _, tc := range []struct {
		name, args string
		status     string
		want       []string
	}{
		{"ls in the root", `{"argv":["ls"]}`, "ok", []string{"exit 0", "kite.txt"}},
		{"echo", `{"argv":["echo","hello from the box"]}`, "ok", []string{"exit 0", "hello from the box"}},
		{"write in the root", `{"argv":["touch","made.txt"]}`, "ok", []string{"exit 0"}},
		{"TMPDIR is private and writable", `{"command":"echo tmp=$TMPDIR; mktemp"}`, "ok", []string{"tmp=" + filepath.Join(data, "shell", "tmp") + "\n", filepath.Join(data, "shell", "tmp") + "/tmp."}},
		// Writable only because plugin.json declares ${HOLOGRAM_DATA_DIR}/shell: the host
		// expands it and passes it on (HOLOGRAM_PERMISSIONS), the plugin confines itself to it.
		{"a path the manifest declares", `{"argv":["touch","` + filepath.Join(data, "shell", "declared.txt") + `"]}`, "ok", []string{"exit 0"}},
		{"git reads its settings", `{"command":"git config --global user.name"}`, "ok", []string{"Ann Owner"}},
		{"the key", `{"argv":["cat","` + key + `"]}`, "error", []string{"exit 1", "Permission denied"}},
		{"write outside", `{"argv":["touch","` + filepath.Join(outside, "planted") + `"]}`, "error", []string{"exit 1", "Permission denied"}},
		{"a shell line reading the home", `{"command":"cat ~/.config/hologram/key || ls ~"}`, "error", []string{"Permission denied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "c-" + strings.ReplaceAll(tc.name, " ", "-")
			fake.Script(hosttest.Call(id, "shell_run", tc.args), llmtest.Reply{Text: "done"})
			tk.Ask(t, "main", "run it")
			m := tk.ToolResult(t, "main", id)
			if m.ToolStatus != tc.status {
				t.Fatalf("status %q, want %q: %s", m.ToolStatus, tc.status, m.Content)
			}
			for _, w := range tc.want {
				if !strings.Contains(m.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, m.Content)
				}
			}
			if strings.Contains(m.Content, "SECRET") {
				t.Errorf("the key leaked:\n%s", m.Content)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); err != nil {
		t.Errorf("the command's file in the root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Errorf("a command wrote outside the root")
	}
}
