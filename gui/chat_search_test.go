package gui

import (
	"context"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// TestChatSearch: the sessions pane's search finds a message in another chat through the
// kernel's memory search; picking it opens that chat; clearing the field shows the sessions.
func TestChatSearch(t *testing.T) {
	test.NewTempApp(t)
	f := clienttest.New()
	c := chatKernel(t, f, true)
	ctx := context.Background()
	if _, err := c.CreateSession(ctx, client.Session{ID: "trip", Title: "Trip planning"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []client.ChatRequest{{Session: "trip", Input: "book the train to Porto"}, {Input: "hello there"}} {
		if _, err := c.Chat(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	vm := NewChatVM(c, ChatOptions{})
	u := chatTestView(t, vm)
	s := u.v.search
	test.Type(s.entry, "porto")
	s.entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	u.settle()
	if len(s.hits) == 0 || !s.results.Visible() || u.v.sessionList.Visible() {
		t.Fatalf("hits %+v, results shown %v, sessions shown %v", s.hits, s.results.Visible(), u.v.sessionList.Visible())
	}
	for _, h := range s.hits {
		if h.Session != "trip" || h.Title != "Trip planning" {
			t.Errorf("hit %+v: want only the trip chat's messages", h)
		}
	}
	s.results.Select(0)
	u.settle()
	if vm.Current() != "trip" || len(vm.Messages()) != 2 || vm.Messages()[0].Text != "book the train to Porto" {
		t.Errorf("after picking: session %s, messages %+v", vm.Current(), chatRoles(vm.Messages()))
	}
	s.entry.SetText("")
	u.settle()
	if s.results.Visible() || !u.v.sessionList.Visible() {
		t.Error("clearing the search does not bring the sessions back")
	}
}
