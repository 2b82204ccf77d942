package gui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
)

// Window sizes.
var (
	mainWindowSize  = fyne.NewSize(1000, 680)
	quickWindowSize = fyne.NewSize(420, 520)
)

// The main window's tabs, in order (Alt+1 … Alt+5 select them).
const (
	tabChat = iota
	tabStarMap
	tabMemory
	tabPlugins
	tabSettings
)

var tabScreens = [...]string{"chat", "starmap", "memory", "plugins", "settings"}

// App is the desktop app: the main window (the welcome screen on first run, then the tabs Chat,
// Plugins and Settings) with the connection and insecure-transport banners, the tray with its
// quick-chat window, and notifications while the window is hidden. Create it with NewApp, then
// call Run (or Show, and Close when done) on the UI goroutine.
type App struct {
	noHostOnce sync.Once // logs the missing tray host once

	fa    fyne.App
	o     Options
	svc   client.Service // reports failed calls to conn
	conn  *Conn
	trace *tracer
	log   *slog.Logger
	icon  fyne.Resource
	notes *notifier
	tray  *tray

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// UI goroutine only.
	main      fyne.Window
	quick     fyne.Window
	chat      *ChatVM
	quickVM   *ChatVM
	plugins   *PluginsVM
	starmap   *StarMapVM
	inspector *InspectorVM
	approvals *ApprovalsVM // nil when the kernel cannot be asked for approvals
	settings  *SettingsVM
	welcomeVM *WelcomeVM
	tabs      *container.AppTabs
	welcome   bool // the welcome screen is up
	decided   bool // providers were listed once: welcome or tabs
	shown     bool

	mu          sync.Mutex
	mainHidden  bool
	quickHidden bool
	restartArgs []string
	lastState   ConnState
	closed      bool
	onPlugins   bool // the Plugins tab is the one selected
}

// NewApp returns the app over o.Service. It builds no window yet.
func NewApp(fa fyne.App, o Options) *App {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	a := &App{fa: fa, o: o, trace: &tracer{w: o.Trace}, log: slog.Default(), icon: o.Icon}
	if a.icon == nil {
		a.icon = Icon()
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.conn = NewConn(o.Service, ConnOptions{
		Target:   o.Remote,
		OnChange: a.connChanged,
		OnStatus: a.statusSeen,
	})
	if o.Errors != nil {
		o.Errors.attach(a.conn)
	}
	a.svc = o.Service
	a.notes = newNotifier(fa, a.svc)
	return a
}

// Run shows the app and runs Fyne's event loop until the user quits, then stops the app's
// watchers. It must be called on the main goroutine.
func (a *App) Run() {
	a.Show()
	a.fa.Run()
	a.Close()
}

// Show picks the language, builds the windows and the tray, shows the main window and starts
// watching the connection. UI goroutine; once.
func (a *App) Show() {
	if a.shown {
		return
	}
	a.shown = true
	tag := a.fa.Preferences().String(prefLanguage)
	if tag == "" {
		tag = LanguageFromLocale(a.o.Getenv)
	}
	if err := SetLanguage(tag); err != nil {
		a.log.Warn("loading translations", "language", tag, "err", err)
	}
	a.fa.SetIcon(a.icon)
	a.main = a.fa.NewWindow("HologramAgent")
	a.main.SetIcon(a.icon)
	a.main.Resize(mainWindowSize)
	a.main.SetCloseIntercept(a.closeMain)
	a.chat = NewChatVM(a.svc, ChatOptions{Trace: a.chatTrace(false), Screenshot: a.o.Screenshot})
	a.plugins = NewPluginsVM(a.svc)
	a.plugins.Local = a.o.Remote == ""
	a.starmap = NewStarMapVM(a.svc, a.trace.emit)
	a.inspector = NewInspectorVM(a.svc)
	a.settings = NewSettingsVM(a.svc, a.settingsEnv())
	for i := range tabScreens {
		a.main.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyName(fmt.Sprint(i + 1)), Modifier: fyne.KeyModifierAlt},
			func(fyne.Shortcut) { a.selectTab(i) })
	}
	a.buildMain()
	a.tray = newTray(a)
	a.main.Show()

	a.spawn(a.decide)
	a.spawn(a.conn.Run)
	a.spawn(func(ctx context.Context) { a.notes.watchPlugins(ctx, a.isMainHidden, time.After) })
	a.spawn(func(ctx context.Context) { a.plugins.Watch(ctx, a.pluginsShown, time.After) })
	a.approvals = NewApprovalsVM(a.o.Service)
	a.spawn(func(ctx context.Context) { a.watchApprovals(ctx, time.After) })
}

