package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// What the sandbox sees of the system besides the workspace: the program and library
// directories (read and execute) and the few /etc files the interpreters read.
var (
	systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}
	etcFiles   = []string{"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/ld.so.conf",
		"/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives", "/etc/fonts", "/etc/matplotlibrc", "/etc/mime.types",
		"/etc/locale.alias", "/etc/python3", "/etc/python3.11", "/etc/ssl/certs", "/etc/ca-certificates"}
	// netFiles are added when a session has the network: name resolution.
	netFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf"}
)

// Paths inside bubblewrap.
const (
	boxWork  = "/workspace"
	boxTmp   = "/tmp"
	boxCache = "/cache"
	boxExec  = "/.hologram/" + execArg
)

// exitSetup's message prefix, which tells a setup failure from the code's own exit 125.
const setupPrefix = "code sandbox: "

// box runs code in the sandbox.
type box struct {
	cfg      Config
	self     string // the plugin's binary, re-executed as code-sandbox-exec
	bwrap    string // bubblewrap, "" without it
	landlock bool   // the kernel has Landlock
	pids     string // the pids cgroup (v1) a run gets a directory in; "" when none is writable
	seq      atomic.Int64
	// bwrapBroken says why the bubblewrap found could not make a sandbox ("" when it could,
	// or none was found).
	bwrapBroken string
}

// probeBwrap runs bubblewrap once with the namespaces and mounts of a run.
func (b *box) probeBwrap() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(b.systemArgs(false), "--proc", "/proc", "--dir", "/dev", "--dev-bind", "/dev/null", "/dev/null", "--", "/bin/sh", "-c", ":")
	out, err := exec.CommandContext(ctx, b.bwrap, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s does not start: %v: %s", b.bwrap, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newBox finds bubblewrap (unless cfg says off), Landlock and a writable pids cgroup.
func newBox(cfg Config) (*box, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the plugin's binary: %w", err)
	}
	b := &box{cfg: cfg, self: self}
	switch cfg.Bwrap {
	case "off":
	case "":
		b.bwrap, _ = exec.LookPath("bwrap")
	default:
		b.bwrap = cfg.Bwrap
	}
	if b.bwrap != "" {
		if err := b.probeBwrap(); err != nil { // e.g. a systemd unit with RestrictNamespaces=yes
			b.bwrapBroken, b.bwrap = err.Error(), ""
		}
	}
	if abi, err := llsys.LandlockGetABIVersion(); err == nil && abi >= 1 {
		b.landlock = true
	}
	b.pids = pidsCgroup()
	return b, nil
}

// pidsCgroup returns this process's cgroup v1 pids directory when it may create one below it.
func pidsCgroup() string {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !slices.Contains(strings.Split(parts[1], ","), "pids") {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup/pids", parts[2])
		probe := filepath.Join(dir, fmt.Sprintf("hologram-code-probe-%d", os.Getpid()))
		if os.Mkdir(probe, 0o700) != nil {
			return ""
		}
		os.Remove(probe)
		return dir
	}
	return ""
}

// mode says how runs are confined.
func (b *box) mode() string {
	var layers []string
	if b.bwrap != "" {
		layers = append(layers, "bubblewrap (no network, a pid namespace, only /usr, the workspace and a private /tmp)")
	}
	if b.landlock {
		layers = append(layers, "Landlock")
	}
	if b.bwrapBroken != "" {
		layers = append(layers, "(not bubblewrap: "+b.bwrapBroken+")")
	}
	layers = append(layers, "seccomp", "rlimits")
	if b.pids != "" {
		layers = append(layers, fmt.Sprintf("a pids cgroup (%d processes)", b.cfg.Pids))
	}
	return strings.Join(layers, " + ")
}

