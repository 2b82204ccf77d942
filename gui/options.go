package gui

import (
	"context"
	"io"

	"fyne.io/fyne/v2"

	"github.com/hologramagent/hologram/kernel/client"
)

// Options configure NewApp.
type Options struct {
	// Service is the kernel: in-process or an HTTP client of a remote homed (required).
	Service client.Service
	// Errors, when set, is the Reporter the Service's HTTP client reports its failed calls to
	// (client.Options.OnError); the app's connection banner then reacts at once. Nil for the
	// kernel in-process.
	Errors *Reporter
	// Remote is the remote kernel's URL ("" with the kernel in-process); Insecure says it is
	// plain HTTP off loopback (a warning stays visible).
	Remote   string
	Insecure bool
	// DataDir is the in-process kernel's data directory (shown in Settings).
	DataDir string
	Version string
	// Tray says a D-Bus session bus is reachable: only then is the tray set (without one,
	// close-to-tray turns itself off, logged once).
	Tray bool
	// TrayHost, when set, says whether something shows tray icons now (a StatusNotifierWatcher
	// owns its name on the bus). Without a tray host closing the window quits instead of hiding
	// it, logged once. nil: assume one.
	TrayHost func() bool
	// Getenv reads the environment (locale, XDG dirs); nil means os.Getenv.
	Getenv func(string) string
	// Trace, when set, receives one JSON line per view-model change worth checking from
	// outside (messages shown, screens entered): the real-window tests read it.
	Trace io.Writer
	// Icon is the app icon (window and tray).
	Icon fyne.Resource
	// OnQuit runs when the user quits (tray Quit, window closed without close-to-tray).
	OnQuit func()
	// Screenshot, when set, captures the screen as PNG (the desktop portal or X11; the desktop
	// may ask the user first, and a cancellation wraps context.Canceled). It gives the tray its
	// Screenshot item, which attaches a capture to the main chat's next message, and the main
	// chat's turns the model's client-executed screenshot tool. nil: neither is offered.
	Screenshot func(ctx context.Context) ([]byte, error)
}
