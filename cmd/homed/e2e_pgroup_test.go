//go:build integration

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/kerneltest"
)

// alive reports whether pid names a process that has not exited (a zombie has exited).
func alive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// readPids reads the pids a plugin script appended to file, one a line.
func readPids(t *testing.T, file string, want int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw, _ := os.ReadFile(file)
		var pids []int
		for _, f := range strings.Fields(string(raw)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		if len(pids) >= want {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d pids, want %d", file, len(pids), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits up to d for every pid to have exited.
func waitGone(t *testing.T, what string, d time.Duration, pids []int) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("%s: processes %v still running after %s", what, left, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A plugin whose children outlive it (a wrapper that backgrounds servers and dies, or one that
// keeps running beside them) never wedges the host: each plugin has its own process group, and
// stop and crash kill the whole group.
func TestPluginChildrenDieWithThePlugin(t *testing.T) {
	everything := kerneltest.NPMPeer(t, "@modelcontextprotocol/server-everything")
	e := newEnv(t)
	h := e.start()
	dir := filepath.Join(e.root, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The children hold the plugin's stdin, stdout and stderr, and ignore SIGTERM.
	forkPids := filepath.Join(dir, "fork.pids")
	forker := script("forker.sh", `trap '' TERM
sleep 300 & echo $! >> `+forkPids+`
sleep 300 & echo $! >> `+forkPids+`
exit 3`)
	keepPids := filepath.Join(dir, "keep.pids")
	keeper := script("keeper.sh", `sleep 300 & echo $! >> `+keepPids+`
echo $$ >> `+keepPids+`
exec node '`+everything+`' stdio`)

	add := func(name, command string) (string, time.Duration) {
		t.Helper()
		t0 := time.Now()
		out, errOut, code := e.waiter("", nil, "plugin", "add", name, "--command", command)
		took := time.Since(t0)
		if code != 0 {
			t.Fatalf("plugin add %s: exit %d %s%s", name, code, out, errOut)
		}
		return out, took
	}

	out, took := add("forker", forker)
	t.Logf("plugin add of the forking plugin: %s (%s)", took.Round(time.Millisecond), strings.TrimSpace(out))
	if took > 5*time.Second {
		t.Fatalf("plugin add of the forking plugin took %s", took)
	}
	// Every start of the forking plugin (the first and the restarts) leaves two children behind
	// for an instant: each must be killed with it.
	waitGone(t, "the forking plugin's children", 5*time.Second, readPids(t, forkPids, 2))

	out, took = add("keeper", keeper)
	t.Logf("plugin add of the next plugin: %s (%s)", took.Round(time.Millisecond), strings.TrimSpace(out))
	if took > 5*time.Second {
		t.Fatalf("plugin add after the forking plugin took %s", took)
	}
	p := e.waitPlugin("keeper", "running", func(p client.Plugin) bool { return p.State == "running" })
	pids := readPids(t, keepPids, 2) // the background sleep, then the plugin (exec'd into node)
	if p.PID != pids[1] {
		t.Fatalf("plugin pid %d, the script logged %v", p.PID, pids)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("pid %d of the running plugin is gone", pid)
		}
	}
	// Stop through the API: the group goes with the plugin.
	if out, errOut, code := e.waiter("", nil, "plugin", "disable", "keeper"); code != 0 {
		t.Fatalf("plugin disable: %d %s%s", code, out, errOut)
	}
	waitGone(t, "the disabled plugin and its child", 5*time.Second, pids)
	if out, errOut, code := e.waiter("", nil, "plugin", "enable", "keeper"); code != 0 {
		t.Fatalf("plugin enable: %d %s%s", code, out, errOut)
	}
	e.waitPlugin("keeper", "running again", func(p client.Plugin) bool { return p.State == "running" })
	pids = readPids(t, keepPids, 4)[2:]

	// SIGTERM to homed: out in ≤ 5 s, and nothing of the plugins left.
	t0 := time.Now()
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("homed still running 5 s after SIGTERM:\n%s", h.stderr)
	}
	t.Logf("homed exited %s after SIGTERM", time.Since(t0).Round(time.Millisecond))
	if h.err != nil {
		t.Fatalf("homed exited with %v:\n%s", h.err, h.stderr)
	}
	waitGone(t, "the plugin and its child after homed's exit", time.Second, pids)
}