// closeGrace bounds how long Close waits for the view-models' calls: a turn still streaming
// goes on in the kernel (and in-process, the kernel's own stop drains it).
const closeGrace = 5 * time.Second

// Close stops the watchers and waits for them, and (up to closeGrace) for the view-models'
// calls. Call it on the UI goroutine, after the event loop.
func (a *App) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	// The app's own goroutines end with a.ctx, but one may be waiting on the UI loop that
	// has just stopped: like the view models' calls, they are waited for at most closeGrace.
	waits := []func(){a.wg.Wait}
	for _, vm := range []*ChatVM{a.chat, a.quickVM} {
		if vm != nil {
			waits = append(waits, vm.Wait)
		}
	}
	if a.welcomeVM != nil {
		waits = append(waits, a.welcomeVM.Wait)
	}
	if a.plugins != nil {
		waits = append(waits, a.plugins.Wait)
	}
	if a.starmap != nil {
		waits = append(waits, a.starmap.Wait, a.inspector.Wait)
	}
	if a.approvals != nil {
		waits = append(waits, a.approvals.Wait)
	}
	if a.settings != nil {
		waits = append(waits, a.settings.Wait)
	}
	done := make(chan struct{})
	go func() {
		for _, w := range waits {
			w()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeGrace):
		a.log.Warn("closing while kernel calls still run (a reply may still be streaming)")
	}
}

// Conn is the connection watcher (its Banner is shown above the main window's content).
func (a *App) Conn() *Conn { return a.conn }

// MainWindow is the main window (nil before Show).
func (a *App) MainWindow() fyne.Window { return a.main }

// RestartArgs returns the command-line arguments the app should be started again with (after
// Settings connected it to a remote kernel), or nil to simply exit.
func (a *App) RestartArgs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.restartArgs...)
}

// spawn runs fn in a goroutine the app waits for in Close; after Close it does nothing.
func (a *App) spawn(fn func(ctx context.Context)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		fn(a.ctx)
	}()
}

// decide lists the providers once: none shows the welcome screen, some (or an error: the
// banner explains it and Settings can fix the connection) the tabs.
func (a *App) decide(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ps, err := a.svc.Providers(ctx)
	if errors.Is(err, context.Canceled) && a.ctx.Err() != nil {
		return
	}
	if err != nil {
		a.log.Warn("listing providers", "err", err)
	}
	fyne.Do(func() {
		a.decided = true
		a.welcome = err == nil && len(ps) == 0
		a.buildMain()
	})
}

// buildMain (re)builds the main window's content in the current language. UI goroutine.
func (a *App) buildMain() {
	var body fyne.CanvasObject
	screen := ""
	switch {
	case !a.decided:
		body = container.NewCenter(widget.NewLabel(T("Connecting to the kernel…")))
	case a.welcome:
		a.welcomeVM = NewWelcomeVM(a.svc)
		body = NewWelcomeView(a.welcomeVM, a.welcomeDone)
		a.tabs, screen = nil, "welcome"
	default:
		sel := 0
		if a.tabs != nil {
			sel = a.tabs.SelectedIndex()
		}
		tabs := container.NewAppTabs(
			container.NewTabItemWithIcon(T("Chat"), theme.MailComposeIcon(), NewChatView(a.chat, a.main)),
			container.NewTabItemWithIcon(T("Star map"), theme.RadioButtonCheckedIcon(), NewStarMapView(a.starmap, a.main)),
			container.NewTabItemWithIcon(T("Memory"), theme.StorageIcon(), NewInspectorView(a.inspector, a.main)),
			container.NewTabItemWithIcon(T("Plugins"), theme.GridIcon(), NewPluginsView(a.plugins, a.main)),
			container.NewTabItemWithIcon(T("Settings"), theme.SettingsIcon(), NewSettingsView(a.settings, a.main)),
		)
		tabs.SelectIndex(sel)
		tabs.OnSelected = func(*container.TabItem) {
			i := tabs.SelectedIndex()
			a.setOnPlugins(i == tabPlugins)
			switch i { // memory and plugins change behind the views' backs: show them fresh
			case tabStarMap:
				vm := a.starmap
				vm.spawn(func(ctx context.Context) { _ = vm.Load(ctx) })
			case tabMemory:
				vm := a.inspector
				vm.spawn(func(ctx context.Context) { _ = vm.Refresh(ctx) })
			case tabPlugins:
				vm := a.plugins
				vm.spawn(func(ctx context.Context) { _ = vm.Refresh(ctx) })
			}
			a.screen(tabScreens[i])
		}
		a.tabs, body, screen = tabs, tabs, tabScreens[sel]
	}
	a.setOnPlugins(!a.welcome && a.tabs != nil && a.tabs.SelectedIndex() == tabPlugins)
	a.main.SetContent(container.NewBorder(a.banners(), nil, nil, nil, body))
	if screen != "" {
		a.screen(screen)
	}
}

