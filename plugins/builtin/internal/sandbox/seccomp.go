package sandbox

import (
	"fmt"
	"log/slog"

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

// applySeccomp loads the deny-list filter on every thread of the process (no_new_privs set).
func applySeccomp(log *slog.Logger, getenv func(string) string) (bool, error) {
	if getenv(SeccompEnv) == "off" {
		log.Warn("seccomp switched off (" + SeccompEnv + "=off): no system call is filtered")
		return false, nil
	}
	if !seccomp.Supported() {
		log.Warn("this kernel has no seccomp filters: no system call is filtered")
		return false, nil
	}
	err := seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: Denied}},
		},
	})
	if err != nil {
		return false, fmt.Errorf("seccomp: %w", err)
	}
	return true, nil
}
