//go:build integration

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notifyListener is the service manager's end of the sd_notify protocol: a unixgram socket
// whose datagrams the test reads.
type notifyListener struct {
	t    *testing.T
	conn *net.UnixConn
}

func listenNotify(t *testing.T, name string) *notifyListener {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen %q: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return &notifyListener{t: t, conn: c}
}

// next returns the next datagram; the deadline only guards against a homed that never sends.
func (l *notifyListener) next(h *homed) string {
	l.t.Helper()
	buf := make([]byte, 4096)
	l.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	n, err := l.conn.Read(buf)
	if err != nil {
		l.t.Fatalf("no sd_notify datagram: %v\nhomed log:\n%s", err, h.stderr)
	}
	return string(buf[:n])
}

func TestNotifyReadyAndStopping(t *testing.T) {
	for _, tc := range []struct {
		name   string
		socket func(t *testing.T) string
	}{
		{"path", func(t *testing.T) string { return filepath.Join(t.TempDir(), "notify.sock") }},
		{"abstract", func(t *testing.T) string {
			return fmt.Sprintf("@hologram-notify-test-%d-%d", os.Getpid(), time.Now().UnixNano())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			socket := tc.socket(t)
			l := listenNotify(t, socket)
			t.Setenv("NOTIFY_SOCKET", socket)
			h, _ := e.spawn()

			ready := l.next(h)
			if lines := strings.Split(ready, "\n"); lines[0] != "READY=1" {
				t.Fatalf("first notification = %q, want READY=1 first", ready)
			}
			if !strings.Contains(ready, "STATUS=serving on "+e.sock) {
				t.Errorf("READY notification %q lacks the socket's STATUS", ready)
			}
			// READY=1 means the API serves: a health request answers now, with no retry.
			resp, err := e.unixHTTP().Get("http://hologram/api/v1/health")
			if err != nil {
				t.Fatalf("health right after READY=1: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("health right after READY=1: %d %s", resp.StatusCode, body)
			}

			h.cmd.Process.Signal(syscall.SIGTERM)
			if got := l.next(h); got != "STOPPING=1" {
				t.Fatalf("notification after SIGTERM = %q, want STOPPING=1", got)
			}
			select {
			case <-h.done:
			case <-time.After(60 * time.Second):
				t.Fatalf("homed did not exit after STOPPING=1:\n%s", h.stderr)
			}
			if h.err != nil {
				t.Fatalf("homed exited with %v:\n%s", h.err, h.stderr)
			}
		})
	}
}

func TestNotifyWithoutListenerIsLoggedNotFatal(t *testing.T) {
	e := newEnv(t)
	// A socket path nobody listens on: homed serves anyway and says why the manager heard nothing.
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "nobody.sock"))
	h := e.start()
	if !strings.Contains(h.stderr.String(), "service manager notification") {
		t.Errorf("homed did not log the failed READY=1:\n%s", h.stderr)
	}
	h.stop(t)
}

func TestNotifyBadSocketIsAClearError(t *testing.T) {
	for _, socket := range []string{"relative/notify.sock", "vsock:2:1", "@"} {
		t.Run(socket, func(t *testing.T) {
			e := newEnv(t)
			cmd := exec.Command(filepath.Join(binDir, "homed"), "--data", e.data, "--socket", e.sock)
			cmd.Env = e.environ("NOTIFY_SOCKET=" + socket)
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Fatalf("exit %d (%v), want 2:\n%s", code, err, out)
			}
			want := fmt.Sprintf("homed: NOTIFY_SOCKET %q: want an absolute socket path or an abstract name (@name)", socket)
			if !strings.Contains(string(out), want) {
				t.Errorf("output %q lacks %q", out, want)
			}
		})
	}
}
