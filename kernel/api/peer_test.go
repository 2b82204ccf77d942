package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// peerHelperEnv makes the test binary, re-executed, a client of the socket it names: once a line
// arrives on its stdin, it prints the status and body of GET /api/v1/status, twice over one
// connection (a verdict is kept per connection: the second request must meet the same), and exits.
const peerHelperEnv = "HOLOGRAM_API_PEER_HELPER"

func TestMain(m *testing.M) {
	if sock := os.Getenv(peerHelperEnv); sock != "" {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
		for range 2 {
			resp, err := hc.Get("http://hologram/api/v1/status")
			if err != nil {
				fmt.Println("0", err)
				os.Exit(0)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPluginPeersRefused: a process this one (the kernel) started is refused on the socket
// with 403 naming the plugin whose pid it has; this process itself is served.
func TestPluginPeersRefused(t *testing.T) {
	var pluginPID atomic.Int64
	b := &fakeBackend{plugins: func(context.Context) ([]client.Plugin, error) {
		return []client.Plugin{{Name: "fs", PID: int(pluginPID.Load())}, {Name: "stopped"}}, nil
	}}
	sv := serveUnix(t, New(b, Options{}), "")
	if resp, body := sv.do(t, "GET", "/api/v1/status", "", nil); resp.StatusCode != 200 {
		t.Fatalf("the kernel's own request: %d %s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		name   string
		plugin bool // the child's pid is listed as plugin fs
		want   string
	}{
		{"a plugin", true, "pid %d is plugin fs"},
		{"a descendant no plugin owns", false, "pid %d is a descendant of the kernel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), peerHelperEnv+"="+sv.path)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.plugin {
				pluginPID.Store(int64(cmd.Process.Pid))
			} else {
				pluginPID.Store(0)
			}
			if _, err := io.WriteString(in, "go\n"); err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(out)
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if len(lines) != 2 {
				t.Fatalf("the child printed %q, want two responses", raw)
			}
			for i, got := range lines {
				if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "plugins are never the owner") ||
					!strings.Contains(got, fmt.Sprintf(tc.want, cmd.Process.Pid)) {
					t.Fatalf("request %d: the child got %q", i+1, got)
				}
			}
		})
	}
}
