// Command hologram is the HologramAgent desktop app: a Fyne window with the kernel inside, or
// attached to a kernel elsewhere.
//
//	hologram [--data DIR] [--remote URL --token-file F [--fingerprint SHA256]] [--insecure] [--quick-chat] [--version]
//
// Without --remote it starts the kernel in-process on DIR (the one kernel of that data dir: when
// one already runs there, it attaches to it over its unix socket). With --remote it is a client
// of that homed (token from --token-file or HOLOGRAM_TOKEN; plain http:// off loopback only with
// --insecure, and then with a warning in the window). Built with -tags nokernel it is the client
// variant, which links no kernel and needs --remote or a kernel running on the data dir.
//
// One hologram runs per data dir (or remote): a second one shows the running one's window and
// exits; --quick-chat toggles its quick-chat window (started when none runs), which is what a
// desktop shortcut runs (instance.go). Where the desktop has the XDG GlobalShortcuts portal, the
// app also registers a global shortcut for it (shortcut.go).
//
// HOLOGRAM_GUI_TRACE=FILE appends one JSON line per screen, message and banner to FILE (for
// tests). The tray is set only when a D-Bus session bus is reachable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"github.com/godbus/dbus/v5"

	"github.com/hologramagent/hologram/gui"
	// Before Fyne's lang package initialises: no "Error parsing user locale C" under C.UTF-8.
	_ "github.com/hologramagent/hologram/cmd/hologram/internal/quietlocale"
	"github.com/hologramagent/hologram/cmd/hologram/internal/screenshot"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
)

// appID names the app to the desktop (preferences, notifications, the .desktop file).
const appID = "com.github.hologramagent.hologram"

// version is set at link time (-X main.version=…); empty: the variant's own answer.
var version string

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// flags are hologram's command line.
type flags struct {
	data, remote, tokenFile, fingerprint string
	insecure, version, quickChat         bool
}

func parseFlags(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("hologram", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.data, "data", "", "data `directory` of the in-process kernel (default $XDG_DATA_HOME/hologram)")
	fs.StringVar(&f.remote, "remote", "", "attach to the remote kernel at `URL` (homed --listen)")
	fs.StringVar(&f.tokenFile, "token-file", "", "`file` holding the remote kernel's token (or set HOLOGRAM_TOKEN)")
	fs.StringVar(&f.fingerprint, "fingerprint", "", "pin the remote's TLS certificate by its `sha256` fingerprint")
	fs.BoolVar(&f.insecure, "insecure", false, "allow plain http:// to a remote host that is not loopback")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.BoolVar(&f.quickChat, "quick-chat", false, "toggle the running app's quick chat (start the app with it if none runs)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.remote == "" && (f.tokenFile != "" || f.fingerprint != "" || f.insecure) {
		return f, errors.New("--token-file, --fingerprint and --insecure go with --remote")
	}
	if f.remote != "" && f.data != "" {
		return f, errors.New("--data is for the kernel in-process; with --remote the remote kernel has its own")
	}
	return f, nil
}

