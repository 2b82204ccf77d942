package gui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// rawRefused is the error a turn gets from a provider that is not listening.
const rawRefused = `llm request (round 1) via default: provider default: Post "http://127.0.0.1:1/v1/chat/completions": dial tcp 127.0.0.1:1: connect: connection refused`

// TestChatErrorCard: a provider error is a card that says what happened and what to do, with
// the raw error folded under Details and a Retry that sends the question again; the question
// is not shown twice.
func TestChatErrorCard(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	var calls atomic.Int32
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		if calls.Add(1) == 1 {
			send(client.ChatEvent{Type: client.EventError, TurnID: turnID, Text: rawRefused})
			return
		}
		send(client.ChatEvent{Type: client.EventFinal, TurnID: turnID, Text: "Hi!"})
	}
	vm := NewChatVM(chatKernel(t, f, true), ChatOptions{})
	u := chatTestView(t, vm)
	chatSend(t, vm, "hello")
	u.settle()
	chatEqual(t, "messages", chatRoles(vm.Messages()), []string{"user: hello", "error: " + rawRefused})
	b := u.v.bubbles[1]
	if !b.errBox.Visible() || b.rich.Visible() {
		t.Fatalf("the error is not a card: card %v, raw text %v", b.errBox.Visible(), b.rich.Visible())
	}
	if b.errWhat.Text != "The model provider could not be reached." || !strings.Contains(b.errNext.Text, "base URL in Settings → Providers") {
		t.Errorf("card says %q / %q", b.errWhat.Text, b.errNext.Text)
	}
	if b.errDetail.Text != rawRefused || b.errDetails.Items[0].Open {
		t.Errorf("detail %q, open %v: want the raw error, folded", b.errDetail.Text, b.errDetails.Items[0].Open)
	}
	if !b.errRetry.Visible() {
		t.Fatal("no Retry button")
	}
	u.v.input.SetText("typing meanwhile")
	test.Tap(b.errRetry)
	u.settle()
	chatEqual(t, "messages after Retry", chatRoles(vm.Messages()), []string{"user: hello", "assistant: Hi!"})
	if got := u.v.bubbles[1].rich.String(); got != "Hi!" || u.v.bubbles[1].errBox.Visible() {
		t.Errorf("reply after Retry %q (card shown %v)", got, u.v.bubbles[1].errBox.Visible())
	}
	if vm.Draft() != "typing meanwhile" {
		t.Errorf("draft after Retry %q, want what was being typed", vm.Draft())
	}
	if err := vm.Retry(1); err != ErrChatNoRetry {
		t.Errorf("Retry of a reply = %v, want ErrChatNoRetry", err)
	}
}

func TestChatAdvice(t *testing.T) {
	tests := []struct {
		err  string
		sent bool
		want string
	}{
		{rawRefused, true, "The model provider could not be reached."},
		{"provider p: HTTP 401: invalid api key", true, "The model provider refused the API key."},
		{"provider p: HTTP 404: The model `gpt-9` does not exist", true, "The model provider does not know the model."},
		{"provider p: HTTP 429: rate limit reached", true, "The model provider is limiting requests."},
		{"provider p: HTTP 502: bad gateway", true, "The model provider had an error."},
		{"provider p: context deadline exceeded", true, "The model provider took too long to answer."},
		{"no provider configured: add one with `waiter provider add`", true, "No model provider is set up."},
		{"Not sent: dial unix /run/k.sock: connect: connection refused", false, "The message was not sent."},
		{"something else", true, "The reply failed."},
	}
	for _, tc := range tests {
		if what, todo := chatAdvice(tc.err, tc.sent); what != tc.want || todo == "" {
			t.Errorf("chatAdvice(%q) = %q, %q; want %q", tc.err, what, todo, tc.want)
		}
	}
}
