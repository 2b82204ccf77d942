package gui

import (
	"context"
	"fmt"
	"time"

	"fyne.io/fyne/v2"

	"github.com/hologramagent/hologram/kernel/client"
)

// Long chats page: a session opens with its newest [chatHistoryLimit] stored messages and the
// view asks for the page before when the owner scrolls to the top (LoadOlder), so opening or
// scrolling a chat of thousands of messages never reads or renders all of them.

// More reports whether the current session has older messages than those shown.
func (vm *ChatVM) More() bool {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.sess(vm.current).more
}

// LoadOlder reads the page before the oldest shown message of the current session and puts it
// first; the view keeps what was on screen in place (ChatOlderLoaded with Index the number of
// messages added in front). Without older messages, or while a turn runs, it does nothing.
func (vm *ChatVM) LoadOlder(ctx context.Context) error {
	vm.mu.Lock()
	id := vm.current
	s := vm.sess(id)
	if !s.more || s.turn != nil || len(s.hist) == 0 {
		vm.mu.Unlock()
		return nil
	}
	before := s.hist[0].ID
	vm.mu.Unlock()
	page, err := vm.svc.HistoryPage(ctx, client.HistoryQuery{Session: id, Before: before, Limit: chatHistoryLimit})
	if err != nil {
		err = fmt.Errorf("%s: %w", Tf("Could not load the history of %s", id), err)
		vm.setErr(err)
		return err
	}
	vm.mu.Lock()
	s = vm.sess(id)
	if s.turn != nil || len(s.hist) == 0 || s.hist[0].ID != before { // changed meanwhile
		vm.mu.Unlock()
		return nil
	}
	// The messages are rebuilt from the whole stored history so a turn cut by the page
	// boundary joins again; what follows the stored ones (an error card) stays.
	old := chatFromHistory(s.hist)
	extra := s.msgs[min(len(old), len(s.msgs)):]
	s.hist = append(append([]client.Message(nil), page.Messages...), s.hist...)
	msgs := chatFromHistory(s.hist)
	added := len(msgs) - len(old)
	s.msgs = append(msgs, extra...)
	s.more = page.More
	vm.mu.Unlock()
	vm.notify(ChatChange{Kind: ChatOlderLoaded, Session: id, Index: added})
	return nil
}

// TraceRendered is what [ChatOptions].Trace receives ("chat_rendered") when a session picked
// in the list has its messages rendered, with the milliseconds from the pick.
type TraceRendered struct {
	Session  string  `json:"session"`
	Messages int     `json:"messages"`
	Millis   float64 `json:"ms"`
}

// rendered traces the render of a session picked in the list (its newest message laid out and
// scrolled to).
func (v *chatView) rendered(n int) {
	if v.selected == "" || v.selected != v.vm.Current() || !v.vm.loadedNow() {
		return
	}
	ms := float64(time.Since(v.selectedAt).Microseconds()) / 1000
	v.vm.trace("chat_rendered", TraceRendered{Session: v.selected, Messages: n, Millis: ms})
	v.selected = ""
}

// loadedNow reports whether the current session's history is in the view-model.
func (vm *ChatVM) loadedNow() bool {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return vm.sess(vm.current).loaded
}

// scrolled loads the page before when the owner reaches the top of a chat that has one.
func (v *chatView) scrolled(p fyne.Position) {
	if p.Y > 0 || v.loadingOlder || !v.vm.More() {
		return
	}
	v.loadingOlder = true
	v.vm.Go(func() {
		_ = v.vm.LoadOlder(context.Background()) // errors: the banner
		v.vm.do(func() { v.loadingOlder = false })
	})
}

// olderLoaded renders the messages after older ones were put in front and keeps the ones that
// were on screen where they were.
func (v *chatView) olderLoaded() {
	before := v.msgBox.MinSize().Height
	offset := v.scroll.Offset
	msgs := v.vm.Messages()
	for len(v.bubbles) < len(msgs) {
		b := newChatBubble(v, len(v.bubbles))
		v.bubbles = append(v.bubbles, b)
		v.msgBox.Add(b.box)
	}
	for i, m := range msgs {
		v.bubbles[i].render(m)
	}
	clear(v.dirty)
	v.follow = false
	offset.Y += v.msgBox.MinSize().Height - before
	v.scroll.Offset = offset
	v.scroll.Refresh()
}
