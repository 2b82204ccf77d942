//go:build integration

package screenshot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// need fails the test under HOLOGRAM_CI=1 when a tool is missing (.ci/deps.sh installs it),
// and skips it otherwise.
func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatalf("%s is missing (HOLOGRAM_CI=1): install it (.ci/deps.sh)", tool)
		}
		t.Skipf("%s is missing", tool)
	}
}

// xvfb starts an 800×600 Xvfb on a free display and returns DISPLAY.
func xvfb(t *testing.T) string {
	t.Helper()
	need(t, "Xvfb")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-noreset", "-screen", "0", "800x600x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	num := make(chan string, 1)
	go func() { line, _ := bufio.NewReader(pr).ReadString('\n'); pr.Close(); num <- strings.TrimSpace(line) }()
	select {
	case n := <-num:
		if n == "" {
			t.Fatal("Xvfb told no display")
		}
		return ":" + n
	case <-time.After(30 * time.Second):
		t.Fatal("Xvfb did not start")
	}
	return ""
}

// privateBus starts a session bus of the test's own and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	need(t, "dbus-daemon")
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(addr) == "" {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// drawWindow maps a 200×100 red window at (100, 50) with a blue 50×30 rectangle at (20, 20) in
// it, on display; it stays until the test ends.
func drawWindow(t *testing.T, display string) {
	t.Helper()
	quietXGB()
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	scr := xproto.Setup(conn).DefaultScreen(conn)
	wid, _ := xproto.NewWindowId(conn)
	if err := xproto.CreateWindowChecked(conn, 0, wid, scr.Root, 100, 50, 200, 100, 0, xproto.WindowClassInputOutput, 0,
		xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0xff0000, 1}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.MapWindowChecked(conn, wid).Check(); err != nil {
		t.Fatal(err)
	}
	gc, _ := xproto.NewGcontextId(conn)
	if err := xproto.CreateGCChecked(conn, gc, xproto.Drawable(wid), xproto.GcForeground, []uint32{0x0000ff}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.PolyFillRectangleChecked(conn, xproto.Drawable(wid), gc, []xproto.Rectangle{{X: 20, Y: 20, Width: 50, Height: 30}}).Check(); err != nil {
		t.Fatal(err)
	}
}

func decode(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

func rgb(c color.Color) [3]uint32 {
	r, g, b, _ := c.RGBA()
	return [3]uint32{r >> 8, g >> 8, b >> 8}
}

// TestX11: the root window of an Xvfb is captured whole, the test's window in its colours at
// its place (red, with blue inside: the channels are not swapped).
func TestX11(t *testing.T) {
	display := xvfb(t)
	drawWindow(t, display)
	c := &Capturer{Getenv: func(k string) string { return map[string]string{"DISPLAY": display}[k] }}
	if !c.Available() {
		t.Fatal("not available with DISPLAY set")
	}
	t0 := time.Now()
	data, err := c.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("800×600 captured and encoded in %v (%d bytes)", time.Since(t0).Round(time.Millisecond), len(data))
	img := decode(t, data)
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
		t.Fatalf("captured %v, want the 800×600 screen", b)
	}
	for _, p := range []struct {
		x, y int
		want [3]uint32
	}{{105, 55, [3]uint32{255, 0, 0}}, {295, 145, [3]uint32{255, 0, 0}}, {125, 75, [3]uint32{0, 0, 255}}, {169, 99, [3]uint32{0, 0, 255}}} {
		if got := rgb(img.At(p.x, p.y)); got != p.want {
			t.Errorf("pixel (%d, %d) = %v, want %v", p.x, p.y, got, p.want)
		}
	}
	if got := rgb(img.At(50, 50)); got == [3]uint32{255, 0, 0} {
		t.Errorf("pixel (50, 50) outside the window is red")
	}
}

// fakePortal is an org.freedesktop.portal.Desktop with only the Screenshot interface, as the
// portal's documentation describes it: Screenshot answers a Request path, then the Request's
// Response signal carries the code and the file's uri.
type fakePortal struct {
	conn  *dbus.Conn
	calls chan map[string]dbus.Variant

	mu   sync.Mutex // code and uri: set by the test, read by the bus's goroutines
	code uint32
	uri  string
}

// answer sets what the next Screenshot call answers.
func (p *fakePortal) answer(code uint32, uri string) {
	p.mu.Lock()
	p.code, p.uri = code, uri
	p.mu.Unlock()
}

func (p *fakePortal) Screenshot(sender dbus.Sender, parent string, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	tok, _ := opts["handle_token"].Value().(string)
	if tok == "" {
		return "", dbus.MakeFailedError(errors.New("handle_token is required"))
	}
	p.calls <- opts
	s := strings.ReplaceAll(strings.TrimPrefix(string(sender), ":"), ".", "_")
	req := dbus.ObjectPath("/org/freedesktop/portal/desktop/request/" + s + "/" + tok)
	p.mu.Lock()
	code, uri := p.code, p.uri
	p.mu.Unlock()
	results := map[string]dbus.Variant{}
	if code == 0 {
		results["uri"] = dbus.MakeVariant(uri)
	}
	// At once, right after the reply: a client that subscribes late misses it.
	go p.conn.Emit(req, "org.freedesktop.portal.Request.Response", code, results)
	return req, nil
}

func (p *fakePortal) Get(iface, prop string) (dbus.Variant, *dbus.Error) {
	if iface == "org.freedesktop.portal.Screenshot" && prop == "version" {
		return dbus.MakeVariant(uint32(2)), nil
	}
	return dbus.Variant{}, dbus.MakeFailedError(errors.New("no property " + iface + "." + prop))
}

func newFakePortal(t *testing.T, addr string) *fakePortal {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p := &fakePortal{conn: conn, calls: make(chan map[string]dbus.Variant, 8)}
	if err := conn.ExportMethodTable(map[string]any{"Screenshot": p.Screenshot}, "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Screenshot"); err != nil {
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

func writePNG(t *testing.T, path string) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.NRGBA{0, 200, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPortal: against a fake Screenshot portal on a private session bus, Capture takes the
// portal's file (deleted when it is in the temporary directory, kept when it is the user's),
// reports the user's cancellation as ErrCancelled without falling back to X11, and, on a bus
// without a portal, falls back to X11 or fails with ErrUnavailable.
func TestPortal(t *testing.T) {
	bus := privateBus(t)
	tmp, user := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	env := map[string]string{"DBUS_SESSION_BUS_ADDRESS": bus}
	c := &Capturer{Getenv: func(k string) string { return env[k] }}
	ctx := context.Background()

	t.Run("no portal, no display", func(t *testing.T) {
		_, err := c.Capture(ctx)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no screenshot: neither the XDG desktop portal nor an X11 display is available") ||
			!strings.Contains(err.Error(), "DISPLAY is not set") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("neither set", func(t *testing.T) {
		none := &Capturer{Getenv: func(string) string { return "" }}
		if none.Available() {
			t.Error("available without a bus or a display")
		}
		if _, err := none.Capture(ctx); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
	})

	p := newFakePortal(t, bus)
	for _, tc := range []struct {
		name, dir string
		kept      bool
	}{{"temporary file", tmp, false}, {"user's file", user, true}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(tc.dir, "Screenshot from now.png")
			want := writePNG(t, path)
			p.answer(0, "file://"+strings.ReplaceAll(path, " ", "%20"))
			got, err := c.Capture(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got %d bytes, want the portal's file (%d)", len(got), len(want))
			}
			opts := <-p.calls
			if m, _ := opts["modal"].Value().(bool); !m {
				t.Errorf("options %v: want modal", opts)
			}
			_, err = os.Stat(path)
			if kept := err == nil; kept != tc.kept {
				t.Errorf("file kept = %v, want %v", kept, tc.kept)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		p.answer(1, "")
		env["DISPLAY"] = ":99999" // not taken: the portal's answer is final
		defer delete(env, "DISPLAY")
		if _, err := c.Capture(ctx); !errors.Is(err, ErrCancelled) {
			t.Fatalf("err = %v, want ErrCancelled", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		p.answer(2, "")
		if _, err := c.Capture(ctx); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestPortalAbsentFallsBackToX11: a session bus without a portal and an X display: X11.
func TestPortalAbsentFallsBackToX11(t *testing.T) {
	env := map[string]string{"DBUS_SESSION_BUS_ADDRESS": privateBus(t), "DISPLAY": xvfb(t)}
	drawWindow(t, env["DISPLAY"])
	c := &Capturer{Getenv: func(k string) string { return env[k] }}
	data, err := c.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := rgb(decode(t, data).At(105, 55)); got != [3]uint32{255, 0, 0} {
		t.Errorf("pixel (105, 55) = %v, want the window's red", got)
	}
}