// welcomeDone leaves the welcome screen for the chat once a provider is saved.
func (a *App) welcomeDone() {
	a.welcome = false
	a.buildMain()
}

// selectTab switches the main window to tab i (Alt+1 … Alt+5).
func (a *App) selectTab(i int) {
	if a.tabs != nil && i >= 0 && i < len(a.tabs.Items) {
		a.tabs.SelectIndex(i)
	}
}

// screen records the screen entered.
func (a *App) screen(name string) {
	a.trace.emit("screen", map[string]any{"screen": name})
}

// banners are the strips above the content: the connection banner (while something is
// wrong), the remote kernel's address, and the insecure-transport warning.
func (a *App) banners() fyne.CanvasObject {
	box := container.NewVBox()
	if a.o.Insecure {
		box.Add(banner(theme.ColorNameError, theme.WarningIcon(),
			widget.NewLabel(Tf("Insecure connection: plain HTTP to %s. The token and your messages cross the network unencrypted.", a.o.Remote)), nil))
	}
	connLabel := widget.NewLabelWithData(a.conn.Banner)
	connLabel.Wrapping = fyne.TextWrapWord
	retry := widget.NewButtonWithIcon(T("Retry now"), theme.ViewRefreshIcon(), a.conn.RetryNow)
	connBox := banner(theme.ColorNameWarning, theme.InfoIcon(), connLabel, retry)
	show := func() {
		text, _ := a.conn.Banner.Get()
		state, _ := a.conn.State()
		if text == "" {
			connBox.Hide()
			return
		}
		if state.Failed() {
			retry.Show()
		} else {
			retry.Hide()
		}
		connBox.Show()
	}
	show()
	a.conn.Banner.AddListener(binding.NewDataListener(show))
	box.Add(connBox)
	if a.o.Remote != "" && !a.o.Insecure {
		l := widget.NewLabel(Tf("Remote kernel: %s", a.o.Remote))
		l.Importance = widget.LowImportance
		box.Add(l)
	}
	return box
}

// banner is a coloured strip with an icon, a text and an optional button.
func banner(color fyne.ThemeColorName, icon fyne.Resource, text fyne.CanvasObject, button fyne.CanvasObject) *fyne.Container {
	bg := canvas.NewRectangle(theme.Color(color))
	bg.FillColor = withAlpha(theme.Color(color), 0x40)
	bg.CornerRadius = theme.Padding()
	var right fyne.CanvasObject
	if button != nil {
		right = container.NewCenter(button)
	}
	row := container.NewBorder(nil, nil, container.NewCenter(widget.NewIcon(icon)), right, text)
	return container.NewStack(bg, container.NewPadded(row))
}

// closeMain hides the main window to the tray when close-to-tray is on, else quits.
func (a *App) closeMain() {
	if a.closeToTray() {
		a.main.Hide()
		a.setMainHidden(true)
		return
	}
	a.quit()
}

// closeToTray: only with a tray that something shows, and as the owner chose (default on).
func (a *App) closeToTray() bool {
	if a.tray == nil || !a.fa.Preferences().BoolWithFallback(prefCloseToTray, closeToTrayDefault) {
		return false
	}
	if a.o.TrayHost != nil && !a.o.TrayHost() {
		a.noHostOnce.Do(func() {
			slog.Info("no tray host (no StatusNotifierWatcher on the session bus): closing the window quits")
		})
		return false
	}
	return true
}

func (a *App) setMainHidden(h bool) {
	a.mu.Lock()
	a.mainHidden = h
	a.mu.Unlock()
	if h {
		// A fresh baseline now, so a plugin failing in the next seconds is news.
		a.notes.hidden()
		a.spawn(func(ctx context.Context) { _ = a.notes.pollPlugins(ctx) })
	}
	a.trace.emit("window", map[string]any{"window": "main", "hidden": h})
}

func (a *App) setOnPlugins(on bool) {
	a.mu.Lock()
	a.onPlugins = on
	a.mu.Unlock()
}

// pluginsShown reports whether the Plugins view is on screen (its tab selected, the main
// window not hidden in the tray): then it follows the kernel's changes.
func (a *App) pluginsShown() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.onPlugins && !a.mainHidden
}

