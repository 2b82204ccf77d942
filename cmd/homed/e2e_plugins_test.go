//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// plugin returns the named plugin as `waiter plugin list --json` shows it.
func (e *env) plugin(name string) client.Plugin {
	e.t.Helper()
	var ps []client.Plugin
	e.waiterJSON(&ps, "plugin", "list", "--json")
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	e.t.Fatalf("plugin %s not listed: %+v", name, ps)
	return client.Plugin{}
}

// waitPlugin polls the plugin list (a child process must come up or go down) until ok holds,
// for at most 30 s.
func (e *env) waitPlugin(name, what string, ok func(client.Plugin) bool) client.Plugin {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		p := e.plugin(name)
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("plugin %s: not %s in 30 s: %+v", name, what, p)
		}
		<-tick.C
	}
}

// toolResults returns the tool results of the last turn's history by tool name.
func (e *env) toolResults() map[string]client.Message {
	e.t.Helper()
	var msgs []client.Message
	e.waiterJSON(&msgs, "history", "--json")
	names := map[string]string{}
	out := map[string]client.Message{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
		if m.Role == "tool" {
			out[names[m.ToolCallID]] = m
		}
	}
	return out
}

func TestPluginsThroughWaiter(t *testing.T) {
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	fsPeer := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-filesystem")
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	h := e.start()
	e.addProvider(fake.URL(), "sk-plugins")

	out, errOut, code := e.waiter("", nil, "plugin", "add", "everything", "--command", "node '"+everything+"' stdio")
	if code != 0 || !strings.Contains(out, "plugin everything added") {
		t.Fatalf("plugin add: %d %s%s", code, out, errOut)
	}
	p := e.waitPlugin("everything", "running", func(p client.Plugin) bool { return p.State == "running" })
	for _, tool := range []string{"echo", "get-sum", "get-tiny-image"} {
		if !contains(p.Tools, tool) {
			t.Fatalf("everything's tools %v lack %s", p.Tools, tool)
		}
	}
	table, _, _ := e.waiter("", nil, "plugin", "list")
	if !strings.Contains(table, "everything") || !strings.Contains(table, "running") || !strings.Contains(table, strconv.Itoa(p.PID)) {
		t.Fatalf("plugin list:\n%s", table)
	}
	var tools []client.Tool
	e.waiterJSON(&tools, "tools", "--json")
	srcs := map[string]string{}
	for _, tl := range tools {
		srcs[tl.Name] = tl.Source
	}
	if srcs["echo"] != "everything" || srcs["get-sum"] != "everything" {
		t.Fatalf("tool sources %v", srcs)
	}

	t.Run("calls through the model", func(t *testing.T) {
		fake.Script(
			llmtest.Reply{ToolCalls: []llm.ToolCall{
				{ID: "e1", Name: "echo", Arguments: `{"message":"你好, plugin"}`},
				{ID: "s1", Name: "get-sum", Arguments: `{"a":19,"b":23}`},
				{ID: "i1", Name: "get-tiny-image", Arguments: `{}`},
			}},
			llmtest.Reply{Text: "all done"},
		)
		if got := e.ask("echo, add and show an image"); got != "all done" {
			t.Fatalf("reply %q", got)
		}
		res := e.toolResults()
		if m := res["echo"]; m.ToolStatus != "ok" || !strings.Contains(m.Content, "你好, plugin") {
			t.Fatalf("echo result %+v", m)
		}
		if m := res["get-sum"]; m.ToolStatus != "ok" || !strings.Contains(m.Content, "42") {
			t.Fatalf("get-sum result %+v", m)
		}
		img := res["get-tiny-image"]
		if img.ToolStatus != "ok" || !strings.Contains(img.Content, "image/png") || strings.Contains(img.Content, "iVBORw0KGgo") || len(img.Content) > 1000 {
			t.Fatalf("image result not summarised (%d bytes): %.300q", len(img.Content), img.Content)
		}
	})

	t.Run("filesystem server on a Chinese file, and its errors", func(t *testing.T) {
		dir := filepath.Join(e.root, "notes")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		text := "春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。\n"
		file := filepath.Join(dir, "春晓.txt")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		dir, _ = filepath.EvalSymlinks(dir)
		if out, errOut, code := e.waiter("", nil, "plugin", "add", "fs", "--command", "node "+fsPeer+" "+dir); code != 0 {
			t.Fatalf("add fs: %d %s%s", code, out, errOut)
		}
		e.waitPlugin("fs", "running", func(p client.Plugin) bool { return p.State == "running" && contains(p.Tools, "read_text_file") })
		args, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, "春晓.txt")})
		fake.Script(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "read_text_file", Arguments: string(args)}}},
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "r2", Name: "read_text_file", Arguments: `{"path":"/etc/passwd"}`}}},
			llmtest.Reply{Text: "read"},
		)
		if got := e.ask("read my poem"); got != "read" {
			t.Fatalf("reply %q", got)
		}
		var msgs []client.Message
		e.waiterJSON(&msgs, "history", "--json")
		var okMsg, errMsg *client.Message
		for i := range msgs {
			switch msgs[i].ToolCallID {
			case "r1":
				okMsg = &msgs[i]
			case "r2":
				errMsg = &msgs[i]
			}
		}
		if okMsg == nil || okMsg.ToolStatus != "ok" || !strings.Contains(okMsg.Content, "春眠不觉晓") || !strings.Contains(okMsg.Content, "花落知多少") {
			t.Fatalf("read_text_file result %+v", okMsg)
		}
		if errMsg == nil || errMsg.ToolStatus != "error" || !strings.Contains(strings.ToLower(errMsg.Content), "denied") {
			t.Fatalf("the server's error is not relayed as the tool result: %+v", errMsg)
		}
	})

	t.Run("logs", func(t *testing.T) {
		out, errOut, code := e.waiter("", nil, "plugin", "logs", "everything")
		if code != 0 || strings.TrimSpace(out) == "" {
			t.Fatalf("plugin logs: %d %q %s", code, out, errOut)
		}
		if out, _, _ := e.waiter("", nil, "plugin", "logs", "everything", "-n", "1"); strings.Count(out, "\n") != 1 {
			t.Fatalf("logs -n 1: %q", out)
		}
	})

	t.Run("kill -9 restarts, the breaker trips and enable resets it", func(t *testing.T) {
		p := e.plugin("everything")
		for i := 1; i <= 4; i++ {
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
				t.Fatalf("kill %d: %v", p.PID, err)
			}
			old := p.PID
			if i < 4 {
				p = e.waitPlugin("everything", "restarted", func(q client.Plugin) bool {
					return q.State == "running" && q.PID != old && q.PID != 0 && contains(q.Tools, "echo")
				})
				if p.Restarts < i {
					t.Fatalf("after crash %d: restarts %d", i, p.Restarts)
				}
				continue
			}
			p = e.waitPlugin("everything", "tripped", func(q client.Plugin) bool { return q.State == "tripped" })
		}
		if len(p.Tools) != 0 || p.PID != 0 {
			t.Fatalf("tripped plugin keeps tools or a pid: %+v", p)
		}
		var tools []client.Tool
		e.waiterJSON(&tools, "tools", "--json")
		for _, tl := range tools {
			if tl.Source == "everything" {
				t.Fatalf("tripped plugin's tool %s still offered", tl.Name)
			}
		}
		// It stays tripped: the 3 s restart delay has long passed by the time it is listed again.
		if q := e.plugin("everything"); q.State != "tripped" {
			t.Fatalf("breaker did not hold: %+v", q)
		}
		if out, errOut, code := e.waiter("", nil, "plugin", "enable", "everything"); code != 0 {
			t.Fatalf("enable: %d %s%s", code, out, errOut)
		}
		e.waitPlugin("everything", "running again", func(q client.Plugin) bool { return q.State == "running" && contains(q.Tools, "echo") })
	})

	t.Run("remove", func(t *testing.T) {
		if out, errOut, code := e.waiter("", nil, "plugin", "remove", "fs"); code != 0 || !strings.Contains(out, "removed") {
			t.Fatalf("remove: %d %s%s", code, out, errOut)
		}
		_, errOut, code := e.waiter("", nil, "plugin", "restart", "fs")
		if code != 1 || !strings.Contains(errOut, "404") {
			t.Fatalf("restart a removed plugin: %d %s", code, errOut)
		}
	})

	// The added plugin survives a restart of homed.
	h.stop(t)
	e.start()
	e.waitPlugin("everything", "running after restart", func(q client.Plugin) bool { return q.State == "running" })
}
