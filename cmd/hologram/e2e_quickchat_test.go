//go:build integration

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// fakePortal is an org.freedesktop.portal.Desktop with only the GlobalShortcuts interface, as
// the portal's documentation describes it: CreateSession and BindShortcuts answer through a
// Request object's Response signal; Activated is sent when the user presses the shortcut.
type fakePortal struct {
	conn    *dbus.Conn
	bound   chan []string // the ids of each BindShortcuts
	session dbus.ObjectPath
}

type portalShortcut struct {
	ID   string
	Opts map[string]dbus.Variant
}

func requestPath(sender dbus.Sender, kind, token string) dbus.ObjectPath {
	s := strings.ReplaceAll(strings.TrimPrefix(string(sender), ":"), ".", "_")
	return dbus.ObjectPath("/org/freedesktop/portal/desktop/" + kind + "/" + s + "/" + token)
}

func (p *fakePortal) respond(path dbus.ObjectPath, results map[string]dbus.Variant) {
	go p.conn.Emit(path, "org.freedesktop.portal.Request.Response", uint32(0), results)
}

func (p *fakePortal) CreateSession(sender dbus.Sender, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	tok, _ := opts["handle_token"].Value().(string)
	stok, _ := opts["session_handle_token"].Value().(string)
	if tok == "" || stok == "" {
		return "", dbus.MakeFailedError(errString("handle_token and session_handle_token are required"))
	}
	req := requestPath(sender, "request", tok)
	p.session = requestPath(sender, "session", stok)
	p.respond(req, map[string]dbus.Variant{"session_handle": dbus.MakeVariant(string(p.session))})
	return req, nil
}

func (p *fakePortal) BindShortcuts(sender dbus.Sender, session dbus.ObjectPath, shortcuts []portalShortcut, parent string, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	if session != p.session {
		return "", dbus.MakeFailedError(errString("unknown session " + string(session)))
	}
	tok, _ := opts["handle_token"].Value().(string)
	var ids []string
	var out []portalShortcut
	for _, s := range shortcuts {
		ids = append(ids, s.ID)
		trigger, _ := s.Opts["preferred_trigger"].Value().(string)
		out = append(out, portalShortcut{s.ID, map[string]dbus.Variant{"description": s.Opts["description"], "trigger_description": dbus.MakeVariant(trigger)}})
	}
	req := requestPath(sender, "request", tok)
	p.respond(req, map[string]dbus.Variant{"shortcuts": dbus.MakeVariant(out)})
	p.bound <- ids
	return req, nil
}

// Get is org.freedesktop.DBus.Properties.Get: the interface's version.
func (p *fakePortal) Get(iface, prop string) (dbus.Variant, *dbus.Error) {
	if iface == "org.freedesktop.portal.GlobalShortcuts" && prop == "version" {
		return dbus.MakeVariant(uint32(1)), nil
	}
	return dbus.Variant{}, dbus.MakeFailedError(errString("no property " + iface + "." + prop))
}

// activate is the user pressing the shortcut.
func (p *fakePortal) activate(t *testing.T) {
	if err := p.conn.Emit("/org/freedesktop/portal/desktop", "org.freedesktop.portal.GlobalShortcuts.Activated",
		p.session, quickShortcutID, uint64(time.Now().UnixMilli()), map[string]dbus.Variant{}); err != nil {
		t.Fatal(err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func newFakePortal(t *testing.T, addr string) *fakePortal {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p := &fakePortal{conn: conn, bound: make(chan []string, 4)}
	if err := conn.ExportMethodTable(map[string]any{"CreateSession": p.CreateSession, "BindShortcuts": p.BindShortcuts},
		"/org/freedesktop/portal/desktop", "org.freedesktop.portal.GlobalShortcuts"); err != nil {
		t.Fatal(err)
	}
	if err := conn.ExportMethodTable(map[string]any{"Get": p.Get}, "/org/freedesktop/portal/desktop", "org.freedesktop.DBus.Properties"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.portal.Desktop", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.freedesktop.portal.Desktop: %v %v", reply, err)
	}
	return p
}

// hologramCmd runs the hologram binary to its end: its output and exit code.
func (in *install) hologramCmd(bus string, args ...string) (string, int) {
	in.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "hologram"), args...)
	cmd.Env = in.environ(bus)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		in.t.Fatalf("hologram %v did not exit in 20 s:\n%s", args, out)
	}
	if err != nil && cmd.ProcessState == nil {
		in.t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// countTrace is how many trace lines hold every field of want.
func (g *running) countTrace(want map[string]any) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, m := range g.lines {
		ok := true
		for k, v := range want {
			ok = ok && reflect.DeepEqual(m[k], v)
		}
		if ok {
			n++
		}
	}
	return n
}

