package gui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// traceBuf collects the app's trace and wakes waiters on every line.
type traceBuf struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newTraceBuf() *traceBuf { return &traceBuf{changed: make(chan struct{})} }

func (tb *traceBuf) Write(p []byte) (int, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	n, err := tb.b.Write(p)
	close(tb.changed)
	tb.changed = make(chan struct{})
	return n, err
}

func (tb *traceBuf) lines(t *testing.T) []map[string]any {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(tb.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func (tb *traceBuf) find(t *testing.T, want map[string]any) map[string]any {
	t.Helper()
	for _, m := range tb.lines(t) {
		ok := true
		for k, v := range want {
			ok = ok && reflect.DeepEqual(m[k], v)
		}
		if ok {
			return m
		}
	}
	return nil
}

func (tb *traceBuf) String() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.b.String()
}

// trayApp is a test app with a system tray (Fyne's test app has none): it records the menu.
type trayApp struct {
	fyne.App
	mu    sync.Mutex
	menu  *fyne.Menu
	icon  fyne.Resource
	menus int
}

func (ta *trayApp) SetSystemTrayMenu(m *fyne.Menu) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	ta.menu = m
	ta.menus++
}
func (ta *trayApp) SetSystemTrayIcon(r fyne.Resource) { ta.icon = r }
func (ta *trayApp) SetSystemTrayWindow(fyne.Window)   {}

var _ desktop.App = (*trayApp)(nil)

func (ta *trayApp) labels() []string {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	var out []string
	for _, it := range ta.menu.Items {
		out = append(out, it.Label)
	}
	return out
}

func (ta *trayApp) item(t *testing.T, label string) *fyne.MenuItem {
	t.Helper()
	ta.mu.Lock()
	defer ta.mu.Unlock()
	for _, it := range ta.menu.Items {
		if it.Label == label {
			return it
		}
	}
	t.Fatalf("no tray item %q", label)
	return nil
}

func english(k string) string {
	if k == "LANG" {
		return "en_US.UTF-8"
	}
	return ""
}

