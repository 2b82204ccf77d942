package gui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// TestChatPages: a long chat opens with its newest page only, at its newest message; scrolling
// to the top reads the page before (a before= cursor) and keeps the shown messages in place;
// the oldest page ends the paging.
func TestChatPages(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	c := chatKernel(t, f, true)
	const turns = 80 // 160 stored messages: 3 pages of 60
	for i := range turns {
		if _, err := c.Chat(context.Background(), client.ChatRequest{Input: fmt.Sprintf("question %d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	vm := NewChatVM(c, ChatOptions{})
	u := chatTestView(t, vm)
	u.w.Resize(fyne.NewSize(700, 500))
	u.settle()
	msgs := vm.Messages()
	if len(msgs) != chatHistoryLimit || !vm.More() || msgs[len(msgs)-1].Text != "PONG: question 79" {
		t.Fatalf("opened with %d messages (more %v), last %q; want the newest page of %d", len(msgs), vm.More(), msgs[len(msgs)-1].Text, chatHistoryLimit)
	}
	if len(u.v.bubbles) != chatHistoryLimit {
		t.Errorf("%d bubbles rendered, want %d", len(u.v.bubbles), chatHistoryLimit)
	}
	if !u.v.follow {
		t.Error("the chat did not open at its newest message")
	}

	// To the top: the page before comes in front, the message that was first stays in view.
	u.v.scroll.ScrollToTop()
	u.v.scroll.OnScrolled(u.v.scroll.Offset)
	u.settle()
	msgs = vm.Messages()
	if len(msgs) != 2*chatHistoryLimit || msgs[0].Text != "question 20" {
		t.Fatalf("after the top: %d messages, first %q; want %d from question 20", len(msgs), msgs[0].Text, 2*chatHistoryLimit)
	}
	if y := u.v.bubbles[chatHistoryLimit].box.Position().Y; u.v.scroll.Offset.Y < y-1 || u.v.scroll.Offset.Y > y+1 {
		t.Errorf("scroll offset %v, want the formerly first message (now at %v) at the top", u.v.scroll.Offset.Y, y)
	}
	var befores []string
	for _, p := range chatRequests(f, "GET") {
		if strings.Contains(p, "before=") {
			befores = append(befores, p)
		}
	}
	if len(befores) != 1 {
		t.Errorf("page requests with a cursor: %q, want one", befores)
	}

	// The last page: More ends, a further scroll to the top asks nothing.
	u.v.scroll.ScrollToTop()
	u.v.scroll.OnScrolled(u.v.scroll.Offset)
	u.settle()
	if got := len(vm.Messages()); got != 2*turns || vm.More() {
		t.Fatalf("after the oldest page: %d messages, more %v; want all %d", got, vm.More(), 2*turns)
	}
	n := len(chatRequests(f, "GET"))
	u.v.scroll.ScrollToTop()
	u.v.scroll.OnScrolled(u.v.scroll.Offset)
	u.settle()
	if got := len(chatRequests(f, "GET")); got != n {
		t.Errorf("a scroll to the top of the whole chat made %d requests", got-n)
	}
}