func (a *App) isMainHidden() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mainHidden
}

// showMain shows and raises the main window (tray "Open HologramAgent").
func (a *App) showMain() {
	a.main.Show()
	a.main.RequestFocus()
	a.setMainHidden(false)
}

// showQuick opens the quick-chat window (tray "Quick chat"), bound to the "quick" session.
func (a *App) showQuick() {
	if a.quick == nil {
		a.quick = a.fa.NewWindow(T("Quick chat") + " · HologramAgent")
		a.quick.SetIcon(a.icon)
		a.quick.Resize(quickWindowSize)
		a.quickVM = NewChatVM(a.svc, ChatOptions{Quick: true, Session: "quick", Trace: a.chatTrace(true), Screenshot: a.o.Screenshot})
		a.quick.SetContent(NewChatView(a.quickVM, a.quick))
		a.quick.SetCloseIntercept(func() {
			a.quick.Hide()
			a.mu.Lock()
			a.quickHidden = true
			a.mu.Unlock()
			a.trace.emit("window", map[string]any{"window": "quick", "hidden": true})
		})
	}
	a.mu.Lock()
	a.quickHidden = false
	a.mu.Unlock()
	a.quick.Show()
	a.quick.RequestFocus()
	a.trace.emit("window", map[string]any{"window": "quick", "hidden": false})
}

// quit ends the app (tray Quit, or closing the window without close-to-tray).
func (a *App) quit() {
	a.trace.emit("quit", map[string]any{})
	if a.o.OnQuit != nil {
		a.o.OnQuit()
	}
	a.fa.Quit()
}

// showError shows an error the user caused from the tray: a notification while the window is
// hidden, a dialog otherwise.
func (a *App) showError(msg string) {
	a.trace.emit("error", map[string]any{"text": msg})
	if a.isMainHidden() || a.main == nil {
		a.notes.send(fyne.NewNotification("HologramAgent", msg))
		return
	}
	dialog.ShowError(errors.New(msg), a.main)
}

// chatTrace is a ChatVM's trace callback: it writes the trace and notifies a reply that
// finished while its window was hidden.
func (a *App) chatTrace(quick bool) func(kind string, v any) {
	window := "main"
	if quick {
		window = "quick"
	}
	return func(kind string, v any) {
		fields := map[string]any{"window": window}
		switch x := v.(type) {
		case TraceMessage:
			fields["role"], fields["text"] = x.Role, x.Text
			if x.Role == ChatRoleAssistant && a.windowHidden(quick) {
				a.notes.reply(quick, x.Text)
			}
		case TraceHistory:
			fields["session"], fields["messages"] = x.Session, x.Messages
		case TraceRendered:
			fields["session"], fields["messages"], fields["ms"] = x.Session, x.Messages, x.Millis
		case string:
			fields["text"] = x
		default:
			fields["value"] = v
		}
		a.trace.emit(kind, fields)
	}
}

func (a *App) windowHidden(quick bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if quick {
		return a.quickHidden
	}
	return a.mainHidden
}

// connChanged follows the connection: the trace records each banner, and coming back (from a
// failure, or to a restarted kernel) reloads the chats, whose running turns may be gone.
func (a *App) connChanged(state ConnState, text string) {
	a.trace.emit("banner", map[string]any{"state": state.String(), "text": text})
	a.mu.Lock()
	prev := a.lastState
	a.lastState = state
	a.mu.Unlock()
	if state == ConnRestarted || (state == ConnConnected && prev.Failed()) {
		fyne.Do(func() {
			if !a.decided {
				a.spawn(a.decide)
				return
			}
			for _, vm := range []*ChatVM{a.chat, a.quickVM} {
				if vm != nil {
					vm.Go(func() { _ = vm.Reload(a.ctx) })
				}
			}
		})
	}
}

// statusSeen makes the tray's Pause item follow the kernel.
func (a *App) statusSeen(s client.Status) {
	if a.tray == nil {
		return
	}
	fyne.Do(func() { a.tray.setPaused(s.Paused) })
}

// tracer writes one JSON object per line: {"kind": …, fields…}. A nil writer writes nothing.
type tracer struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *tracer) emit(kind string, fields map[string]any) {
	if t == nil || t.w == nil {
		return
	}
	m := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		m[k] = v
	}
	m["kind"] = kind
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"kind": kind, "error": err.Error()})
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.w.Write(append(b, '\n'))
}

// withAlpha returns c with alpha a (for banner backgrounds that work in light and dark themes).
func withAlpha(c color.Color, a uint8) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}
