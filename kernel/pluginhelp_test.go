//go:build integration

package kernel_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// This file holds the helpers of the tests that run built-in plugins, built from source, under
// the real host (plugins_native_test.go, builtin_integration_test.go).

// buildPlugin builds plugins/builtin/<name> with the repository's flags into dst, created if
// needed, as `make build` lays out bin/plugins: the binary (named by plugin.json's entry, which
// is the name) beside plugin.json. capabilities, when not nil, replace those of the shipped
// plugin.json. It returns dst.
func buildPlugin(t *testing.T, name, dst string, capabilities []string) string {
	t.Helper()
	src := filepath.Join("..", "plugins", "builtin", name) // tests run in kernel/
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	gobin := "go"
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	} else if r := runtime.GOROOT(); r != "" {
		gobin = filepath.Join(r, "bin", "go")
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dst, name), ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	raw, err := os.ReadFile(filepath.Join(src, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if capabilities != nil {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		m["capabilities"] = capabilities
		if raw, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// waitFor polls cond (real plugins answer in their own time) for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLog polls the plugin's log until a line contains all of parts, for at most 30 s, and
// returns the line.
func waitLog(t *testing.T, k memKernel, plugin string, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines, err := k.Service().PluginLogs(context.Background(), plugin, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l.Line, p)
			}
			if ok {
				return l.Line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s never logged %q; its log:\n%+v", plugin, parts, lines)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// toolResult returns the tool result of call id in the session's history.
func toolResult(t *testing.T, k memKernel, session, id string) client.Message {
	t.Helper()
	msgs, err := k.Service().History(testCtx(t), session, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == id {
			return m
		}
	}
	t.Fatalf("no result for call %s in session %s", id, session)
	return client.Message{}
}

// nextEvent returns the next event of sub, failing after 30 s.
func nextEvent(t *testing.T, sub *events.Subscription) events.Event {
	t.Helper()
	select {
	case ev := <-sub.C():
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return events.Event{}
}

// callReply is a scripted model reply calling one tool.
func callReply(id, name, args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}}
}
