package gui

import "testing"

// TestAppToggleQuick: ToggleQuick (hologram --quick-chat, the global shortcut) shows the quick
// chat, hides it, shows it again; Raise shows a main window hidden in the tray. (Fyne's
// test driver runs no close intercept: the quick window closed by the user is not covered here.)
func TestAppToggleQuick(t *testing.T) {
	_, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc, Tray: true}, true, "chat", nil)
	a := h.a
	for i, want := range []bool{false, true, false} { // hidden?
		a.ToggleQuick()
		h.settle()
		if a.windowHidden(true) != want || a.quick == nil {
			t.Fatalf("toggle %d: hidden %v, want %v", i+1, a.windowHidden(true), want)
		}
	}
	shows := 0
	for _, m := range h.tb.lines(t) {
		if m["kind"] == "window" && m["window"] == "quick" && m["hidden"] == false {
			shows++
		}
	}
	if n := shows; n != 2 {
		t.Errorf("%d quick-chat shows traced, want 2", n)
	}
	a.closeMain() // to the tray
	h.wait(map[string]any{"kind": "window", "window": "main", "hidden": true})
	a.Raise()
	h.settle()
	if a.isMainHidden() {
		t.Error("Raise did not show the main window")
	}
}
