package sandbox

import (
	"fmt"
	"log/slog"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
)

// SeccompEnv is seccomp's own switch: HOLOGRAM_SECCOMP=off loads no filter (logged).
const SeccompEnv = "HOLOGRAM_SECCOMP"

// Denied are the system calls no built-in plugin (nor a program it runs: the filter is
// inherited) has a use for and an attacker would: debugging other processes, mounting, loading
// kernel code, new namespaces, kernel keyrings, raw handles. Each fails with EPERM.
var Denied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount", "move_mount", "open_tree",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf", "perf_event_open",
	"keyctl", "add_key", "request_key",
	"unshare", "setns",
	"swapon", "swapoff", "reboot",
	"open_by_handle_at", "userfaultfd",
}

// NoSockets are the calls a program kept off the network is refused on top of [Denied] (the
// code plugin's sandbox without a network namespace): socket() of every family, AF_UNIX
// included — a unix socket reaches the kernel's API and the D-Bus session bus, which Landlock
// (ABI < 6) does not guard — and io_uring, which can open sockets without socket().
// socketpair stays: its two ends reach nothing but each other.
var NoSockets = append([]string{"socket"}, IOUring...)

// IOUring are io_uring's calls, refused to sandboxed code in every case: its operations (a
// socket, an open) bypass the seccomp filter of the calls they stand for.
var IOUring = []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}

// applySeccomp loads the deny-list filter on every thread of the process (no_new_privs set).
func applySeccomp(log *slog.Logger, getenv func(string) string) (bool, error) {
	return Seccomp(log, getenv, Denied, false)
}

// Seccomp loads a filter refusing the calls deny (with EPERM) on every thread of the process,
// no_new_privs set, and with noUnix socket(AF_UNIX, …) too (a program that keeps the network
// but must not reach the host's unix sockets); a program it executes inherits it. It reports
// false, logged, when HOLOGRAM_SECCOMP=off or the kernel has no seccomp filters.
func Seccomp(log *slog.Logger, getenv func(string) string, deny []string, noUnix bool) (bool, error) {
	if getenv(SeccompEnv) == "off" {
		log.Warn("seccomp switched off (" + SeccompEnv + "=off): no system call is filtered")
		return false, nil
	}
	if !seccomp.Supported() {
		log.Warn("this kernel has no seccomp filters: no system call is filtered")
		return false, nil
	}
	group := seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: deny}
	if noUnix {
		group.NamesWithCondtions = []seccomp.NameWithConditions{{Name: "socket",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: syscall.AF_UNIX}}}}
	}
	err := seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{group},
		},
	})
	if err != nil {
		return false, fmt.Errorf("seccomp: %w", err)
	}
	return true, nil
}