// refusal says why code_run must refuse ("" when it may run).
func (b *box) refusal() string {
	if b.bwrap != "" || b.landlock || b.cfg.Unsafe {
		return ""
	}
	return "refused: neither bubblewrap (install the bubblewrap package) nor Landlock (Linux 5.13+) is available, so code " +
		"would run with the owner's files in reach; the owner may accept that with unsafe = true in " + b.cfg.path
}

// workspace is a session's directories: work (the code's, kept) and tmp (emptied before each
// run; the code's file goes there), with the cache all sessions share (config.Cache).
type workspace struct{ root, work, tmp, cache string }

// outcome is what a run did.
type outcome struct {
	stdout, stderr capped
	exit           int    // -1 when killed
	status         string // "exit 0", "timed out after 2s: killed", …
	setup          string // why the sandbox could not start ("" when it did)
	took           time.Duration
}

// capped keeps the first max bytes written to it and counts them all.
type capped struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// run runs code of language l in ws, killed with everything it started at timeout.
func (b *box) run(ctx context.Context, ws workspace, l language, code string, timeout time.Duration, network bool) (*outcome, error) {
	if err := os.RemoveAll(ws.tmp); err != nil {
		return nil, fmt.Errorf("emptying the run's /tmp: %w", err)
	}
	for _, d := range []string{ws.work, ws.tmp, ws.cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	network = network && b.bwrap != ""
	p := places{work: ws.work, tmp: ws.tmp, cache: ws.cache}
	if b.bwrap != "" {
		p = places{work: boxWork, tmp: boxTmp, cache: boxCache}
	}
	if err := os.WriteFile(filepath.Join(ws.tmp, l.file), []byte(code), 0o600); err != nil {
		return nil, err
	}
	s := spec{Argv: l.argv(b.cfg, p, filepath.Join(p.tmp, l.file)), Dir: p.work,
		Env:     []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + p.tmp, "TMPDIR=" + p.tmp, "LANG=C.UTF-8"},
		Exec:    append(append([]string{}, systemDirs...), b.goRoot()...),
		Read:    append(append([]string{}, etcFiles...), "/dev/urandom", "/proc/self"),
		Write:   []string{p.work, p.tmp, p.cache},
		Devices: []string{"/dev/null", "/dev/zero"},
		Network: network, Strict: b.bwrap == "" && !b.cfg.Unsafe,
		Memory: b.cfg.MemoryBytes, FileSize: 1 << 30}
	if l.env != nil {
		s.Env = append(s.Env, l.env(b.cfg, p)...)
	}
	if network {
		s.Read = append(s.Read, netFiles...)
	}
	if b.bwrap != "" {
		s.Read[len(etcFiles)+1] = "/proc" // its own: a pid namespace of the run alone
		if os.Getuid() != 0 {             // counted in bubblewrap's user namespace; root ignores it
			s.Nproc = b.cfg.Pids
		}
	}
	var extra []*os.File
	var cg string
	if b.pids != "" {
		var err error
		cg, err = b.newCgroup()
		if err != nil {
			return nil, err
		}
		defer killCgroup(cg, true)
		f, err := os.OpenFile(filepath.Join(cg, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("the run's pids cgroup: %w", err)
		}
		defer f.Close()
		extra, s.Cgroup = []*os.File{f}, true
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	if b.bwrap != "" {
		cmd = exec.CommandContext(rctx, b.bwrap, append(b.bwrapArgs(ws, network), boxExec, execArg, string(raw))...)
	} else {
		cmd = exec.CommandContext(rctx, b.self, execArg, string(raw))
	}
	o := &outcome{stdout: capped{max: maxOutput}, stderr: capped{max: maxOutput}}
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = []string{}, &o.stdout, &o.stderr, extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if cg != "" {
			killCgroup(cg, false)
		}
		return err
	}
	cmd.WaitDelay = time.Second
	start := time.Now()
	err = cmd.Run()
	o.took = time.Since(start)
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind in its group
	}
	var exitErr *exec.ExitError
	switch {
	case rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		o.exit, o.status = -1, fmt.Sprintf("timed out after %s: killed", timeout)
	case ctx.Err() != nil:
		o.exit, o.status = -1, "cancelled: killed"
	case err == nil:
		o.status = "exit 0"
	case errors.As(err, &exitErr):
		o.exit, o.status = exitErr.ExitCode(), fmt.Sprintf("exit %d", exitErr.ExitCode())
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.exit, o.status = -1, "killed by "+ws.Signal().String()
		}
		if o.exit == exitSetup || o.exit == 1 && b.bwrap != "" && len(o.stdout.buf) == 0 {
			if line, ok := setupLine(o.stderr.buf); ok {
				o.setup = line
			}
		}
	default:
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	return o, nil
}

