package main

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestInstanceSocket: a command reaches the running instance's handler and "ok" comes back;
// an unknown command, a handler's error and garbage are clear errors; a second listener is
// refused while the first answers; a stale socket file is replaced; closing removes the file.
func TestInstanceSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "hgi") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "run", "app.sock")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var mu sync.Mutex
	var got []string
	in, err := listenInstance(path, func(cmd string) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cmd)
		if len(got) == 3 {
			return errors.New("the window is gone")
		}
		return nil
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket file %v, %v; want mode 0600", st, err)
	}
	for _, tc := range []struct {
		cmd     string
		wantErr string
	}{
		{cmdQuickChat, ""},
		{cmdShow, ""},
		{cmdShow, "the window is gone"},
		{"rm -rf", `unknown command "rm -rf"`},
		{strings.Repeat("x", 300), "want one command line"},
	} {
		running, err := signalRunning(path, tc.cmd)
		if !running || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("signalRunning(%.20q) = %v, %v; want an error with %q", tc.cmd, running, err, tc.wantErr)
		}
	}
	if strings.Join(got, ",") != "quick-chat,show,show" {
		t.Errorf("handled %v", got)
	}
	if _, err := listenInstance(path, func(string) error { return nil }, log); !errors.Is(err, errRunning) {
		t.Errorf("a second listener: %v, want errRunning", err)
	}
	in.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close the socket file: %v", err)
	}
	if running, err := signalRunning(path, cmdShow); running || err != nil {
		t.Errorf("with none listening: %v, %v", running, err)
	}

	// A stale file (a crashed app's) is replaced.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	in, err = listenInstance(path, func(string) error { return nil }, log)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	defer in.Close()
	if running, err := signalRunning(path, cmdQuickChat); !running || err != nil {
		t.Errorf("after replacing the stale socket: %v, %v", running, err)
	}
}

// TestInstanceSocketPath: one socket per data dir (relative or not) or remote, beside the
// kernel's default socket.
func TestInstanceSocketPath(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/me"}[k]
	}
	def := instanceSocket(flags{}, env)
	if filepath.Dir(def) != "/run/user/1000/hologram" || !strings.HasPrefix(filepath.Base(def), "app-") {
		t.Fatalf("default instance socket %s", def)
	}
	if got := instanceSocket(flags{data: "/home/me/.local/share/hologram"}, env); got != def {
		t.Errorf("--data at the default dir: %s, want %s", got, def)
	}
	other := instanceSocket(flags{data: "/srv/h"}, env)
	remote := instanceSocket(flags{remote: "https://box:7777"}, env)
	if other == def || remote == def || other == remote {
		t.Errorf("sockets %s %s %s are not distinct", def, other, remote)
	}
}
