package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"syscall"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
)

// execArg is the first argument that turns the plugin's binary into the sandbox's last step
// (code-sandbox-exec): inside bubblewrap, or straight from the plugin without it, the process
// joins the run's pids cgroup, sets its rlimits, confines itself with Landlock and seccomp,
// then executes the interpreter, which inherits all of it. Go cannot restrict a child between
// fork and exec, hence the re-exec.
const execArg = "code-sandbox-exec"

// spec is what the plugin tells code-sandbox-exec (its second argument, JSON).
type spec struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// The Landlock rules: read, read and execute, read and write, devices.
	Read    []string `json:"read"`
	Exec    []string `json:"exec"`
	Write   []string `json:"write"`
	Devices []string `json:"devices"`
	// Network keeps socket() (bubblewrap shares the host's network); unix sockets stay refused.
	Network bool `json:"network"`
	// Strict makes a kernel without Landlock or seccomp an error (no bubblewrap, not unsafe).
	Strict   bool  `json:"strict"`
	Memory   int64 `json:"memory"`    // RLIMIT_DATA
	FileSize int64 `json:"file_size"` // RLIMIT_FSIZE
	Nproc    int   `json:"nproc"`     // RLIMIT_NPROC (0: not set; root ignores it)
	Cgroup   bool  `json:"cgroup"`    // fd 3 is the run's cgroup.procs
}

// exitSetup is code-sandbox-exec's exit status when the sandbox could not be set up.
const exitSetup = 125

// sandboxExec is code-sandbox-exec: it never returns when the interpreter starts.
func sandboxExec(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "code sandbox: "+format+"\n", a...)
		return exitSetup
	}
	var s spec
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &s) != nil || len(s.Argv) == 0 {
		return fail("usage: %s <spec JSON>", execArg)
	}
	if s.Cgroup {
		f := os.NewFile(3, "cgroup.procs")
		if _, err := f.WriteString("0"); err != nil {
			return fail("joining the run's pids cgroup: %v", err)
		}
		f.Close()
	}
	limits := []struct {
		res int
		v   int64
	}{{syscall.RLIMIT_DATA, s.Memory}, {syscall.RLIMIT_FSIZE, s.FileSize}, {syscall.RLIMIT_CORE, 0}, {rlimitNproc, int64(s.Nproc)}}
	for _, l := range limits {
		if l.v == 0 && l.res != syscall.RLIMIT_CORE {
			continue
		}
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: uint64(l.v), Max: uint64(l.v)}); err != nil {
			return fail("rlimit %d: %v", l.res, err)
		}
	}
	none := func(string) string { return "" }
	log := slog.New(slog.DiscardHandler)
	st, err := sandbox.Landlock(log, none, sandbox.Permissions{Read: s.Read, Exec: s.Exec, Write: s.Write, Devices: s.Devices, Network: s.Network, Scoped: true})
	if err != nil {
		return fail("%v", err)
	}
	if st != sandbox.Confined && s.Strict {
		return fail("this kernel has no Landlock and bubblewrap is not used: refusing to run unconfined")
	}
	// With the network (bubblewrap shares the host's), socket() keeps every family but AF_UNIX:
	// the host's abstract unix sockets (a D-Bus bus, X11) are reachable from its network namespace.
	deny := append(slices.Clone(sandbox.Denied), sandbox.IOUring...)
	if !s.Network {
		deny = append(slices.Clone(sandbox.Denied), sandbox.NoSockets...)
	}
	if ok, err := sandbox.Seccomp(log, none, deny, s.Network); err != nil {
		return fail("%v", err)
	} else if !ok && s.Strict {
		return fail("this kernel has no seccomp filters and bubblewrap is not used: refusing to run with sockets open")
	}
	if err := os.Chdir(s.Dir); err != nil {
		return fail("%v", err)
	}
	err = syscall.Exec(s.Argv[0], s.Argv, s.Env)
	return fail("executing %s: %v", s.Argv[0], err)
}

// rlimitNproc is RLIMIT_NPROC (not in package syscall).
const rlimitNproc = 6
