// Package screenshot captures the screen for the desktop app (its tray's Screenshot item and the
// model's screenshot tool): through the XDG desktop portal's Screenshot interface where the
// session bus has one (Wayland desktops, sandboxes; the desktop may ask the user first), else
// from the X11 root window. The result is a PNG.
//
// The portal is called with godbus directly rather than through github.com/rymdport/portal's
// screenshot package: that one subscribes to the Response signal after the call (a quick answer
// is lost), takes no context, waits forever and reports a cancellation as an empty URI.
package screenshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hologramagent/hologram/cmd/hologram/internal/portal"
)

// ErrUnavailable is wrapped by Capture's error when there is nothing to capture with.
var ErrUnavailable = errors.New("no screenshot: neither the XDG desktop portal nor an X11 display is available")

// ErrCancelled is Capture's error when the user cancelled the portal's dialog; it wraps
// context.Canceled (what the GUI checks).
var ErrCancelled = fmt.Errorf("screenshot cancelled by the user: %w", context.Canceled)

const (
	portalScreenshot = "org.freedesktop.portal.Screenshot"
	// answerTimeout bounds the wait for the portal (the desktop may ask the user).
	answerTimeout = 2 * time.Minute
	// maxFile bounds the image file the portal names.
	maxFile = 64 << 20
)

// Capturer takes screenshots. The zero value reads the process's environment.
type Capturer struct {
	// Getenv reads DBUS_SESSION_BUS_ADDRESS and DISPLAY; nil: os.Getenv.
	Getenv func(string) string
	// Log receives why a path was not taken; nil: discarded.
	Log *slog.Logger
}

func (c *Capturer) getenv(k string) string {
	if c.Getenv == nil {
		return os.Getenv(k)
	}
	return c.Getenv(k)
}

func (c *Capturer) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// Available reports whether Capture may work: a session bus (for the portal) or an X11
// display is set. It connects to neither.
func (c *Capturer) Available() bool {
	return c.getenv("DBUS_SESSION_BUS_ADDRESS") != "" || c.getenv("DISPLAY") != ""
}

// Capture takes a screenshot of the whole screen and returns it as PNG. The portal's answer is
// final when the session bus has one (ErrCancelled when the user said no); X11 is used only
// when there is no portal with a Screenshot interface. Without either the error wraps
// ErrUnavailable and says why each was not used.
func (c *Capturer) Capture(ctx context.Context) ([]byte, error) {
	var why []string
	if addr := c.getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" {
		data, err := c.viaPortal(ctx, addr)
		if !errors.Is(err, errNoPortal) {
			return data, err
		}
		why = append(why, err.Error())
		c.log().Debug("screenshot: no portal, trying X11", "why", err)
	} else {
		why = append(why, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
	}
	if d := c.getenv("DISPLAY"); d != "" {
		data, err := CaptureX11(ctx, d)
		if !errors.Is(err, errNoDisplay) {
			return data, err
		}
		why = append(why, err.Error())
	} else {
		why = append(why, "no X11 display (DISPLAY is not set)")
	}
	return nil, fmt.Errorf("%w (%s)", ErrUnavailable, strings.Join(why, "; "))
}

// errNoPortal is wrapped when the bus has no portal with a Screenshot interface.
var errNoPortal = errors.New("no XDG desktop portal with a Screenshot interface")

// viaPortal asks the portal on the bus at addr for a screenshot.
func (c *Capturer) viaPortal(ctx context.Context, addr string) ([]byte, error) {
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("%w: the session bus: %v", errNoPortal, err)
	}
	defer conn.Close()
	// The version property: a portal without Screenshot (or no portal at all, which the bus
	// may try to activate) fails here.
	if _, err := conn.Object(portal.Dest, portal.Path).GetProperty(portalScreenshot + ".version"); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoPortal, err)
	}
	sigs := make(chan *dbus.Signal, 8)
	conn.Signal(sigs)
	res, err := portal.Call(ctx, conn, sigs, portalScreenshot+".Screenshot", answerTimeout, func(token string) []any {
		return []any{"", map[string]dbus.Variant{
			"handle_token": dbus.MakeVariant(token),
			"modal":        dbus.MakeVariant(true),
			"interactive":  dbus.MakeVariant(false),
		}}
	})
	if err != nil {
		return nil, fmt.Errorf("screenshot through the desktop portal: %w", err)
	}
	switch res.Code {
	case portal.Success:
	case portal.Cancelled:
		return nil, ErrCancelled
	default:
		return nil, fmt.Errorf("the desktop portal refused the screenshot (response %d)", res.Code)
	}
	uri, _ := res.Results["uri"].Value().(string)
	return readPortalFile(uri)
}

// readPortalFile reads the image the portal saved at uri (file://). The file is deleted when it
// lies in the temporary directory (where a portal puts a capture nobody asked to keep); a file
// elsewhere (GNOME saves to ~/Pictures/Screenshots) is the user's and stays.
func readPortalFile(uri string) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return nil, fmt.Errorf("the desktop portal answered no file (uri %q)", uri)
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, fmt.Errorf("the desktop portal's screenshot: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("the desktop portal's screenshot: %w", err)
	}
	if inTemp(u.Path) {
		_ = os.Remove(u.Path)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("the desktop portal's screenshot %s is over %d MiB", u.Path, maxFile>>20)
	}
	return toPNG(data)
}

// inTemp reports whether path lies under the temporary directory.
func inTemp(path string) bool {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(tmp, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// toPNG returns data as PNG: as it is when it is one, re-encoded when the portal saved another
// format.
func toPNG(data []byte) ([]byte, error) {
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the desktop portal's screenshot is not an image: %w", err)
	}
	if format == "png" {
		return data, nil
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