// setupLine finds code-sandbox-exec's or bubblewrap's own complaint in stderr.
func setupLine(stderr []byte) (string, bool) {
	for _, line := range strings.Split(string(stderr), "\n") {
		if strings.HasPrefix(line, setupPrefix) || strings.HasPrefix(line, "bwrap: ") {
			return line, true
		}
	}
	return "", false
}

// goRoot is the Go installation when it lies outside /usr (bound and allowed on its own).
func (b *box) goRoot() []string {
	if b.cfg.GoRoot == "" || strings.HasPrefix(b.cfg.GoRoot+"/", "/usr/") {
		return nil
	}
	return []string{b.cfg.GoRoot}
}

// bwrapArgs are bubblewrap's options: every namespace unshared (the network too, unless the
// session has it), /usr and its links, the /etc files, three devices, its own /proc, the
// session's directories and this binary.
func (b *box) bwrapArgs(ws workspace, network bool) []string {
	a := b.systemArgs(network)
	a = append(a, "--dir", "/dev")
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/urandom"} {
		a = append(a, "--dev-bind", d, d)
	}
	a = append(a, "--symlink", "/proc/self/fd", "/dev/fd", "--symlink", "/proc/self/fd/0", "/dev/stdin",
		"--symlink", "/proc/self/fd/1", "/dev/stdout", "--symlink", "/proc/self/fd/2", "/dev/stderr",
		"--proc", "/proc", "--bind", ws.tmp, boxTmp, "--bind", ws.work, boxWork, "--bind", ws.cache, boxCache,
		"--ro-bind", b.self, boxExec, "--chdir", boxWork, "--clearenv")
	return a
}

// systemArgs are bubblewrap's namespaces and its system binds: /usr, its links, Go and /etc.
func (b *box) systemArgs(network bool) []string {
	a := []string{"--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"}
	if network {
		a = append(a, "--share-net")
	}
	for _, d := range systemDirs[1:] {
		if target, err := os.Readlink(d); err == nil {
			a = append(a, "--symlink", target, d)
		} else if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			a = append(a, "--ro-bind", d, d)
		}
	}
	for _, d := range b.goRoot() {
		a = append(a, "--ro-bind", d, d)
	}
	files := etcFiles
	if network {
		files = append(append([]string{}, etcFiles...), netFiles...)
	}
	for _, f := range files {
		a = append(a, "--ro-bind-try", f, f)
	}
	return a
}

// newCgroup creates a run's pids cgroup, capped at cfg.Pids.
func (b *box) newCgroup() (string, error) {
	dir := filepath.Join(b.pids, fmt.Sprintf("hologram-code-%d-%d", os.Getpid(), b.seq.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("the run's pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(b.cfg.Pids)), 0o600); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("the run's pids cgroup: %w", err)
	}
	return dir, nil
}

// killCgroup kills every process in the cgroup until none is left (a fork bomb refills it
// while it is read) and, with remove, removes it.
func killCgroup(dir string, remove bool) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		raw, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			break
		}
		pids := strings.Fields(string(raw))
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			if n, err := strconv.Atoi(p); err == nil && n > 0 {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if remove {
		for i := 0; i < 100 && os.Remove(dir) != nil && time.Now().Before(deadline.Add(time.Second)); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
