//go:build integration

package kernel_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
)

// bigMCP returns the command line of the test MCP server with 300 tools and a 10 MiB result.
func bigMCP(t *testing.T, args ...string) []string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the test MCP server: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "plugins", "testdata", "mcp", "bigmcp.py"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{py, script}, args...)
}

// TestLimitsWithStrictProvider runs every built-in plugin plus an MCP server of 300 tools (half
// of them with "required": null) and a 10 MiB result against the strict llmtest server, which
// answers HTTP 400 like api.openai.com to more than 128 tools, an invalid schema or a prompt
// over its context: every turn succeeds, each request offers at most 128 valid tools, the big
// result reaches the model as a head and a tail, and the model pages it with result_read.
func TestLimitsWithStrictProvider(t *testing.T) {
	var names []string
	for _, b := range config.BuiltinPlugins {
		names = append(names, b.Name)
	}
	b := newBuiltinKernelOf(t, "", names, names)
	ctx := testCtx(t)
	if _, err := b.Service().AddPlugin(ctx, client.PluginConfig{Name: "big", Command: bigMCP(t)}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"files", "notes", "calendar", "rss", "web"} {
		b.waitState(t, name, "running")
	}
	if p := b.waitState(t, "big", "running"); len(p.Tools) != 301 {
		t.Fatalf("big offers %d tools, want 301", len(p.Tools))
	}
	all, err := b.Service().Tools(ctx)
	if err != nil || len(all) < 320 {
		t.Fatalf("%d tools available (%v), want the built-ins' and 301", len(all), err)
	}

	// A tool named verbatim is offered; the 10 MiB result is cut for the model.
	b.fake.Script(callReply("b1", "big_result", `{}`))
	chat(t, b.memKernel, "main", "call big_result and also op_277 later")
	m := toolResult(t, b.memKernel, "main", "b1")
	hint := regexp.MustCompile(`call result_read with (\{[^}]*\})`).FindStringSubmatch(m.Content)
	if m.ToolStatus != "ok" || hint == nil || len(m.Content) > 64<<10 || !strings.HasPrefix(m.Content, "row 00000000:") {
		t.Fatalf("big result as stored for the model: %s, %d bytes: %.200q", m.ToolStatus, len(m.Content), m.Content)
	}
	// The model reads on where the note says.
	b.fake.Script(callReply("r1", "result_read", hint[1]))
	chat(t, b.memKernel, "main", "read more of it")
	page := toolResult(t, b.memKernel, "main", "r1")
	var a struct {
		ID             string
		Offset, Length int
	}
	if err := json.Unmarshal([]byte(hint[1]), &a); err != nil {
		t.Fatal(err)
	}
	blk, err := b.Store.Block(ctx, a.ID)
	if err != nil || len(blk.Text) != 10<<20-(10<<20)%69 {
		t.Fatalf("block %s: %d bytes, %v", a.ID, len(blk.Text), err)
	}
	head, body, _ := strings.Cut(page.Content, "\n")
	if page.ToolStatus != "ok" || body != blk.Text[a.Offset:a.Offset+a.Length] || !strings.HasPrefix(head, fmt.Sprintf("[bytes %d–%d of %d", a.Offset, a.Offset+a.Length, len(blk.Text))) {
		t.Fatalf("result_read page: %s %q, %d bytes", page.ToolStatus, head, len(body))
	}
	// A plain turn still works, the last request offered op_277 (named in the first input is
	// not enough: the window is for the turn's own input), and every request was valid.
	b.fake.Script(callReply("o1", "op_277", `{"value":"x"}`))
	chat(t, b.memKernel, "main", "now run op_277 on x")
	if m := toolResult(t, b.memKernel, "main", "o1"); m.ToolStatus != "ok" || !strings.Contains(m.Content, "op_277") {
		t.Fatalf("op_277: %+v", m)
	}
	reqs := b.fake.Requests()
	for i, r := range reqs {
		if len(r.Tools) > llm.MaxTools {
			t.Fatalf("request %d offered %d tools", i, len(r.Tools))
		}
		if len(r.Raw) > 4*128_000 {
			t.Fatalf("request %d is %d bytes", i, len(r.Raw))
		}
	}
	last := reqs[len(reqs)-1]
	if !slices.Contains(last.Tools, "op_277") || !slices.Contains(last.Tools, "tool_search") || !slices.Contains(last.Tools, "result_read") {
		t.Fatalf("last request's tools lack op_277, tool_search or result_read: %v", last.Tools)
	}
	w, err := b.Service().Window(ctx, "main")
	if err != nil || w.Tools == nil || w.Tools.Sent > llm.MaxTools || w.Tools.Left == 0 || len(w.Tools.Tools) < 320 {
		t.Fatalf("window's tools: %+v %v", w.Tools, err)
	}
	t.Logf("%d tools available; the last request sent %d (%d tokens), left out %d", len(all), w.Tools.Sent, w.Tools.Tokens, w.Tools.Left)
}

// TestSilentPluginDelaysNothing configures an MCP server that never answers beside the built-in
// plugins: the built-ins' tools come at once (they start first, all at once), the silent one
// shows as starting, and a turn meanwhile waits at most 3 s and says which plugin is missing.
func TestSilentPluginDelaysNothing(t *testing.T) {
	b := newBuiltinKernelOf(t, "", []string{"files", "notes", "calendar"}, nil,
		config.PluginConfig{Name: "silent", Command: bigMCP(t, "--silent")})
	start := time.Now() // the kernel started just now (after the plugins were built)
	ctx := testCtx(t)
	var ready time.Duration
	waitFor(t, "the built-ins' tools", func() bool {
		ts, err := b.Service().Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tl := range ts {
			if tl.Source == "files" || tl.Source == "notes" || tl.Source == "calendar" {
				n++
			}
		}
		ready = time.Since(start)
		return n >= 10
	})
	b.waitState(t, "silent", "starting") // added once the built-ins made their first attempt
	turn := time.Now()
	res := chat(t, b.memKernel, "main", "hello")
	if !strings.Contains(res.Text, "(still starting, their tools were not offered: silent)") {
		t.Fatalf("reply %q does not say silent is missing", res.Text)
	}
	t.Logf("built-ins' tools listed %s after New; a turn meanwhile took %s (it waits at most 3 s)", ready.Round(time.Millisecond), time.Since(turn).Round(time.Millisecond))
}
