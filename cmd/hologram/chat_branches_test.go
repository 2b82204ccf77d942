//go:build !nokernel

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/gui"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// inProcessKernel starts the kernel in-process on a fresh data dir, as `hologram` runs it.
func inProcessKernel(t *testing.T) *daemon.Daemon {
	t.Helper()
	root, err := os.MkdirTemp("", "hb") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "config"), "XDG_DATA_HOME": filepath.Join(root, "xdgdata"),
		"XDG_RUNTIME_DIR": filepath.Join(root, "run"), "HOME": root}
	env := func(k string) string { return vars[k] }
	cfg, _, err := config.Load("hologram", []string{"--data", filepath.Join(root, "data"), "--socket", filepath.Join(root, "run", "k.sock")}, env)
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Start(context.Background(), "hologram", cfg, env, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// iconButtons returns the visible, icon-only buttons with icon res, in window order.
func iconButtons(w fyne.Window, res fyne.Resource) []*widget.Button {
	testUI.drain()
	var out []*widget.Button
	walkWindow(w, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == "" && b.Icon != nil && b.Icon.Name() == res.Name() {
			out = append(out, b)
		}
	})
	return out
}

// windowHasLabel reports whether a visible label of the window reads text.
func windowHasLabel(w fyne.Window, text string) bool {
	testUI.drain()
	found := false
	walkWindow(w, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok && l.Text == text {
			found = true
		}
	})
	return found
}