// run is hologram's whole life; it returns the exit code.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "hologram: %v\n", err)
		return 2
	}
	if f.version {
		fmt.Fprintf(stdout, "hologram %s\n", productVersion())
		return 0
	}
	sock := instanceSocket(f, getenv)
	cmd := cmdShow
	if f.quickChat {
		cmd = cmdQuickChat
	}
	if running, err := signalRunning(sock, cmd); running {
		if err != nil {
			fmt.Fprintf(stderr, "hologram: %v\n", err)
			return 1
		}
		return 0 // the running one shows its window or toggles its quick chat
	}
	if err := checkDisplay(getenv); err != nil {
		fmt.Fprintf(stderr, "hologram: %v\n", err)
		return 1
	}
	// Listening from the start, so that a second hologram started while the kernel loads finds
	// this one; its commands wait for the app.
	appReady := make(chan *gui.App, 1)
	inst, err := listenInstance(sock, func(cmd string) error {
		select {
		case a := <-appReady:
			appReady <- a
			if cmd == cmdQuickChat {
				fyne.Do(a.ToggleQuick)
			} else {
				fyne.Do(a.Raise)
			}
			return nil
		case <-time.After(instanceTimeout - time.Second):
			return errors.New("still starting; try again in a moment")
		}
	}, slog.New(slog.NewTextHandler(stderr, nil)))
	switch {
	case errors.Is(err, errRunning): // one started meanwhile
		if _, err := signalRunning(sock, cmd); err != nil {
			fmt.Fprintf(stderr, "hologram: %v\n", err)
			return 1
		}
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "hologram: a second hologram will not find this one: %v\n", err)
	default:
		defer inst.Close()
	}
	// SIGTERM/SIGINT quit cleanly from the start (Fyne's own handler is registered by a goroutine
	// of Run, which a signal can beat): the app quits as soon as its loop runs. It stops the
	// driver's loop as Fyne's handler does, not fyne.App.Quit: when Fyne's handler wins, the loop
	// has ended and fyne.Do runs the call on this goroutine, where App.Quit would close windows
	// through GLFW after it terminated (the app then hung instead of exiting). Driver.Quit is a
	// no-op once the loop stopped.
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)
	appc := make(chan fyne.App, 1)
	quitting := make(chan struct{})
	go func() {
		<-sigc
		fa := <-appc
		fyne.Do(fa.Driver().Quit)
		close(quitting)
	}()
	log := slog.New(slog.NewTextHandler(stderr, nil))
	slog.SetDefault(log)
	ctx := context.Background()

	o := gui.Options{Getenv: getenv, Version: productVersion(), Icon: gui.Icon()}
	stop := func() {}
	if f.remote != "" {
		o.Errors = &gui.Reporter{}
		svc, insecure, err := dialRemote(f, getenv, o.Errors.Report)
		if err != nil {
			fmt.Fprintf(stderr, "hologram: %v\n", err)
			return 1
		}
		defer svc.Close()
		o.Service, o.Remote, o.Insecure = svc, f.remote, insecure
		if insecure {
			log.Warn("plain HTTP to a remote kernel: the token and messages cross the network unencrypted", "remote", f.remote)
		}
	} else {
		var cargs []string
		if f.data != "" {
			cargs = []string{"--data", f.data}
		}
		cfg, _, err := config.Load("hologram", cargs, getenv)
		if err != nil {
			fmt.Fprintf(stderr, "hologram: %v\n", err)
			return 2
		}
		o.Errors = &gui.Reporter{} // reports only when attached to another process's kernel
		svc, stopKernel, err := startKernel(ctx, cfg, getenv, stdout, stderr, o.Errors.Report)
		if err != nil {
			fmt.Fprintf(stderr, "hologram: %v\n", err)
			return 1
		}
		o.Service, o.DataDir, stop = svc, cfg.DataDir, stopKernel
	}

	// Screenshots (the tray's item, the model's screenshot tool): the desktop portal or X11.
	if shot := (&screenshot.Capturer{Getenv: getenv, Log: log}); shot.Available() {
		o.Screenshot = shot.Capture
	}
	o.Tray = sessionBus(getenv, log)
	if o.Tray {
		o.TrayHost = trayHost
	}
	if p := getenv("HOLOGRAM_GUI_TRACE"); p != "" {
		tf, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			stop()
			fmt.Fprintf(stderr, "hologram: trace file: %v\n", err)
			return 1
		}
		defer tf.Close()
		o.Trace = tf
	}

	if msg, err := repairPreferences(preferencesPath(getenv)); err != nil {
		log.Warn("preferences", "err", err)
	} else if msg != "" {
		log.Warn(msg)
	}
	fa := app.NewWithID(appID)
	appc <- fa
	a := gui.NewApp(fa, o)
	appReady <- a
	if f.quickChat {
		go fyne.Do(a.ToggleQuick) // runs in the loop, after Run's Show
	}
	stopShortcut := globalShortcut(getenv, log, func() { fyne.Do(a.ToggleQuick) })
	shutdown := sync.OnceFunc(func() { // after the loop, or from the quit watchdog
		stopShortcut()
		if inst != nil {
			inst.Close() // before a restart's exec, which would keep the socket file
		}
		stop()
	})
	runDone := make(chan struct{})
	go watchQuit(quitting, runDone, quitGrace, shutdown, log, os.Exit)
	a.Run()
	close(runDone)
	shutdown()
	if restart := a.RestartArgs(); len(restart) > 0 {
		exe, err := os.Executable()
		if err == nil {
			log.Info("restarting attached to a remote kernel", "args", strings.Join(restart, " "))
			err = syscall.Exec(exe, append([]string{os.Args[0]}, restart...), os.Environ())
		}
		fmt.Fprintf(stderr, "hologram: restart: %v\n", err)
		return 1
	}
	return 0
}

