package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// The quick chat's global shortcut, through the XDG desktop portal's GlobalShortcuts interface
// (GNOME 48+, KDE Plasma 5.27+): a session is created, the "quick-chat" shortcut bound (the
// desktop may ask the user to confirm or pick the keys), and each Activated signal toggles the
// quick chat. Without the portal the app logs once how to bind `hologram --quick-chat` instead.

const (
	portalDest      = "org.freedesktop.portal.Desktop"
	portalPath      = dbus.ObjectPath("/org/freedesktop/portal/desktop")
	portalShortcuts = "org.freedesktop.portal.GlobalShortcuts"
	portalRequest   = "org.freedesktop.portal.Request"
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
	obj := conn.Object(portalDest, portalPath)
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
	defer conn.Object(portalDest, session).Call("org.freedesktop.portal.Session.Close", 0)
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

// portalCall calls a portal method that answers through a Request object's Response signal
// and returns the response's results. args builds the arguments from the request's token.
func portalCall(ctx context.Context, conn *dbus.Conn, sigs chan *dbus.Signal, method string, args func(token string) []any) (map[string]dbus.Variant, error) {
	var r [8]byte
	_, _ = rand.Read(r[:])
	token := "hologram" + hex.EncodeToString(r[:])
	names := conn.Names()
	if len(names) == 0 {
		return nil, errors.New("no unique name on the bus")
	}
	sender := strings.ReplaceAll(strings.TrimPrefix(names[0], ":"), ".", "_")
	want := dbus.ObjectPath("/org/freedesktop/portal/desktop/request/" + sender + "/" + token)
	// Subscribed before the call, so that a quick answer is not missed.
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(want), dbus.WithMatchInterface(portalRequest), dbus.WithMatchMember("Response")); err != nil {
		return nil, err
	}
	defer conn.RemoveMatchSignal(dbus.WithMatchObjectPath(want), dbus.WithMatchInterface(portalRequest), dbus.WithMatchMember("Response"))
	var handle dbus.ObjectPath
	if err := conn.Object(portalDest, portalPath).CallWithContext(ctx, portalShortcuts+"."+method, 0, args(token)...).Store(&handle); err != nil {
		return nil, err
	}
	timeout := time.NewTimer(portalAnswer)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			return nil, fmt.Errorf("no answer in %v", portalAnswer)
		case s := <-sigs:
			if s.Name != portalRequest+".Response" || (s.Path != handle && s.Path != want) || len(s.Body) < 2 {
				continue // not this request's (an Activated one is of no use before the bind)
			}
			code, _ := s.Body[0].(uint32)
			res, _ := s.Body[1].(map[string]dbus.Variant)
			if code != 0 {
				return nil, fmt.Errorf("the portal answered %d (1: the user cancelled, 2: refused)", code)
			}
			return res, nil
		}
	}
}