// waitChat waits until cond holds for the chat's messages.
func waitChat(t *testing.T, vm *gui.ChatVM, what string, cond func(ms []gui.ChatMessage) bool) []gui.ChatMessage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		testUI.drain()
		ms := vm.Messages()
		if !vm.Busy() && cond(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 20 s; messages %+v (error %v)", what, ms, vm.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitWindow waits until cond holds for the window (the view renders through fyne.Do).
func waitWindow(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for testUI.drain(); !cond(); testUI.drain() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not shown after 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func branchOf(m gui.ChatMessage) string {
	if m.Branch == nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", m.Branch.Index, m.Branch.Count)
}

// TestChatBranches drives the desktop chat with Fyne's test driver over the kernel in-process:
// a reply shows its token counts; Regenerate (the reply's button) keeps the old reply as ‹1/2›
// and shows the new one as ‹2/2›; ‹ and › browse them; Edit (the question's button) resends a
// changed question as a new branch.
func TestChatBranches(t *testing.T) {
	d := inProcessKernel(t)
	fake := llmtest.NewServer(t)
	svc := d.Kernel.Service()
	ctx := context.Background()
	if _, err := svc.AddProvider(ctx, client.ProviderConfig{Name: "local", BaseURL: fake.URL(), Model: "qwen2.5"}); err != nil {
		t.Fatal(err)
	}
	newQueuedApp(t)
	win := test.NewTempWindow(t, nil)
	vm := gui.NewChatVM(svc, gui.ChatOptions{})
	win.SetContent(gui.NewChatView(vm, win))
	win.Resize(fyne.NewSize(900, 700))
	vm.Wait()

	fake.Script(llmtest.Reply{Text: "A walrus is a large pinniped of the Arctic.", Usage: &llm.Usage{PromptTokens: 120, CompletionTokens: 11, TotalTokens: 131}})
	vm.SetDraft("What is a walrus?")
	if err := vm.Send(); err != nil {
		t.Fatal(err)
	}
	ms := waitChat(t, vm, "the first reply with its id", func(ms []gui.ChatMessage) bool {
		return len(ms) == 2 && ms[1].ID != 0 && ms[1].Usage != nil
	})
	if u := ms[1].Usage; u.PromptTokens != 120 || u.CompletionTokens != 11 {
		t.Errorf("usage %+v, want the provider's 120 → 11", u)
	}
	var usage string
	walkWindow(win, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok && strings.HasPrefix(l.Text, "120 → 11 tokens") {
			usage = l.Text
		}
	})
	if !strings.Contains(usage, "qwen2.5") && !strings.Contains(usage, " s") {
		t.Errorf("no usage line under the reply (got %q)", usage)
	}

	// Regenerate: the reply's refresh button.
	fake.Script(llmtest.Reply{Text: "Walruses are tusked seals; they haul out on sea ice."})
	regen := iconButtons(win, theme.ViewRefreshIcon())
	if len(regen) != 1 {
		t.Fatalf("%d regenerate buttons, want 1 (the reply's)", len(regen))
	}
	test.Tap(regen[0])
	ms = waitChat(t, vm, "the regenerated reply ‹2/2›", func(ms []gui.ChatMessage) bool {
		return len(ms) == 2 && strings.HasPrefix(ms[1].Text, "Walruses are tusked") && branchOf(ms[1]) == "2/2"
	})
	if ms[0].Text != "What is a walrus?" {
		t.Errorf("after regenerate: %+v", ms)
	}
	waitWindow(t, "the 2/2 label and its ‹ button", func() bool {
		return windowHasLabel(win, "2/2") && len(iconButtons(win, theme.NavigateBackIcon())) == 1
	})
	if reqs := fake.Requests(); len(reqs) != 2 || countRole(reqs[1].Messages, "user") != 1 {
		t.Errorf("the regenerate request asked the question %d times", countRole(reqs[len(reqs)-1].Messages, "user"))
	}

	// ‹ shows the first reply, › the second again.
	test.Tap(iconButtons(win, theme.NavigateBackIcon())[0])
	waitChat(t, vm, "back to ‹1/2›", func(ms []gui.ChatMessage) bool {
		return len(ms) == 2 && strings.HasPrefix(ms[1].Text, "A walrus is") && branchOf(ms[1]) == "1/2"
	})
	waitWindow(t, "the 1/2 label", func() bool { return windowHasLabel(win, "1/2") })
	test.Tap(iconButtons(win, theme.NavigateNextIcon())[0])
	waitChat(t, vm, "forth to ‹2/2›", func(ms []gui.ChatMessage) bool {
		return len(ms) == 2 && strings.HasPrefix(ms[1].Text, "Walruses are tusked") && branchOf(ms[1]) == "2/2"
	})

	waitWindow(t, "the 2/2 label again", func() bool { return windowHasLabel(win, "2/2") })

	// Edit the question: its pencil button, the dialog's text, Send.
	fake.Script(llmtest.Reply{Text: "A seal is a pinniped without tusks."})
	test.Tap(iconButtons(win, theme.DocumentCreateIcon())[0])
	var dialogEntry *widget.Entry
	walkWindow(win, func(o fyne.CanvasObject) {
		if e, ok := o.(*widget.Entry); ok && e.Text == "What is a walrus?" {
			dialogEntry = e
		}
	})
	if dialogEntry == nil {
		t.Fatal("the edit dialog does not hold the question")
	}
	dialogEntry.SetText("What is a seal?")
	var send *widget.Button // the dialog's (overlays come last), not the chat's own
	walkWindow(win, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == "Send" {
			send = b
		}
	})
	test.Tap(send)
	ms = waitChat(t, vm, "the edited question ‹2/2›", func(ms []gui.ChatMessage) bool {
		return len(ms) == 2 && ms[0].Text == "What is a seal?" && branchOf(ms[0]) == "2/2" && strings.HasPrefix(ms[1].Text, "A seal is")
	})
	if got := fake.Requests(); countRole(got[len(got)-1].Messages, "user") != 1 || lastUser(got[len(got)-1].Messages) != "What is a seal?" {
		t.Errorf("the edited request: %+v", got[len(got)-1].Messages)
	}
	// The kernel keeps both questions: the history's first message is ‹2/2›.
	h, err := svc.History(ctx, "main", 0)
	if err != nil || len(h) != 2 || h[0].Branch == nil || h[0].Branch.Count != 2 {
		t.Errorf("kernel history after the edit: %+v, %v", h, err)
	}
}

func countRole(ms []llm.Message, role string) int {
	n := 0
	for _, m := range ms {
		if m.Role == role {
			n++
		}
	}
	return n
}

func lastUser(ms []llm.Message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == "user" {
			return ms[i].Content
		}
	}
	return ""
}
