package gui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// The chat's input field (Enter sends, Shift+Enter breaks the line) and the repaint throttle.

// chatInput is the message entry: Enter sends, Shift+Enter inserts a new line.
type chatInput struct {
	widget.Entry
	shift  bool
	onSend func()
	// onPasteFiles receives the files a paste names (see clipboardFiles) instead of their text.
	onPasteFiles func(paths []string)
}

func newChatInput(onSend func()) *chatInput {
	e := &chatInput{onSend: onSend}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	e.SetMinRowsVisible(3)
	e.SetPlaceHolder(T("Message (Enter sends, Shift+Enter adds a line)"))
	return e
}

// KeyDown tracks Shift.
func (e *chatInput) KeyDown(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

// KeyUp tracks Shift.
func (e *chatInput) KeyUp(k *fyne.KeyEvent) {
	if k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

// TypedShortcut attaches pasted files (copied in a file manager) instead of pasting their
// names, and hands the window's Alt shortcuts (Alt+1 … Alt+5 switch tabs) to the window, which a
// focused entry would otherwise swallow.
func (e *chatInput) TypedShortcut(s fyne.Shortcut) {
	if p, ok := s.(*fyne.ShortcutPaste); ok && p.Clipboard != nil && e.onPasteFiles != nil {
		if files := clipboardFiles(p.Clipboard.Content()); len(files) > 0 {
			e.onPasteFiles(files)
			return
		}
	}
	if cs, ok := s.(*desktop.CustomShortcut); ok && cs.Modifier == fyne.KeyModifierAlt {
		if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil {
			if sc, ok := c.(fyne.Shortcutable); ok {
				sc.TypedShortcut(s)
				return
			}
		}
	}
	e.Entry.TypedShortcut(s)
}

// TypedKey sends on Enter; with Shift held the entry inserts a new line.
func (e *chatInput) TypedKey(k *fyne.KeyEvent) {
	if (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !e.shift && !e.Disabled() {
		if e.onSend != nil {
			e.onSend()
		}
		return
	}
	e.Entry.TypedKey(k)
}

// chatThrottle runs a render at most once an interval, deferring the ones in between to the
// end of the interval; a forced run happens at once. It is used on the UI goroutine.
type chatThrottle struct {
	interval time.Duration
	now      func() time.Time
	// after runs f once d has passed, off the UI goroutine, and returns a stop function.
	after func(d time.Duration, f func()) (stop func() bool)
	// do runs f on the UI goroutine (fyne.Do).
	do func(f func())

	last    time.Time
	pending func() bool // stops the deferred run; nil when none
	gen     int
}

// chatAfter is time.AfterFunc as chatThrottle.after.
func chatAfter(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

func (t *chatThrottle) run(force bool, fn func()) {
	now := t.now()
	if force || now.Sub(t.last) >= t.interval {
		if t.pending != nil {
			t.pending()
			t.pending = nil
		}
		t.gen++
		t.last = now
		fn()
		return
	}
	if t.pending != nil {
		return // the deferred run will render this too
	}
	t.gen++
	gen := t.gen
	t.pending = t.after(t.interval-now.Sub(t.last), func() {
		t.do(func() {
			if gen != t.gen {
				return // a forced run came first
			}
			t.pending = nil
			t.gen++
			t.last = t.now()
			fn()
		})
	})
}
