package config

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestMusicBackend: a session bus or an mpd that answers (TCP, a socket path, with or without
// a password) starts the music plugin; nothing listening does not.
func TestMusicBackend(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	sock := filepath.Join(t.TempDir(), "mpd.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer uln.Close()
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
	free.Close()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"session bus", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "MPD_PORT": closed}, true},
		{"mpd on TCP", map[string]string{"MPD_HOST": "127.0.0.1", "MPD_PORT": port}, true},
		{"mpd with a password", map[string]string{"MPD_HOST": "pw@127.0.0.1", "MPD_PORT": port}, true},
		{"mpd on a socket", map[string]string{"MPD_HOST": sock}, true},
		{"nothing", map[string]string{"MPD_HOST": "127.0.0.1", "MPD_PORT": closed}, false},
		{"a socket path that is not there", map[string]string{"MPD_HOST": sock + ".gone"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MusicBackend(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Fatalf("MusicBackend = %v, want %v", got, tc.want)
			}
		})
	}
	_ = os.Remove(sock)
}
