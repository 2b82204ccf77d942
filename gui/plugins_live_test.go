package gui

import (
	"context"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// uiCard returns the visible card titled title in w, or nil.
func uiCard(w fyne.Window, title string) *widget.Card {
	var found *widget.Card
	uiWalk(w.Content(), func(o fyne.CanvasObject) {
		if c, ok := o.(*widget.Card); ok && c.Title == title {
			found = c
		}
	})
	return found
}

// TestPluginsViewAddLaysOutBelow: the first plugin added through the form gets its card
// above the "Add a plugin" card, not drawn over it (it was, until a tab switch laid the view
// out again); so does every later one.
func TestPluginsViewAddLaysOutBelow(t *testing.T) {
	_, c := uiKernel(t)
	vm, w := pluginsWindow(t, c)
	d := fyne.CurrentApp().Driver()
	for _, name := range []string{"first", "second"} {
		test.Type(uiEntry(t, w, "everything"), name)
		test.Type(uiEntry(t, w, "npx -y @modelcontextprotocol/server-everything"), "node server-"+name+".js")
		test.Tap(uiButton(t, w, "Add plugin"))
		vm.Wait()
		card, form := uiCard(w, name), uiCard(w, "Add a plugin")
		if card == nil || form == nil {
			t.Fatalf("after adding %s: cards %v and %v; labels %q", name, card, form, uiTexts(w))
		}
		cardBottom := d.AbsolutePositionForObject(card).Y + card.Size().Height
		formTop := d.AbsolutePositionForObject(form).Y
		if cardBottom > formTop {
			t.Errorf("after adding %s its card ends at y=%.0f, below the top of the add form at y=%.0f: drawn over it", name, cardBottom, formTop)
		}
	}
}

// TestPluginsViewFollowsChangesElsewhere: while the view is shown it follows the kernel's
// plugins, changed by another client (`waiter plugin remove`, here the HTTP client of the same
// kernel); hidden, it asks nothing.
func TestPluginsViewFollowsChangesElsewhere(t *testing.T) {
	f, c := uiKernel(t)
	ctx := context.Background()
	if _, err := c.AddPlugin(ctx, client.PluginConfig{Name: "gone", Command: []string{"node", "gone.js"}}); err != nil {
		t.Fatal(err)
	}
	vm, w := pluginsWindow(t, c)
	if uiCard(w, "gone") == nil {
		t.Fatalf("no card for gone: %q", uiTexts(w))
	}
	ticks := make(chan time.Time)
	shown := true
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	isShown := func() bool { <-mu; defer func() { mu <- struct{}{} }(); return shown }
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { vm.Watch(wctx, isShown, func(time.Duration) <-chan time.Time { return ticks }); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	// Elsewhere: removed by another client.
	if _, err := c.PluginAction(ctx, "gone", client.PluginRemove); err != nil {
		t.Fatal(err)
	}
	ticks <- time.Now()
	ticks <- time.Now() // the first tick's refresh is done once the second is taken
	vm.Wait()
	if uiCard(w, "gone") != nil {
		t.Errorf("the removed plugin is still shown: %q", uiTexts(w))
	}
	if !uiHasText(w, "No plugins yet.") {
		t.Errorf("the view does not say it is empty: %q", uiTexts(w))
	}

	// Hidden: no request.
	<-mu
	shown = false
	mu <- struct{}{}
	ticks <- time.Now() // taken once the second tick's refresh is done
	before := len(chatRequests(f, "GET"))
	ticks <- time.Now()
	ticks <- time.Now()
	if n := len(chatRequests(f, "GET")); n != before {
		t.Errorf("%d requests while the view is hidden", n-before)
	}
}
