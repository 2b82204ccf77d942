package gui

import (
	"context"
	"errors"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// tray is the system tray icon and its menu: Quick chat, Open HologramAgent, Screenshot (with
// Options.Screenshot), Pause/Resume and Quit. It exists only with a reachable D-Bus session bus (Options.Tray): Fyne's tray panics at
// Quit when it was set without one (toolchain-notes-gui §3).
type tray struct {
	a     *App
	desk  desktop.App
	menu  *fyne.Menu
	pause *fyne.MenuItem

	paused bool // what the Pause item says now (UI goroutine only)
}

// newTray sets the tray icon and menu, or returns nil (logging why, once) when there is no tray.
func newTray(a *App) *tray {
	if !a.o.Tray {
		a.log.Info("no D-Bus session bus: no tray icon, and closing the window quits")
		return nil
	}
	desk, ok := a.fa.(desktop.App)
	if !ok {
		a.log.Info("this driver has no system tray: no tray icon, and closing the window quits")
		return nil
	}
	t := &tray{a: a, desk: desk}
	desk.SetSystemTrayIcon(a.icon)
	t.build()
	return t
}

// build (re)creates the menu in the current language.
func (t *tray) build() {
	quick := fyne.NewMenuItem(T("Quick chat"), t.a.showQuick)
	open := fyne.NewMenuItem(T("Open HologramAgent"), t.a.showMain)
	items := []*fyne.MenuItem{quick, open}
	if t.a.o.Screenshot != nil {
		items = append(items, fyne.NewMenuItem(T("Screenshot"), t.screenshot))
	}
	t.pause = fyne.NewMenuItem(t.pauseLabel(), t.togglePause)
	quit := fyne.NewMenuItem(T("Quit"), t.a.quit)
	// Quit comes last and is marked, so Fyne adds no second one (it compares with its own
	// translation of "Quit" otherwise).
	quit.IsQuit = true
	items = append(items, fyne.NewMenuItemSeparator(), t.pause, fyne.NewMenuItemSeparator(), quit)
	t.menu = fyne.NewMenu("HologramAgent", items...)
	t.desk.SetSystemTrayMenu(t.menu)
}

func (t *tray) pauseLabel() string {
	if t.paused {
		return T("Resume")
	}
	return T("Pause")
}

// setPaused makes the Pause item follow the kernel's state (UI goroutine).
func (t *tray) setPaused(p bool) {
	if p == t.paused {
		return
	}
	t.paused = p
	t.pause.Label = t.pauseLabel()
	t.desk.SetSystemTrayMenu(t.menu)
}

// togglePause asks the kernel to pause or resume, then shows the state the kernel reports.
func (t *tray) togglePause() {
	want := !t.paused
	t.a.spawn(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := t.a.svc.SetPaused(ctx, want)
		if err == nil {
			if s, e := t.a.svc.Status(ctx); e == nil {
				want = s.Paused
			}
		}
		fyne.Do(func() {
			if err != nil {
				t.a.showError(Tf("Could not pause or resume the agent: %v", err))
				return
			}
			t.setPaused(want)
			t.a.trace.emit("paused", map[string]any{"paused": want})
		})
	})
}

// screenshotTimeout bounds a capture: the desktop may ask the user first.
const screenshotTimeout = 3 * time.Minute

// screenshot captures the screen and attaches it to the main chat's next message as a PNG
// (named by the time it was taken), then shows the main window on the chat. The kernel reads
// its text (OCR) when the message is sent and stores it as an image block with the message. A
// capture the user cancelled does nothing.
func (t *tray) screenshot() {
	t.a.spawn(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, screenshotTimeout)
		defer cancel()
		data, err := t.a.o.Screenshot(ctx)
		taken := time.Now()
		fyne.Do(func() {
			switch {
			case errors.Is(err, context.Canceled):
				t.a.trace.emit("screenshot", map[string]any{"cancelled": true})
				return
			case err != nil:
				t.a.showError(Tf("Could not take a screenshot: %v", err))
				return
			}
			name := "screenshot-" + taken.Format("20060102-150405") + ".png"
			if err := t.a.chat.AddAttachmentData(name, "image/png", data); err != nil {
				t.a.showError(err.Error())
				return
			}
			t.a.showMain()
			t.a.selectTab(tabChat)
			t.a.trace.emit("screenshot", map[string]any{"name": name, "bytes": len(data)})
		})
	})
}