// kernel is the fake kernel on a unix socket and an HTTP client of it.
func kernel(t *testing.T, providers bool) (*clienttest.Fake, *client.HTTP) {
	t.Helper()
	fake := clienttest.New()
	svc, err := client.Dial(client.Options{Socket: clienttest.ServeUnix(t, fake)})
	if err != nil {
		t.Fatal(err)
	}
	if providers {
		if _, err := svc.AddProvider(context.Background(), client.ProviderConfig{Name: "fake", BaseURL: "http://127.0.0.1:9/v1", Model: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	return fake, svc
}

// uiQueue stands in for the driver's UI goroutine: Fyne's test driver runs fyne.Do at once on
// the calling goroutine, so view-models' callbacks would touch widgets from many goroutines.
// Here fyne.Do queues, and the test's goroutine runs the queue (drain), as the real driver runs
// it on its main goroutine.
type uiQueue struct {
	mu    sync.Mutex
	q     []func()
	ready chan struct{}
}

func (u *uiQueue) do(fn func()) {
	u.mu.Lock()
	u.q = append(u.q, fn)
	u.mu.Unlock()
	select {
	case u.ready <- struct{}{}:
	default:
	}
}

// drain runs what is queued (and what that queues) and returns how much it ran.
func (u *uiQueue) drain() int {
	n := 0
	for {
		u.mu.Lock()
		q := u.q
		u.q = nil
		u.mu.Unlock()
		if len(q) == 0 {
			return n
		}
		for _, fn := range q {
			fn()
		}
		n += len(q)
	}
}

// queuedApp is the test app with a driver whose DoFromGoroutine queues on a uiQueue.
type queuedApp struct {
	fyne.App
	u *uiQueue
}

type queuedDriver struct {
	fyne.Driver
	u *uiQueue
}

func (d queuedDriver) DoFromGoroutine(fn func(), wait bool) {
	if !wait {
		d.u.do(fn)
		return
	}
	done := make(chan struct{})
	d.u.do(func() { fn(); close(done) })
	<-done
}

func (qa *queuedApp) Driver() fyne.Driver { return queuedDriver{Driver: qa.App.Driver(), u: qa.u} }

// newQueuedApp is a fresh test app, current for fyne.Do, until the test ends.
func newQueuedApp(t *testing.T) *queuedApp {
	qa := &queuedApp{App: test.NewTempApp(t), u: &uiQueue{ready: make(chan struct{}, 1)}}
	fyne.SetCurrentApp(qa)
	return qa
}

// harness is an App under test with its trace and UI queue.
type harness struct {
	t  *testing.T
	a  *App
	tb *traceBuf
	u  *uiQueue
	ta *trayApp // the app as NewApp got it when tray was asked for
}

// startApp shows an app over o.Service (through a trayApp when tray is set; prep may set
// preferences first) and waits for its first screen; the app is closed when the test ends.
func startApp(t *testing.T, o Options, tray bool, screen string, prep func(fyne.App)) *harness {
	t.Helper()
	qa := newQueuedApp(t)
	h := &harness{t: t, tb: newTraceBuf(), u: qa.u}
	var fa fyne.App = qa
	if tray {
		h.ta = &trayApp{App: qa}
		fa = h.ta
	}
	if prep != nil {
		prep(fa)
	}
	o.Trace = h.tb
	if o.Getenv == nil {
		o.Getenv = english
	}
	h.a = NewApp(fa, o)
	h.a.Show()
	t.Cleanup(func() {
		h.a.cancel()
		h.settle()
		h.a.Close()
	})
	h.wait(map[string]any{"kind": "screen", "screen": screen})
	h.settle()
	return h
}

// wait runs the UI queue until a trace line has every field of want (no sleeping: it wakes on
// trace writes and on queued UI work).
func (h *harness) wait(want map[string]any) map[string]any {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		h.u.drain()
		h.tb.mu.Lock()
		ch := h.tb.changed
		h.tb.mu.Unlock()
		if m := h.tb.find(h.t, want); m != nil {
			return m
		}
		select {
		case <-ch:
		case <-h.u.ready:
		case <-deadline:
			h.t.Fatalf("no trace line with %v in:\n%s", want, h.tb.String())
		}
	}
}

// settle waits for the view-models' background calls and runs the UI work they queued, until
// all is quiet.
func (h *harness) settle() {
	a := h.a
	for {
		a.chat.Wait()
		a.plugins.Wait()
		a.settings.Wait()
		if a.welcomeVM != nil {
			a.welcomeVM.Wait()
		}
		if a.quickVM != nil {
			a.quickVM.Wait()
		}
		if h.u.drain() == 0 {
			return
		}
	}
}

// send sends a message from a chat view-model and waits for its turn.
func (h *harness) send(vm *ChatVM, text string) {
	h.t.Helper()
	vm.SetDraft(text)
	if err := vm.Send(); err != nil {
		h.t.Fatal(err)
	}
	h.settle()
}

// visibleTexts lists the texts of the visible labels under o.
func visibleTexts(o fyne.CanvasObject) []string {
	var out []string
	var walk func(o fyne.CanvasObject, visible bool)
	walk = func(o fyne.CanvasObject, visible bool) {
		visible = visible && o.Visible()
		if l, ok := o.(*widget.Label); ok && visible {
			out = append(out, l.Text)
		}
		if c, ok := o.(*fyne.Container); ok {
			for _, ch := range c.Objects {
				walk(ch, visible)
			}
		}
		if w, ok := o.(fyne.Widget); ok {
			for _, ch := range test.WidgetRenderer(w).Objects() {
				walk(ch, visible)
			}
		}
	}
	walk(o, true)
	return out
}

func containsText(texts []string, sub string) bool {
	for _, s := range texts {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestAppFirstRunShowsWelcomeThenChat(t *testing.T) {
	_, svc := kernel(t, false)
	h := startApp(t, Options{Service: svc}, false, "welcome", nil)
	w := h.a.MainWindow()
	if w.Title() != "HologramAgent" {
		t.Fatalf("title %q", w.Title())
	}
	if got := w.Canvas().Size(); got != mainWindowSize {
		t.Fatalf("window size %v, want %v", got, mainWindowSize)
	}
	if h.a.tabs != nil {
		t.Fatal("tabs shown on first run")
	}
	h.a.welcomeDone() // what the welcome view calls once a provider is saved
	h.wait(map[string]any{"kind": "screen", "screen": "chat"})
	h.settle()
	var got []string
	for _, it := range h.a.tabs.Items {
		got = append(got, it.Text)
	}
	if strings.Join(got, ",") != "Chat,Star map,Memory,Plugins,Settings" {
		t.Fatalf("tabs %v", got)
	}
}

func TestAppTabsShortcutsAndChatTrace(t *testing.T) {
	fake, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc}, false, "chat", nil)
	sc := h.a.MainWindow().Canvas().(fyne.Shortcutable)
	before := len(fake.Requests())
	for _, s := range []struct {
		key    fyne.KeyName
		screen string
	}{{fyne.Key2, "starmap"}, {fyne.Key3, "memory"}, {fyne.Key4, "plugins"}, {fyne.Key5, "settings"}, {fyne.Key1, "chat"}} {
		sc.TypedShortcut(&desktop.CustomShortcut{KeyName: s.key, Modifier: fyne.KeyModifierAlt})
		if got := tabScreens[h.a.tabs.SelectedIndex()]; got != s.screen {
			t.Fatalf("Alt+%s selected %s", s.key, got)
		}
		h.wait(map[string]any{"kind": "screen", "screen": s.screen})
	}
	h.settle()
	refreshed := map[string]bool{}
	for _, r := range fake.Requests()[before:] {
		refreshed[r.Method+" "+strings.SplitN(r.Path, "?", 2)[0]] = true
	}
	for tab, path := range map[string]string{"Plugins": "/api/v1/plugins", "Star map": "/api/v1/memory/graph", "Memory": "/api/v1/window"} {
		if !refreshed["GET "+path] {
			t.Errorf("entering the %s tab did not read GET %s; requests %v", tab, path, refreshed)
		}
	}
	h.send(h.a.chat, "hello star")
	h.wait(map[string]any{"kind": "message", "window": "main", "role": "user", "text": "hello star"})
	h.wait(map[string]any{"kind": "message", "window": "main", "role": "assistant", "text": "PONG: hello star"})
}

func TestAppBanners(t *testing.T) {
	fake := clienttest.New()
	fake.Token = "right"
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	owner, err := client.Dial(client.Options{URL: srv.URL, Token: "right"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.AddProvider(context.Background(), client.ProviderConfig{Name: "p", BaseURL: "http://127.0.0.1:9/v1", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		token    string
		insecure bool
		state    string
		texts    []string
	}{
		{"wrong token", "wrong", false, "wrong_token", []string{"refused the token", "Remote kernel: " + srv.URL}},
		{"insecure", "right", true, "connected", []string{"Insecure connection"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, err := client.Dial(client.Options{URL: srv.URL, Token: tc.token})
			if err != nil {
				t.Fatal(err)
			}
			h := startApp(t, Options{Service: svc, Remote: srv.URL, Insecure: tc.insecure}, false, "chat", nil)
			h.wait(map[string]any{"kind": "banner", "state": tc.state})
			h.settle()
			texts := visibleTexts(h.a.MainWindow().Content())
			for _, want := range tc.texts {
				if !containsText(texts, want) {
					t.Errorf("no visible %q in %q", want, texts)
				}
			}
			if tc.state == "connected" && (containsText(texts, "Cannot reach") || containsText(texts, "refused")) {
				t.Errorf("a connection banner while connected: %q", texts)
			}
		})
	}
}

func TestAppTray(t *testing.T) {
	fake, svc := kernel(t, true)
	quits := 0
	h := startApp(t, Options{Service: svc, Tray: true, OnQuit: func() { quits++ }}, true, "chat", nil)
	a, ta := h.a, h.ta
	if got := strings.Join(ta.labels(), "|"); got != "Quick chat|Open HologramAgent||Pause||Quit" {
		t.Fatalf("tray menu %q", got)
	}
	if last := ta.menu.Items[len(ta.menu.Items)-1]; !last.IsQuit {
		t.Fatal("Quit is not marked as the quit item: Fyne would add a second one")
	}
	if ta.icon == nil {
		t.Fatal("no tray icon")
	}

	ta.item(t, "Pause").Action()
	h.wait(map[string]any{"kind": "paused", "paused": true})
	if !fake.Paused() {
		t.Fatal("the kernel was not paused")
	}
	ta.item(t, "Resume").Action()
	h.wait(map[string]any{"kind": "paused", "paused": false})
	if fake.Paused() {
		t.Fatal("the kernel was not resumed")
	}

	ta.item(t, "Quick chat").Action()
	h.wait(map[string]any{"kind": "window", "window": "quick", "hidden": false})
	h.settle()
	if !strings.Contains(a.quick.Title(), "Quick chat") || a.quick.Canvas().Size() != quickWindowSize {
		t.Fatalf("quick window %q %v", a.quick.Title(), a.quick.Canvas().Size())
	}
	h.send(a.quickVM, "quick one")
	h.wait(map[string]any{"kind": "message", "window": "quick", "role": "assistant", "text": "PONG: quick one"})
	hist, err := svc.History(context.Background(), "quick", 0)
	if err != nil || len(hist) != 2 {
		t.Fatalf("quick session history %v %v", hist, err)
	}

	// Closing the window hides it to the tray (the default with a tray); Open shows it.
	a.closeMain()
	h.wait(map[string]any{"kind": "window", "window": "main", "hidden": true})
	if quits != 0 || !a.isMainHidden() {
		t.Fatalf("close with a tray: quits %d, hidden %v", quits, a.isMainHidden())
	}
	ta.item(t, "Open HologramAgent").Action()
	if a.isMainHidden() {
		t.Fatal("Open did not show the window")
	}
	// With no tray host on the bus (nothing shows the icon), closing quits however it is set.
	a.o.TrayHost = func() bool { return false }
	a.closeMain()
	if quits != 1 || a.isMainHidden() {
		t.Fatalf("close with a tray but no tray host: quits %d, hidden %v", quits, a.isMainHidden())
	}
	a.o.TrayHost = nil
	// With close-to-tray turned off, closing quits.
	ta.Preferences().SetBool(prefCloseToTray, false)
	a.closeMain()
	if quits != 2 {
		t.Fatalf("close without close-to-tray: quits %d", quits)
	}
	ta.item(t, "Quit").Action()
	if quits != 3 {
		t.Fatalf("tray Quit: quits %d", quits)
	}
}

func TestAppWithoutTrayCloseQuits(t *testing.T) {
	_, svc := kernel(t, true)
	quits := 0
	// Tray false (no session bus), even though the app could show one.
	h := startApp(t, Options{Service: svc, OnQuit: func() { quits++ }}, true, "chat", nil)
	if h.ta.menus != 0 || h.a.tray != nil {
		t.Fatal("a tray menu was set without a session bus")
	}
	h.a.closeMain()
	if quits != 1 || h.a.isMainHidden() {
		t.Fatalf("close without a tray: quits %d, hidden %v", quits, h.a.isMainHidden())
	}
	h.wait(map[string]any{"kind": "quit"})
}

func TestAppNotifiesReplyWhileHidden(t *testing.T) {
	_, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc, Tray: true}, true, "chat", nil)
	var mu sync.Mutex
	var sent []*fyne.Notification
	h.a.notes.send = func(n *fyne.Notification) {
		mu.Lock()
		sent = append(sent, n)
		mu.Unlock()
	}
	h.send(h.a.chat, "seen")
	h.a.closeMain()
	h.send(h.a.chat, "ping")
	h.wait(map[string]any{"kind": "message", "role": "assistant", "text": "PONG: ping"})
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 || sent[0].Title != "HologramAgent replied" || sent[0].Content != "PONG: ping" {
		t.Fatalf("notifications %+v, want one for the reply while hidden", sent)
	}
}

// pluginsDouble lists scripted plugins.
type pluginsDouble struct {
	client.Service
	mu   sync.Mutex
	list []client.Plugin
}

func (p *pluginsDouble) Plugins(context.Context) ([]client.Plugin, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]client.Plugin(nil), p.list...), nil
}

func TestNotifierPluginFailures(t *testing.T) {
	test.NewTempApp(t)
	d := &pluginsDouble{}
	var sent []string
	n := &notifier{svc: d, send: func(x *fyne.Notification) { sent = append(sent, x.Title+": "+x.Content) }}
	steps := []struct {
		hide bool
		list []client.Plugin
		want []string
	}{
		{true, []client.Plugin{{Name: "a", State: "running"}, {Name: "b", State: "tripped"}}, nil}, // baseline
		{false, []client.Plugin{{Name: "a", State: "backoff", LastError: "exit status 1"}, {Name: "b", State: "tripped"}}, []string{"Plugin a failed: "}},
		{false, []client.Plugin{{Name: "a", State: "backoff"}, {Name: "b", State: "tripped"}}, nil},
		{false, []client.Plugin{{Name: "a", State: "tripped"}, {Name: "b", State: "running"}, {Name: "c", State: "backoff"}}, []string{"Plugin a failed: ", "Plugin c failed: "}},
		{true, []client.Plugin{{Name: "a", State: "tripped"}}, nil}, // hidden again: a new baseline
	}
	for i, s := range steps {
		sent = nil
		if s.hide {
			n.hidden()
		}
		d.mu.Lock()
		d.list = s.list
		d.mu.Unlock()
		if err := n.pollPlugins(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(sent) != len(s.want) {
			t.Fatalf("step %d: notifications %q, want %q", i, sent, s.want)
		}
		for j := range sent {
			if !strings.HasPrefix(sent[j], s.want[j]) {
				t.Fatalf("step %d: notification %q, want prefix %q", i, sent[j], s.want[j])
			}
		}
	}
}

func TestAppLanguage(t *testing.T) {
	t.Cleanup(func() { _ = SetLanguage("en") })
	_, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc}, false, "chat", func(fa fyne.App) { fa.Preferences().SetString(prefLanguage, "zh") })
	if Language() != "zh" {
		t.Fatalf("language %s with the preference zh", Language())
	}
	if zh := h.a.tabs.Items[0].Text; zh == "Chat" || zh != T("Chat") {
		t.Fatalf("the Chat tab reads %q in Chinese", zh)
	}
	h.a.selectTab(tabSettings)
	h.a.setLanguage("en")
	h.wait(map[string]any{"kind": "language", "language": "en"})
	h.settle()
	if got := h.a.tabs.Items[0].Text; got != "Chat" {
		t.Fatalf("after switching to English the tab reads %q", got)
	}
	if h.a.tabs.SelectedIndex() != tabSettings {
		t.Fatalf("the rebuilt window shows tab %d, not Settings", h.a.tabs.SelectedIndex())
	}

	// Without a preference the locale decides.
	startApp(t, Options{Service: svc, Getenv: func(k string) string {
		if k == "LANG" {
			return "zh_CN.UTF-8"
		}
		return ""
	}}, false, "chat", nil)
	if Language() != "zh" {
		t.Fatalf("language %s under LANG=zh_CN.UTF-8", Language())
	}
}

