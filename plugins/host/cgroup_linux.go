package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroups puts each plugin process in a cgroup v2 directory of its own, below the host's own
// cgroup, when that hierarchy is writable (root, or a delegated subtree such as a systemd user
// service's), so that stop and crash kill every descendant with cgroup.kill — also one that
// called setsid to leave the process group. Where it is not writable the host logs it once and
// relies on the process group alone.
type cgroups struct {
	off    bool // Options.NoCgroups
	once   sync.Once
	parent string // the host's cgroup directory; "" when unavailable
	seq    atomic.Int64
}

// cgroup is one plugin process's directory; nil means none.
type cgroup struct {
	path string
	fd   int // the open directory, for clone3's CLONE_INTO_CGROUP; -1 once closed
}

// probe finds the host's cgroup v2 directory and checks that a child can be made in it.
func (cs *cgroups) probe(h *Host) {
	if cs.off {
		return
	}
	parent, err := ownCgroup()
	if err == nil && !kernelAtLeast(5, 7) {
		err = errors.New("the kernel is older than 5.7 (no clone3 into a cgroup)")
	}
	if err == nil {
		probe := filepath.Join(parent, fmt.Sprintf("hologram-probe-%d", os.Getpid()))
		if err = os.Mkdir(probe, 0o755); err == nil {
			err = os.Remove(probe)
		}
	}
	if err != nil {
		h.log.Info("no writable cgroup v2: a plugin's descendants that leave its process group (setsid) survive its stop", "err", err)
		return
	}
	cs.parent = parent
	h.log.Debug("plugins run in cgroups of their own", "parent", parent)
	cs.sweep(h)
}

// sweep kills and removes the cgroups a host that is no longer running left behind (killed
// before it could stop its plugins): what a plugin started there dies now.
func (cs *cgroups) sweep(h *Host) {
	dirs, _ := filepath.Glob(filepath.Join(cs.parent, "hologram-*-*"))
	for _, dir := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), "hologram-"), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // not ours to judge, or its host still runs
		}
		if err := (&cgroup{path: dir, fd: -1}).remove(time.Second); err != nil {
			h.log.Warn("removing a cgroup left by an earlier host", "cgroup", dir, "err", err)
		} else {
			h.log.Info("removed a cgroup left by an earlier host", "cgroup", dir)
		}
	}
}

// create makes the cgroup for one start of plugin name; nil when cgroups are unavailable.
func (cs *cgroups) create(h *Host, name string) *cgroup {
	cs.once.Do(func() { cs.probe(h) })
	if cs.parent == "" {
		return nil
	}
	dir := filepath.Join(cs.parent, fmt.Sprintf("hologram-%d-%s-%d", os.Getpid(), name, cs.seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		h.log.Warn("creating the plugin's cgroup", "plugin", name, "err", err)
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		h.log.Warn("opening the plugin's cgroup", "plugin", name, "err", err)
		return nil
	}
	return &cgroup{path: dir, fd: fd}
}

// into makes cmd start inside the cgroup (clone3 with CLONE_INTO_CGROUP, Linux 5.7): the
// process is there from its first instruction, so nothing it forks is ever outside. (Moving it
// after the start would let a shell's first fork escape.)
func (c *cgroup) into(cmd *exec.Cmd) {
	if c == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, c.fd
}

// closeFD closes the directory once the process has started.
func (c *cgroup) closeFD() {
	if c != nil && c.fd >= 0 {
		syscall.Close(c.fd)
		c.fd = -1
	}
}

// kill kills every process in the cgroup: cgroup.kill (Linux 5.14), else SIGKILL to each pid
// cgroup.procs lists.
func (c *cgroup) kill() error {
	if c == nil {
		return nil
	}
	err := os.WriteFile(filepath.Join(c.path, "cgroup.kill"), []byte("1"), 0)
	if err == nil {
		return nil
	}
	raw, rerr := os.ReadFile(filepath.Join(c.path, "cgroup.procs"))
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	for _, f := range strings.Fields(string(raw)) {
		if pid, perr := strconv.Atoi(f); perr == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
}

// remove kills what is left, waits (bounded) until the cgroup is empty and removes it.
func (c *cgroup) remove(wait time.Duration) error {
	if c == nil {
		return nil
	}
	c.closeFD()
	killErr := c.kill()
	deadline := time.Now().Add(wait)
	for {
		err := os.Remove(c.path)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(killErr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ownCgroup returns the directory of this process's cgroup in the cgroup v2 hierarchy.
func ownCgroup() (string, error) {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var rel string
	found := false
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = v, true
		}
	}
	if !found {
		return "", errors.New("this process is in no cgroup v2 hierarchy")
	}
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	return filepath.Join(mnt, filepath.Clean("/"+rel)), nil
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified on a hybrid system).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options… - fstype source superoptions
		pre, post, ok := bytes.Cut(sc.Bytes(), []byte(" - "))
		fields, postFields := strings.Fields(string(pre)), strings.Fields(string(post))
		if ok && len(fields) >= 5 && len(postFields) >= 1 && postFields[0] == "cgroup2" {
			return fields[4], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup2 file system is mounted")
}

// kernelAtLeast reports whether the running kernel is at least major.minor.
func kernelAtLeast(major, minor int) bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	parts := strings.SplitN(b.String(), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return err1 == nil && err2 == nil && (ma > major || ma == major && mi >= minor)
}