// waitCount waits until n trace lines hold want.
func (g *running) waitCount(want map[string]any, n int) {
	g.t.Helper()
	deadline := time.Now().Add(waitLong)
	for g.countTrace(want) < n {
		if time.Now().After(deadline) {
			g.t.Fatalf("%d trace lines with %v, want %d; %s", g.countTrace(want), want, n, g.in.diagnose())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noWindow waits until no visible window's name matches re.
func (in *install) noWindow(re string) {
	in.t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		out, _ := in.xdo(context.Background(), "search", "--onlyvisible", "--name", re)
		if strings.TrimSpace(out) == "" {
			return
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("window %q still visible: %s; %s", re, out, in.diagnose())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQuickChatToggle: under Xvfb with a private session bus holding a fake GlobalShortcuts
// portal, the app binds its quick-chat shortcut; `hologram --quick-chat` shows the running
// app's quick-chat window (xdotool finds it) and, run again, hides it; the portal's Activated
// signal shows it again; a second `hologram` shows the running one's main window and exits;
// with no app running, `hologram --quick-chat` starts it with the quick chat open.
func TestQuickChatToggle(t *testing.T) {
	in := newInstall(t, xserver(t))
	bus := privateBus(t)
	portal := newFakePortal(t, bus)
	g := in.startGUI("hologram", bus, "--data", in.data)
	in.window("^HologramAgent$")
	g.waitTrace(map[string]any{"kind": "screen", "screen": "welcome"}, nil)
	select {
	case ids := <-portal.bound:
		if len(ids) != 1 || ids[0] != quickShortcutID {
			t.Fatalf("BindShortcuts with %v, want [%s]", ids, quickShortcutID)
		}
	case <-time.After(waitLong):
		t.Fatalf("the app bound no shortcut:\n%s", g.out)
	}
	shown := map[string]any{"kind": "window", "window": "quick", "hidden": false}
	hidden := map[string]any{"kind": "window", "window": "quick", "hidden": true}

	t0 := time.Now()
	if out, code := in.hologramCmd(bus, "--data", in.data, "--quick-chat"); code != 0 {
		t.Fatalf("hologram --quick-chat: exit %d\n%s", code, out)
	}
	in.window("^Quick chat · HologramAgent$")
	t.Logf("hologram --quick-chat to the quick-chat window shown: %v", time.Since(t0).Round(time.Millisecond))
	g.waitCount(shown, 1)
	if out, code := in.hologramCmd(bus, "--data", in.data, "--quick-chat"); code != 0 {
		t.Fatalf("second hologram --quick-chat: exit %d\n%s", code, out)
	}
	g.waitCount(hidden, 1)
	in.noWindow("^Quick chat · HologramAgent$")

	portal.activate(t)
	g.waitCount(shown, 2)
	in.window("^Quick chat · HologramAgent$")

	before := g.countTrace(map[string]any{"kind": "window", "window": "main", "hidden": false})
	if out, code := in.hologramCmd(bus, "--data", in.data); code != 0 {
		t.Fatalf("a second hologram: exit %d\n%s", code, out)
	}
	g.waitCount(map[string]any{"kind": "window", "window": "main", "hidden": false}, before+1)
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
	if !strings.Contains(g.out.String(), "global shortcut for the quick chat registered") {
		t.Errorf("no word about the registered shortcut:\n%s", g.out)
	}

	// No app runs (and no portal on this run: it says how to bind the shortcut): --quick-chat
	// starts the app with its quick chat open.
	g = in.startGUI("hologram", "", "--data", in.data, "--quick-chat")
	in.window("^Quick chat · HologramAgent$")
	in.window("^HologramAgent$")
	if code := g.stop(); code != 0 {
		t.Fatalf("exit %d on SIGTERM:\n%s", code, g.out)
	}
	if !strings.Contains(g.out.String(), "bind a desktop shortcut to `hologram --quick-chat`") {
		t.Errorf("no word about binding the shortcut without a portal:\n%s", g.out)
	}
}
