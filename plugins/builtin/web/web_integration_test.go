//go:build integration

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/kerneltest/hosttest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox/sandboxtest"
)

// TestWebThroughKernel runs the built plugin under the real host and kernel, driven through
// the kernel's API: the model calls web_fetch and web_browse on a local server allow-listed
// for the test, and on an address that is not.
func TestWebThroughKernel(t *testing.T) {
	tk := hosttest.Start(t, hosttest.Options{API: true})
	fake := tk.AddModel(t)
	priv, hits := privateServer(t)
	srv := jsServer(t, priv.URL)
	article := newTestServer(t, priv.URL)
	// A home of its own, as a confined plugin sees it: its state under the data dir.
	home := t.TempDir()
	env := []string{"HOLOGRAM_WEB_ALLOW=" + srv.Listener.Addr().String() + "," + article.Listener.Addr().String(),
		"HOME=" + home, "HOLOGRAM_DATA_DIR=" + filepath.Join(home, "data")}
	chrome := chromiumOrEmpty(t)
	if chrome != "" {
		env = append(env, "HOLOGRAM_WEB_CHROMIUM="+chrome)
	}
	p := tk.RunPlugin(t, "web", hosttest.Build(t), env...)
	sandboxtest.CheckProcess(t, p.PID)
	if strings.Join(p.Tools, ",") != "web_browse,web_fetch" && strings.Join(p.Tools, ",") != "web_fetch,web_browse" {
		t.Fatalf("tools %v", p.Tools)
	}

	fake.Script(hosttest.Call("f1", "web_fetch", `{"url":"`+article.URL+`/article"}`),
		hosttest.Call("f2", "web_fetch", `{"url":"`+article.URL+`/to-private"}`), llmtest.Reply{Text: "read"})
	tk.Ask(t, "main", "read the kite article")
	if m := tk.ToolResult(t, "main", "f1"); m.ToolStatus != "ok" || !strings.HasPrefix(m.Content, "# Kites of Weifang\nURL: "+article.URL+"/article") ||
		!strings.Contains(m.Content, "kite capital of the world") {
		t.Fatalf("web_fetch: %+v", m)
	}
	if m := tk.ToolResult(t, "main", "f2"); m.ToolStatus != "error" || !strings.Contains(m.Content, "redirected to "+priv.URL+": refused to connect to 127.0.0.1:") {
		t.Fatalf("web_fetch of a redirect to a private address: %+v", m)
	}

	if chrome == "" {
		t.Log("no chromium: web_browse through the kernel not run")
		return
	}
	fake.Script(hosttest.Call("b1", "web_browse", `{"url":"`+srv.URL+`/js","wait_for":"#done","screenshot":true}`), llmtest.Reply{Text: "seen"})
	tk.Ask(t, "main", "look at the page")
	m := tk.ToolResult(t, "main", "b1")
	if m.ToolStatus != "ok" || !strings.Contains(m.Content, "rendered by JavaScript: 四十二") || !strings.Contains(m.Content, "[image image/png, ") {
		t.Fatalf("web_browse: %+v", m)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the private server", n)
	}
}
