//go:build integration

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	llmpkg "github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// TestTrayScreenshot: under Xvfb a window shows known text (xmessage, in the corner the app's
// window leaves free); the tray's Screenshot item (clicked over dbusmenu) captures the screen
// through X11 (the private bus has no portal) and attaches it to the chat's next message; the
// message typed into the real input carries it to the in-process kernel, which OCRs it and
// stores it as an image block; `waiter memory search` finds the message by the window's words.
// Then the model calls the app's screenshot tool: the app answers with the screen, and the
// tool's result holds it as an image block with its text, which memory search finds too.
func TestTrayScreenshot(t *testing.T) {
	for _, asset := range []string{"../../build/onnxruntime/libonnxruntime.so.1", "../../build/models/ocr/ppocr_keys_v1.txt"} {
		if _, err := os.Stat(asset); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%v: run `make assets`", err)
			}
			t.Skipf("%v: run `make assets`", err)
		}
	}
	need(t, "xmessage")
	in := newInstall(t, xserver(t))
	bus := privateBus(t)
	w := newWatcher(t, bus)
	llm := llmtest.NewServer(t)

	// The known text: in a large bitmap font at the bottom right (the app's window takes the
	// top left 1000×680).
	const text = "Zanzibar ledger 4711 approved"
	xm := exec.Command("xmessage", "-fn", "10x20", "-geometry", "-0-0", "-buttons", "", text)
	xm.Env = []string{"DISPLAY=" + in.display, "PATH=" + os.Getenv("PATH")}
	if err := xm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xm.Process.Kill(); xm.Wait() })
	in.window("^xmessage$")

	// A provider first (through the kernel's socket), then a restart: the app opens on the chat.
	start := time.Now()
	defer func() { t.Logf("whole test: %v", time.Since(start).Round(time.Millisecond)) }()
	g := in.startGUI("hologram", bus, "--data", in.data)
	g.waitTrace(map[string]any{"kind": "screen", "screen": "welcome"}, nil)
	if _, err := in.kernelClient().AddProvider(context.Background(), client.ProviderConfig{Name: "local", BaseURL: llm.URL(), Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
	<-w.items // the first run's tray item

	t.Logf("first run, provider added: %v", time.Since(start).Round(time.Millisecond))
	g = in.startGUI("hologram", bus, "--data", in.data)
	_, x, y, ww, wh := in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "chat"}, nil)
	var item string
	select {
	case item = <-w.items:
	case <-time.After(waitLong):
		t.Fatalf("the tray item never registered:\n%s", g.out)
	}
	path, items := w.menu(t, item, func(items []menuItem) bool {
		return len(items) > 0 && items[0].id > 1 && strings.Contains(labels(items), "|Screenshot|")
	})
	t0 := time.Now()
	w.click(t, item, path, items, "Screenshot")
	shot := g.waitTrace(map[string]any{"kind": "screenshot"}, func(m map[string]any) bool { return m["name"] != nil })
	t.Logf("tray click to the screenshot attached: %v (%v bytes)", time.Since(t0).Round(time.Millisecond), shot["bytes"])
	name, _ := shot["name"].(string)

	llm.Script(llmtest.Reply{Text: "PONG: a ledger"})
	t0 = time.Now()
	in.chat(x, y, ww, wh, "what is on my screen")
	g.waitTrace(map[string]any{"kind": "message", "window": "main", "role": "assistant"}, isReply)
	t.Logf("typed message with the screenshot to its reply (OCR included): %v", time.Since(t0).Round(time.Millisecond))

	hist, err := in.kernelClient().History(context.Background(), "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	var msg client.Message
	for _, m := range hist {
		if m.Role == "user" {
			msg = m
		}
	}
	if len(msg.Blocks) != 1 || msg.Blocks[0].Kind != "image" || msg.Blocks[0].Name != name || msg.Blocks[0].MIME != "image/png" {
		t.Fatalf("the message %q holds %+v; want the screenshot %s as an image block", msg.Content, msg.Blocks, name)
	}
	// OCR may split or join words: the text's letters in order are what counts.
	squash := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "")) }
	if !strings.Contains(squash(msg.Blocks[0].Text), squash(text)) {
		t.Errorf("the screenshot's OCR text %q lacks %q", msg.Blocks[0].Text, text)
	}
	for _, q := range []string{"Zanzibar", "ledger approved"} {
		hits := in.waiterSearch(q)
		if !slices.ContainsFunc(hits, func(h client.MemoryHit) bool { return h.ID == msg.ID }) {
			t.Errorf("waiter memory search %q = %+v; want the message that carried the screenshot (%d)", q, hits, msg.ID)
		}
	}

	// The model's screenshot tool: the app captures the screen for the call and answers with
	// it; the kernel stores it with the result, OCR'd, and memory search finds the result too.
	llm.Script(llmtest.Reply{ToolCalls: []llmpkg.ToolCall{{ID: "call_shot", Name: "screenshot"}}}, llmtest.Reply{Text: "PONG: I see the ledger"})
	t0 = time.Now()
	in.chat(x, y, ww, wh, "look at my screen")
	g.waitTrace(map[string]any{"kind": "message", "window": "main", "role": "assistant", "text": "PONG: I see the ledger"}, nil)
	t.Logf("typed message to the reply after the screenshot tool's call (capture, OCR): %v", time.Since(t0).Round(time.Millisecond))
	if hist, err = in.kernelClient().History(context.Background(), "main", 0); err != nil {
		t.Fatal(err)
	}
	var result client.Message
	for _, m := range hist {
		if m.Role == "tool" && m.ToolCallID == "call_shot" {
			result = m
		}
	}
	if len(result.Blocks) != 1 || result.Blocks[0].Kind != "image" || !strings.Contains(squash(result.Blocks[0].Text), squash(text)) ||
		!strings.Contains(squash(result.Content), squash(text)) {
		t.Fatalf("the screenshot tool's result %q holds %+v; want the screen with its text", result.Content, result.Blocks)
	}
	if hits := in.waiterSearch("Zanzibar"); !slices.ContainsFunc(hits, func(h client.MemoryHit) bool { return h.ID == result.ID }) {
		t.Errorf("waiter memory search Zanzibar = %+v; want the screenshot tool's result (%d)", hits, result.ID)
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
}

// waiterSearch runs `waiter memory search --json q` on the installation's kernel.
func (in *install) waiterSearch(q string) []client.MemoryHit {
	in.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "waiter"), "memory", "search", "--json", q)
	cmd.Env = in.environ("")
	out, err := cmd.Output()
	if err != nil {
		in.t.Fatalf("waiter memory search %q: %v: %s", q, err, out)
	}
	var hits []client.MemoryHit
	if err := json.Unmarshal(out, &hits); err != nil {
		in.t.Fatalf("waiter memory search %q: %v: %s", q, err, out)
	}
	return hits
}
