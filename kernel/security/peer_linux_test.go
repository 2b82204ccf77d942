package security

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spawnOrphan starts sh, which starts `sleep` in the background, prints its pid and exits: the
// sleep is orphaned at once. It returns the sleep's pid once sh has exited.
func spawnOrphan(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	})
	return pid
}

// TestCheckPeer: the kernel (this test process), its parent and an unrelated process may act as
// the owner; a child, a grandchild and an orphan of a child (re-parented to the subreaper) may
// not, and a known plugin is named.
func TestCheckPeer(t *testing.T) {
	self := os.Getpid()
	child := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	var grandchild int
	for deadline := time.Now().Add(5 * time.Second); grandchild == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		raw, _ := os.ReadFile("/proc/" + strconv.Itoa(child.Process.Pid) + "/task/" + strconv.Itoa(child.Process.Pid) + "/children")
		if f := strings.Fields(string(raw)); len(f) > 0 {
			grandchild, _ = strconv.Atoi(f[0])
		}
	}
	if grandchild == 0 {
		t.Fatal("no grandchild")
	}
	plugins := map[int]string{child.Process.Pid: "fs"}

	stop, err := BecomeSubreaper(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	orphan := spawnOrphan(t)
	if ppid, err := parentOf(orphan); err != nil || ppid != self {
		t.Fatalf("the orphan's parent is %d (%v), want the subreaper %d", ppid, err, self)
	}

	for _, tc := range []struct {
		name string
		pid  int
		want string // "" allowed
	}{
		{"the kernel itself", self, ""},
		{"the kernel's parent", os.Getppid(), ""},
		{"init", 1, ""},
		{"a plugin", child.Process.Pid, "is plugin fs"},
		{"a plugin's child", grandchild, "was started by plugin fs"},
		{"an orphan re-parented to the subreaper", orphan, "is a descendant of the kernel"},
		{"a process that does not exist", 1 << 30, "its ancestry is unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPeer(tc.pid, self, plugins)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrPluginPeer) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestReaperCollectsOrphans: an orphan that exits is reaped by the subreaper within two sweeps;
// a child whose waiter waits for it (the plugin host's) is left to that waiter.
func TestReaperCollectsOrphans(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two reaper sweeps")
	}
	stop, err := BecomeSubreaper(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cmd := exec.Command("sh", "-c", "sleep 0.2 & echo $!")
	out, _ := cmd.Output()
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if pid == 0 {
		t.Fatal("no orphan pid")
	}
	mine := exec.Command("sleep", "0.1")
	if err := mine.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- mine.Wait() }() // as the plugin host waits for its plugins
	deadline := time.Now().Add(4 * reapEvery)
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d not reaped after %s", pid, 4*reapEvery)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := <-waited; err != nil {
		t.Fatalf("our own child's Wait: %v (the reaper took it)", err)
	}
}
