package main

import (
	"fmt"
	"net"
	"strings"
)

// notifier reports homed's state to a service manager by the sd_notify protocol: one datagram
// per message on the unix socket named by $NOTIFY_SOCKET, holding newline-separated
// VARIABLE=VALUE assignments such as READY=1 or STOPPING=1 (systemd's Type=notify). A name
// starting with '@' is a socket in the abstract namespace. The zero notifier (homed not started
// by a service manager that listens) sends nothing. It is safe for concurrent use.
type notifier struct {
	addr *net.UnixAddr
}

// newNotifier returns the notifier for the NOTIFY_SOCKET value socket: none when it is empty,
// an error when it is neither an absolute path nor an abstract name (e.g. systemd's vsock:
// addresses, which homed does not speak).
func newNotifier(socket string) (notifier, error) {
	switch {
	case socket == "":
		return notifier{}, nil
	case strings.HasPrefix(socket, "/"), strings.HasPrefix(socket, "@") && len(socket) > 1:
		// Go's net package turns a leading '@' into the NUL byte that names an abstract socket.
		return notifier{addr: &net.UnixAddr{Name: socket, Net: "unixgram"}}, nil
	default:
		return notifier{}, fmt.Errorf("NOTIFY_SOCKET %q: want an absolute socket path or an abstract name (@name)", socket)
	}
}

// notify sends state as one datagram; without a socket it does nothing.
func (n notifier) notify(state string) error {
	if n.addr == nil {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sd_notify %q: %w", state, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %q: %w", state, err)
	}
	return nil
}
