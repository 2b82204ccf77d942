//go:build integration

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
)

// TestProviderLimitsThroughHomed is the provider-rules issue's run through the real homed and
// waiter against ../shared/tools/fake_openai.py, which answers HTTP 400 as real servers do to
// more than 128 tools, an invalid schema anywhere in a tool, or a prompt over 128k tokens: every
// built-in plugin, an MCP server of 300 tools (half with "required": null) and a 10 MiB result,
// and one that never answers. Each turn succeeds; the model pages the big result with
// result_read; a runaway streamed reply is cut with a note and waiter exits 0; the silent server
// is listed as starting, then as failed with its reason.
func TestProviderLimitsThroughHomed(t *testing.T) {
	fake := startFakeOpenAI(t)
	e := newEnv(t)
	bp := filepath.Join(e.root, "builtin")
	var names []string
	for _, b := range config.BuiltinPlugins {
		names = append(names, b.Name)
	}
	buildBuiltins(t, bp, names...)
	t.Setenv("HOLOGRAM_PLUGINS_DIR", bp)
	script, err := filepath.Abs(filepath.Join("..", "..", "plugins", "testdata", "mcp", "bigmcp.py"))
	if err != nil {
		t.Fatal(err)
	}
	h := e.start()
	e.addProvider(fake.url, "sk-limits")
	for _, add := range [][]string{
		{"big", "--command", "python3 " + script},
		{"silent", "--command", "python3 " + script + " --silent"},
	} {
		if out, errOut, code := e.waiter("", nil, append([]string{"plugin", "add"}, add...)...); code != 0 {
			t.Fatalf("plugin add %v: %d %s%s", add, code, out, errOut)
		}
	}
	// Restarted with both configured: the silent server is "starting" while every other tool
	// is listed.
	h.stop(t)
	started := time.Now()
	h = e.start()
	// (Configured plugins are added once the built-ins made their first attempt.)
	for first := true; ; first = false {
		var ps []client.Plugin
		e.waiterJSON(&ps, "plugin", "list", "--json")
		i := slices.IndexFunc(ps, func(p client.Plugin) bool { return p.Name == "silent" })
		if i >= 0 {
			if ps[i].State != "starting" {
				t.Fatalf("the silent server when first listed after start: %+v", ps[i])
			}
			break
		}
		if !first && time.Since(started) > 30*time.Second {
			t.Fatal("the silent server not listed 30 s after start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		var tools []client.Tool
		e.waiterJSON(&tools, "tools", "--json")
		if len(tools) >= 320 {
			t.Logf("%d tools listed %s after homed started", len(tools), time.Since(started).Round(time.Millisecond))
			break
		}
		if time.Since(started) > 30*time.Second {
			t.Fatalf("%d tools listed 30 s after start", len(tools))
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.waitPlugin("big", "running with 301 tools", func(p client.Plugin) bool { return p.State == "running" && len(p.Tools) == 301 })
	for _, name := range []string{"files", "notes", "calendar", "rss", "web"} {
		e.waitPlugin(name, "running", func(p client.Plugin) bool { return p.State == "running" })
	}

	// The 10 MiB result reaches the model as a head and a tail with a result_read hint.
	if got := e.ask("CALL big_result {}"); !strings.HasPrefix(got, "DONE ") || len(got) > 128<<10 {
		t.Fatalf("big_result turn: %d bytes: %.200q", len(got), got)
	}
	var hist []client.Message
	e.waiterJSON(&hist, "history", "--json")
	var hint string
	for _, m := range hist {
		if s := regexp.MustCompile(`call result_read with (\{[^}]*\})`).FindStringSubmatch(m.Content); s != nil {
			hint = s[1]
		}
	}
	if hint == "" {
		t.Fatal("no result_read hint in the history")
	}
	if got := e.ask("CALL result_read " + hint); !strings.HasPrefix(got, "DONE [bytes ") {
		t.Fatalf("result_read turn: %.200q", got)
	}

	// A runaway model: 20 MB streamed; the reply is cut at its cap and waiter exits 0.
	out, errOut, code := e.waiter("", nil, "ask", "HUGE 20")
	if code != 0 || !strings.Contains(out, "reply cut") || len(out) > 2<<20 {
		t.Fatalf("HUGE 20: exit %d, %d bytes printed ending %q; stderr %.300s", code, len(out), tail(out, 120), errOut)
	}

	// Every request the provider saw was one a real server accepts (it answers 400 otherwise,
	// and the turns above would have failed), with at most 128 tools.
	most, biggest, n := requestShape(t, fake.log)
	if n < 5 || most > 128 || most < 20 {
		t.Fatalf("%d chat requests, at most %d tools in one", n, most)
	}
	t.Logf("%d chat requests; at most %d tools in one; the largest request %d bytes", n, most, biggest)

	// The silent server: "failed" with the reason once its handshake timed out (10 s).
	p := e.waitPlugin("silent", "failed", func(p client.Plugin) bool { return p.State == "failed" })
	if !strings.Contains(p.LastError, "no answer within") {
		t.Fatalf("failed without its reason: %+v", p)
	}
	list, _, code := e.waiter("", nil, "plugin", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^silent\s+mcp\s+failed\b.*no answer within`).MatchString(list) {
		t.Fatalf("waiter plugin list (exit %d):\n%s", code, list)
	}
	h.stop(t)
}

// requestShape reads the fake provider's log: the chat requests, the most tools in one and the
// largest body.
func requestShape(t *testing.T, log string) (most, biggest, n int) {
	t.Helper()
	fh, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct {
			Body struct {
				Messages []json.RawMessage `json:"messages"`
				Tools    []json.RawMessage `json:"tools"`
			} `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Body.Messages == nil {
			continue
		}
		n++
		most = max(most, len(rec.Body.Tools))
		biggest = max(biggest, len(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return most, biggest, n
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
