package security

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Plugins are never the owner (ARCHITECTURE.md §5): the kernel refuses API requests from its
// plugin processes and every process they start. Two facts make that decidable from a unix
// socket peer's pid alone:
//
//   - the kernel is a child subreaper ([BecomeSubreaper]): a process that a plugin starts and
//     then leaves (a double fork, a daemon) is re-parented to the kernel, not to init, so it
//     stays in the kernel's process tree whatever it does;
//   - the kernel starts no process but its plugins: every descendant of the kernel's process is
//     a plugin or was started by one.
//
// So a peer is a plugin's when the kernel's pid is among its ancestors ([PeerAncestry]). A
// process outside the tree (the owner's waiter, GUI, a script) never is. A plugin that has
// another service start a process for it (systemd-run, a D-Bus activation) escapes the tree:
// that is what the plugin sandbox (Landlock, seccomp, bubblewrap) has to close.

// ErrPluginPeer is wrapped by the error of [CheckPeer] for a plugin's process.
var ErrPluginPeer = errors.New("plugin process")

// PeerAncestry returns the pids from pid's parent up to init (pid 1), read from
// /proc/<pid>/stat. When an ancestor exits while the chain is read, its children have been
// re-parented (to the nearest subreaper or init) and the chain is read again.
func PeerAncestry(pid int) ([]int, error) {
	var lastErr error
	for range 5 {
		chain, err := ancestry(pid)
		if err == nil {
			return chain, nil
		}
		lastErr = err
		if _, err := parentOf(pid); err != nil {
			return nil, err // the peer itself is gone
		}
	}
	return nil, lastErr
}

func ancestry(pid int) ([]int, error) {
	var chain []int
	seen := map[int]bool{pid: true}
	for cur := pid; cur > 1; {
		ppid, err := parentOf(cur)
		if err != nil {
			return nil, err
		}
		if ppid <= 0 || seen[ppid] {
			break
		}
		seen[ppid] = true
		chain = append(chain, ppid)
		cur = ppid
	}
	return chain, nil
}

// parentOf reads the parent pid of pid from /proc/<pid>/stat. The command name (field 2) may
// hold spaces and parentheses, so the fields are read after its last ')'.
func parentOf(pid int) (int, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("process %d: unreadable /proc stat %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("process %d: unreadable /proc stat %q", pid, s)
	}
	return strconv.Atoi(f[1])
}

// CheckPeer decides whether the process pid may act as the owner on the kernel's unix socket:
// an error wrapping [ErrPluginPeer] when the kernel process self is among its ancestors (a
// plugin, or a process a plugin started), naming the plugin when one of plugins (pid → name) is
// in its ancestry too. The kernel itself (pid == self, an in-process client) may.
func CheckPeer(pid, self int, plugins map[int]string) error {
	if pid == self {
		return nil
	}
	if name, ok := plugins[pid]; ok {
		return fmt.Errorf("%w: pid %d is plugin %s", ErrPluginPeer, pid, name)
	}
	chain, err := PeerAncestry(pid)
	if err != nil {
		return fmt.Errorf("%w: pid %d: its ancestry is unknown (%v)", ErrPluginPeer, pid, err)
	}
	for _, a := range chain {
		if name, ok := plugins[a]; ok {
			return fmt.Errorf("%w: pid %d was started by plugin %s (pid %d)", ErrPluginPeer, pid, name, a)
		}
		if a == self {
			return fmt.Errorf("%w: pid %d is a descendant of the kernel (pid %d): a plugin or a process a plugin started", ErrPluginPeer, pid, self)
		}
	}
	return nil
}
