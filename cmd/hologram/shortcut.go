package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hologramagent/hologram/cmd/hologram/internal/portal"
)

// The quick chat's global shortcut, through the XDG desktop portal's GlobalShortcuts interface
// (GNOME 48+, KDE Plasma 5.27+): a session is created, the "quick-chat" shortcut bound (the
// desktop may ask the user to confirm or pick the keys), and each Activated signal toggles the
// quick chat. Without the portal the app logs once how to bind `hologram --quick-chat` instead.

const (
	portalShortcuts = "org.freedesktop.portal.GlobalShortcuts"
	quickShortcutID = "quick-chat"
	// quickTrigger is the trigger the app prefers (the desktop decides), in the XDG shortcuts
	// format.
	quickTrigger = "CTRL+ALT+space"
	// portalAnswer bounds the wait for a portal request's answer (the user may be asked).
	portalAnswer = 2 * time.Minute
)

// noPortal is what the log says when there is no portal to register the shortcut with.
const noPortal = "no global shortcut (the XDG GlobalShortcuts portal is not available): bind a desktop shortcut to `hologram --quick-chat` (docs/desktop.md)"

// globalShortcut registers the quick-chat shortcut with the portal on the session bus, in the
// background, and calls toggle (from a D-Bus goroutine) on each activation. stop ends it.
func globalShortcut(getenv func(string) string, log *slog.Logger, toggle func()) (stop func()) {
	if getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		log.Info(noPortal, "why", "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runShortcut(ctx, getenv("DBUS_SESSION_BUS_ADDRESS"), log, toggle); err != nil && ctx.Err() == nil {
			log.Info(noPortal, "why", err)
		}
	}()
	return func() { cancel(); <-done }
}

// runShortcut is the shortcut's life on its own bus connection, until ctx ends.
func runShortcut(ctx context.Context, addr string, log *slog.Logger, toggle func()) error {
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return err
	}
	defer conn.Close()
	obj := conn.Object(portal.Dest, portal.Path)
	v, err := obj.GetProperty(portalShortcuts + ".version")
	if err != nil {
		return fmt.Errorf("the portal has no GlobalShortcuts: %w", err)
	}
	sigs := make(chan *dbus.Signal, 32)
	conn.Signal(sigs)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface(portalShortcuts), dbus.WithMatchMember("Activated")); err != nil {
		return err
	}
	res, err := portalCall(ctx, conn, sigs, "CreateSession", func(token string) []any {
		return []any{map[string]dbus.Variant{"handle_token": dbus.MakeVariant(token), "session_handle_token": dbus.MakeVariant(token)}}
	})
	if err != nil {
		return fmt.Errorf("CreateSession: %w", err)
	}
	var session dbus.ObjectPath
	switch h := res["session_handle"].Value().(type) {
	case string:
		session = dbus.ObjectPath(h)
	case dbus.ObjectPath:
		session = h
	}
	if !session.IsValid() {
		return fmt.Errorf("CreateSession answered no session handle (%v)", res)
	}
	defer conn.Object(portal.Dest, session).Call("org.freedesktop.portal.Session.Close", 0)
	shortcuts := []struct {
		ID   string
		Opts map[string]dbus.Variant
	}{{quickShortcutID, map[string]dbus.Variant{
		"description":       dbus.MakeVariant("Toggle the HologramAgent quick chat"),
		"preferred_trigger": dbus.MakeVariant(quickTrigger),
	}}}
	if res, err = portalCall(ctx, conn, sigs, "BindShortcuts", func(token string) []any {
		return []any{session, shortcuts, "", map[string]dbus.Variant{"handle_token": dbus.MakeVariant(token)}}
	}); err != nil {
		return fmt.Errorf("BindShortcuts: %w", err)
	}
	log.Info("global shortcut for the quick chat registered", "portal_version", v.Value(), "shortcuts", res["shortcuts"].Value())
	for {
		select {
		case <-ctx.Done():
			return nil
		case s, ok := <-sigs:
			if !ok {
				return errors.New("the session bus connection closed")
			}
			if s.Name == portalShortcuts+".Activated" && len(s.Body) >= 2 && s.Body[0] == session && s.Body[1] == quickShortcutID {
				toggle()
			}
		}
	}
}

// portalCall calls a GlobalShortcuts method and returns its response's results; a response
// other than success is an error.
func portalCall(ctx context.Context, conn *dbus.Conn, sigs chan *dbus.Signal, method string, args func(token string) []any) (map[string]dbus.Variant, error) {
	res, err := portal.Call(ctx, conn, sigs, portalShortcuts+"."+method, portalAnswer, args)
	if err != nil {
		return nil, err
	}
	if res.Code != portal.Success {
		return nil, fmt.Errorf("the portal answered %d (1: the user cancelled, 2: refused)", res.Code)
	}
	return res.Results, nil
}