func TestAppConnectRemote(t *testing.T) {
	fake := clienttest.New()
	fake.Token = "right"
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	_, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc}, false, "chat", nil)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	if err := os.WriteFile(good, []byte("right\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.a.connectRemote(srv.URL, bad, ""); err == nil {
		t.Fatal("connected with a wrong token")
	}
	if args := h.a.RestartArgs(); len(args) != 0 {
		t.Fatalf("restart args after a failed connect: %q", args)
	}
	if err := h.a.connectRemote(srv.URL, good, ""); err != nil {
		t.Fatal(err)
	}
	want := []string{"--remote", srv.URL, "--token-file", good}
	if got := h.a.RestartArgs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("restart args %q, want %q", got, want)
	}
	h.wait(map[string]any{"kind": "restart", "remote": srv.URL})
}

// TestAppReloadsAfterRestart: a restarted kernel makes the chat reload its sessions and history.
func TestAppReloadsAfterRestart(t *testing.T) {
	fake, svc := kernel(t, true)
	h := startApp(t, Options{Service: svc}, false, "chat", nil)
	before := len(fake.Requests())
	h.a.connChanged(ConnRestarted, "restarted")
	h.settle()
	var reloaded bool
	for _, r := range fake.Requests()[before:] {
		reloaded = reloaded || (r.Method == "GET" && r.Path == "/api/v1/sessions")
	}
	if !reloaded {
		t.Fatalf("no reload after a restart: %+v", fake.Requests()[before:])
	}
}