// dialRemote makes the HTTP client of a remote kernel and checks that it answers and accepts the
// token. insecure reports plain HTTP off loopback (the window warns).
// dialRemote is the client of the remote kernel; its failed calls go to onError.
func dialRemote(f flags, getenv func(string) string, onError func(error)) (*client.HTTP, bool, error) {
	u, err := url.Parse(f.remote)
	if err != nil {
		return nil, false, fmt.Errorf("--remote: %w", err)
	}
	token := strings.TrimSpace(getenv("HOLOGRAM_TOKEN"))
	if f.tokenFile != "" {
		if token, err = client.ReadTokenFile(f.tokenFile); err != nil {
			return nil, false, err
		}
	}
	if token == "" {
		return nil, false, errors.New("--remote needs a token: --token-file F or HOLOGRAM_TOKEN")
	}
	c, err := client.Dial(client.Options{URL: f.remote, Token: token, Fingerprint: f.fingerprint, Insecure: f.insecure, OnError: onError})
	if err != nil {
		return nil, false, err
	}
	// The window opens whether or not the kernel answers now: its banner shows why not and
	// retries (wrong token, wrong fingerprint, server gone).
	return c, u.Scheme == "http" && !loopback(u.Hostname()), nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// attachSocket is a client of the kernel serving socket, checked to answer; its failed calls
// go to onError.
func attachSocket(ctx context.Context, socket string, onError func(error)) (*client.HTTP, error) {
	c, err := client.Dial(client.Options{Socket: socket, OnError: onError})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Health(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// sessionBus reports whether a D-Bus session bus is reachable, which the tray needs (Fyne's
// tray panics at Quit without one). DBUS_SESSION_BUS_ADDRESS is checked first: without it godbus
// would autolaunch a bus daemon and leak it.
func sessionBus(getenv func(string) string, log *slog.Logger) bool {
	if getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		log.Debug("DBUS_SESSION_BUS_ADDRESS is not set")
		return false
	}
	if _, err := dbus.SessionBus(); err != nil { // shared: Fyne's notifications use it too
		log.Info("DBUS_SESSION_BUS_ADDRESS is set, but the bus does not answer", "err", err)
		return false
	}
	return true
}

// trayHost reports whether a StatusNotifierWatcher (a panel that shows tray icons) owns its name
// on the session bus now.
func trayHost() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return false
	}
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has); err != nil {
		return false
	}
	return has
}

// checkDisplay fails with a clear message when no X display can be reached (GLFW would panic):
// DISPLAY unset, not a display name, or a local display no X server listens on. A remote
// display (host:N) is left to GLFW.
func checkDisplay(getenv func(string) string) error {
	d := getenv("DISPLAY")
	if d == "" {
		return errors.New("no display: DISPLAY is not set (run it in a desktop session, or under Xvfb: Xvfb :99 & DISPLAY=:99 hologram; homed and waiter need no display)")
	}
	host, rest, ok := strings.Cut(d, ":")
	num, _, _ := strings.Cut(rest, ".")
	if _, err := strconv.Atoi(num); !ok || err != nil {
		return fmt.Errorf("DISPLAY %q is not a display name (want e.g. :0)", d)
	}
	if host != "" && host != "unix" {
		return nil
	}
	for _, addr := range []string{"@/tmp/.X11-unix/X" + num, "/tmp/.X11-unix/X" + num} {
		if c, err := net.DialTimeout("unix", addr, 2*time.Second); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("cannot reach the X display %s: no X server listens on it", d)
}
