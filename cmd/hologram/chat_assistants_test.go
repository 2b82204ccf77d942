//go:build !nokernel

package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/gui"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// lastButton returns the last visible button labelled text (a dialog's, over the window's).
func lastButton(t *testing.T, w fyne.Window, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	walkWindow(w, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("no button %q", text)
	}
	return found
}

// typeInto sets the text of the last visible entry (or select entry) whose placeholder is ph.
func typeInto(t *testing.T, w fyne.Window, ph, text string) {
	t.Helper()
	var set func(string)
	walkWindow(w, func(o fyne.CanvasObject) {
		switch e := o.(type) {
		case *widget.Entry:
			if e.PlaceHolder == ph {
				set = e.SetText
			}
		case *widget.SelectEntry:
			if e.PlaceHolder == ph {
				set = e.SetText
			}
		}
	})
	if set == nil {
		t.Fatalf("no entry with the placeholder %q", ph)
	}
	set(text)
}

// TestChatAssistants drives the desktop chat with Fyne's test driver over the kernel
// in-process with a real MCP server as a plugin: New session → Assistants… → a preset filled in
// and saved (the kernel keeps it), the screenshot build/screenshots/assistant-preset.png, Start
// a chat (its instructions, model and only its tools reach the provider), then a second chat
// from the New session dialog's "Start from".
func TestChatAssistants(t *testing.T) {
	d := inProcessKernel(t)
	fake := llmtest.NewServer(t)
	svc := d.Kernel.Service()
	ctx := context.Background()
	for _, p := range []client.ProviderConfig{{Name: "local", BaseURL: fake.URL(), Model: "qwen2.5"}, {Name: "coder", BaseURL: fake.URL(), Model: "qwen2.5-coder", Priority: 5}} {
		if _, err := svc.AddProvider(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// A real MCP server (npm peer) brings tools a preset may allow or not.
	entry := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	if _, err := svc.AddPlugin(ctx, client.PluginConfig{Name: "everything", Command: []string{"node", entry, "stdio"}}); err != nil {
		t.Fatal(err)
	}
	newQueuedApp(t)
	win := test.NewTempWindow(t, nil)
	vm := gui.NewChatVM(svc, gui.ChatOptions{})
	win.SetContent(gui.NewChatView(vm, win))
	win.Resize(fyne.NewSize(1000, 700))
	vm.Wait()

	test.Tap(findButton(t, win, "New session"))
	vm.Wait()
	waitWindow(t, "the New session dialog", func() bool { return findSelect(win) != nil })
	if opts := findSelect(win).Options; len(opts) != 1 || opts[0] != "Blank chat" {
		t.Fatalf("Start from offers %v before any assistant, want a blank chat only", opts)
	}
	test.Tap(lastButton(t, win, "Assistants…"))
	waitWindow(t, "the Assistants dialog", func() bool { return windowHasButton(win, "New assistant") })
	typeInto(t, win, "e.g. Translator", "Code reviewer")
	typeInto(t, win, "What the assistant is and does (the chat's system prompt)", "You review Go code: point out bugs first, then style. Answer in short bullet points.")
	typeInto(t, win, "Default model", "qwen2.5-coder")
	typeInto(t, win, "Every tool", "files, echo")
	test.Tap(lastButton(t, win, "Save"))
	vm.Wait()
	waitWindow(t, "the saved status and the running plugins", func() bool {
		return windowHasLabel(win, "Assistant Code reviewer saved.") && windowHasLabel(win, "Plugins running now: everything")
	})
	list, err := svc.Assistants(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "code-reviewer" || list[0].Model != "qwen2.5-coder" || strings.Join(list[0].Tools, ",") != "files,echo" {
		t.Fatalf("the kernel's assistants: %+v, %v", list, err)
	}
	saveShot(t, win, "assistant-preset")

	test.Tap(lastButton(t, win, "Start a chat"))
	vm.Wait()
	first := vm.Current()
	if !strings.HasPrefix(first, "code-reviewer-") || !strings.HasPrefix(vm.Instructions().SystemPrompt, "You review Go code") || vm.Instructions().Model != "qwen2.5-coder" {
		t.Fatalf("after Start a chat: session %q, instructions %+v", first, vm.Instructions())
	}
	findIn[*widget.Accordion](t, win).Open(0) // Instructions
	waitWindow(t, "the chat's tools in its Instructions", func() bool {
		return windowHasLabel(win, "Only files, echo (from the assistant code-reviewer)")
	})
	fake.Script(llmtest.Reply{Text: "- `err` is ignored on line 3."})
	vm.SetDraft("Review: f, _ := os.Open(p)")
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	waitChat(t, vm, "the reviewer's reply", func(ms []gui.ChatMessage) bool { return len(ms) == 2 && strings.Contains(ms[1].Text, "ignored") })
	req := fake.Requests()[len(fake.Requests())-1]
	if req.Model != "qwen2.5-coder" || req.Messages[0].Role != "system" || !strings.Contains(req.Messages[0].Content, "You review Go code") {
		t.Errorf("the reviewer's request: model %q, first message %+v", req.Model, req.Messages[0])
	}
	if !slices.Contains(req.Tools, "echo") || slices.Contains(req.Tools, "get-sum") {
		t.Errorf("the reviewer's request offers %v; want echo and not get-sum", req.Tools)
	}

	// The New session dialog now offers the preset.
	test.Tap(findButton(t, win, "New session"))
	vm.Wait()
	waitWindow(t, "the New session dialog with the preset", func() bool { s := findSelect(win); return s != nil && len(s.Options) == 2 })
	findSelect(win).SetSelected("Code reviewer")
	typeInto(t, win, "Optional", "Review of main.go")
	test.Tap(lastButton(t, win, "Create"))
	vm.Wait()
	if cur := vm.Current(); cur == first || !strings.HasPrefix(cur, "code-reviewer-") {
		t.Fatalf("the second chat from the preset is %q (the first %q)", cur, first)
	}
	var title string
	for _, s := range vm.Sessions() {
		if s.ID == vm.Current() {
			title = s.Title
		}
	}
	if title != "Review of main.go" {
		t.Errorf("the second chat's title %q", title)
	}
	// The main chat offers every tool.
	if err := vm.SelectSession(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	vm.Wait()
	waitWindow(t, "every tool in the main chat", func() bool { return windowHasLabel(win, "Every tool") })
}

// findSelect returns the last visible select (a dialog's), nil when none.
func findSelect(w fyne.Window) *widget.Select {
	var found *widget.Select
	walkWindow(w, func(o fyne.CanvasObject) {
		if s, ok := o.(*widget.Select); ok {
			found = s
		}
	})
	return found
}

// windowHasButton reports whether a visible button reads text.
func windowHasButton(w fyne.Window, text string) bool {
	found := false
	walkWindow(w, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			found = true
		}
	})
	return found
}

// saveShot saves w's capture as build/screenshots/<name>.png (copied to docs/screenshots after
// a look).
func saveShot(t *testing.T, w fyne.Window, name string) {
	t.Helper()
	dir := filepath.Join("..", "..", "build", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
