package gui

// ToggleQuick shows the quick-chat window, or hides it when it is on screen: what `hologram
// --quick-chat` and the global shortcut do. UI goroutine, after Show.
func (a *App) ToggleQuick() {
	a.mu.Lock()
	shown := a.quick != nil && !a.quickHidden
	if shown {
		a.quickHidden = true
	}
	a.mu.Unlock()
	if !shown {
		a.showQuick()
		return
	}
	a.quick.Hide()
	a.trace.emit("window", map[string]any{"window": "quick", "hidden": true})
}

// Raise shows and focuses the main window: what a second `hologram` does to the running one.
// UI goroutine, after Show.
func (a *App) Raise() {
	if a.main != nil {
		a.showMain()
	}
}
