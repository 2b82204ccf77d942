// Package portal calls the XDG desktop portal (org.freedesktop.portal.Desktop on the session
// bus) the way its documentation asks: a method answers a Request object's path at once, and
// its result comes later in that Request's Response signal, after the desktop may have asked
// the user. The global shortcut of the quick chat and the screenshots use it.
package portal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// The portal's names.
const (
	Dest    = "org.freedesktop.portal.Desktop"
	Path    = dbus.ObjectPath("/org/freedesktop/portal/desktop")
	Request = "org.freedesktop.portal.Request"
)

// Response codes of a Request (the portal's documentation).
const (
	Success   uint32 = 0
	Cancelled uint32 = 1 // the user cancelled the interaction
	Ended     uint32 = 2 // the interaction ended some other way (refused, failed)
)

// Response is a Request's answer: its code and results.
type Response struct {
	Code    uint32
	Results map[string]dbus.Variant
}

// Call calls method (interface.Member) on the portal's desktop object and waits, up to
// timeout, for its Request's Response. args builds the method's arguments from the request's
// handle token (the caller puts it in the options' "handle_token"). sigs must be the channel
// the caller registered with conn.Signal: Call subscribes to the Response before the call, so
// that a quick answer is not missed, and drops the other signals it reads there.
func Call(ctx context.Context, conn *dbus.Conn, sigs <-chan *dbus.Signal, method string, timeout time.Duration, args func(token string) []any) (Response, error) {
	var r [8]byte
	_, _ = rand.Read(r[:])
	token := "hologram" + hex.EncodeToString(r[:])
	names := conn.Names()
	if len(names) == 0 {
		return Response{}, errors.New("no unique name on the bus")
	}
	sender := strings.ReplaceAll(strings.TrimPrefix(names[0], ":"), ".", "_")
	want := dbus.ObjectPath("/org/freedesktop/portal/desktop/request/" + sender + "/" + token)
	match := []dbus.MatchOption{dbus.WithMatchObjectPath(want), dbus.WithMatchInterface(Request), dbus.WithMatchMember("Response")}
	if err := conn.AddMatchSignal(match...); err != nil {
		return Response{}, err
	}
	defer conn.RemoveMatchSignal(match...)
	var handle dbus.ObjectPath
	if err := conn.Object(Dest, Path).CallWithContext(ctx, method, 0, args(token)...).Store(&handle); err != nil {
		return Response{}, err
	}
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = conn.Object(Dest, handle).Call(Request+".Close", 0).Err // ends the desktop's dialog, if any
			return Response{}, ctx.Err()
		case <-wait.C:
			_ = conn.Object(Dest, handle).Call(Request+".Close", 0).Err
			return Response{}, fmt.Errorf("no answer in %v", timeout)
		case s, ok := <-sigs:
			if !ok {
				return Response{}, errors.New("the session bus connection closed")
			}
			if s.Name != Request+".Response" || (s.Path != handle && s.Path != want) || len(s.Body) < 2 {
				continue // not this request's
			}
			code, _ := s.Body[0].(uint32)
			res, _ := s.Body[1].(map[string]dbus.Variant)
			return Response{Code: code, Results: res}, nil
		}
	}
}
