package config

import (
	"net"
	"strings"
	"time"
)

// mpdProbe bounds the dial of [MusicBackend]'s look for mpd.
const mpdProbe = 300 * time.Millisecond

// MusicBackend reports whether the music plugin has something to control: a session bus
// (DBUS_SESSION_BUS_ADDRESS), where MPRIS players appear and leave while it runs, or an mpd
// that answers where mpc would look (MPD_HOST, "password@host" or a socket path, default
// localhost; MPD_PORT, default 6600).
func MusicBackend(getenv func(string) string) bool {
	if getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return true
	}
	host, port := getenv("MPD_HOST"), getenv("MPD_PORT")
	if i := strings.LastIndex(host, "@"); i > 0 {
		host = host[i+1:]
	}
	network, addr := "tcp", ""
	switch {
	case strings.HasPrefix(host, "/"):
		network, addr = "unix", host
	case strings.HasPrefix(host, "@"):
		network, addr = "unix", "\x00"+host[1:]
	default:
		if host == "" {
			host = "localhost"
		}
		if port == "" {
			port = "6600"
		}
		addr = net.JoinHostPort(host, port)
	}
	c, err := net.DialTimeout(network, addr, mpdProbe)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
