package gui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
)

// chatAtBottom says whether the chat's scroll shows the end of its messages.
func chatAtBottom(v *chatView) (bool, string) {
	content := v.scroll.Content.Size().Height
	view := v.scroll.Size().Height
	off := v.scroll.Offset.Y
	return content <= view || off >= content-view-1, fmt.Sprintf("offset %.0f of content %.0f in a view of %.0f", off, content, view)
}

// TestChatOpensAtTheNewestMessage: a chat with a long history opens scrolled to its last
// message, in the window's real size (the history arrives before the view is laid out), and
// so does a session selected from the list.
func TestChatOpensAtTheNewestMessage(t *testing.T) {
	test.NewTempApp(t)
	f, c := uiKernel(t)
	ctx := context.Background()
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "p", BaseURL: "http://127.0.0.1:1", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	_ = f
	long := strings.Repeat("a long line of text that wraps in the bubble ", 6)
	for _, sess := range []string{"main", "other"} {
		if sess != "main" {
			if _, err := c.CreateSession(ctx, client.Session{ID: sess, Title: "Other"}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 12 {
			if _, err := c.Chat(ctx, client.ChatRequest{Session: sess, Input: fmt.Sprintf("%s %d %s", sess, i, long)}, func(client.ChatEvent) {}); err != nil {
				t.Fatal(err)
			}
		}
	}
	vm := NewChatVM(c, ChatOptions{})
	u := chatTestView(t, vm)
	u.w.Resize(fyne.NewSize(900, 600))
	u.settle()
	if len(u.v.bubbles) != 24 {
		t.Fatalf("%d bubbles, want 24", len(u.v.bubbles))
	}
	if ok, why := chatAtBottom(u.v); !ok {
		t.Errorf("main opens away from its newest message: %s", why)
	}
	if err := vm.SelectSession(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	u.settle()
	if ok, why := chatAtBottom(u.v); !ok {
		t.Errorf("other opens away from its newest message: %s", why)
	}
}

// TestChatListHidesSystemSessions: the sessions the kernel keeps for itself (a plugin's
// memory, an OpenAI API conversation) are not in the chat list until "System" is ticked.
func TestChatListHidesSystemSessions(t *testing.T) {
	test.NewTempApp(t)
	_, c := uiKernel(t)
	ctx := context.Background()
	for _, s := range []client.Session{
		{ID: "trip", Title: "Trip"},
		{ID: "plugin.notes", Title: "Memory of plugin notes", Channel: "plugin:notes"},
		{ID: "apitest", Title: "OpenAI API: apitest", Channel: client.ChannelOpenAI},
	} {
		if _, err := c.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	vm := NewChatVM(c, ChatOptions{})
	u := chatTestView(t, vm)
	titles := func() []string {
		var out []string
		for _, s := range u.v.sessions {
			out = append(out, chatSessionTitle(s))
		}
		slices.Sort(out)
		return out
	}
	chatEqual(t, "listed", titles(), []string{"Main", "Trip"})
	test.Tap(u.v.showSystem)
	u.settle()
	chatEqual(t, "listed with System", titles(), []string{"Main", "Memory of plugin notes", "OpenAI API: apitest", "Trip"})
	test.Tap(u.v.showSystem)
	u.settle()
	chatEqual(t, "listed again without", titles(), []string{"Main", "Trip"})
}
