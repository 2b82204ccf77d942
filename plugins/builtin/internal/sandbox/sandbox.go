// Package sandbox confines a built-in plugin's own process with Landlock (Linux 5.13+): after
// it has read its configuration, a plugin may read only the fixed system list ([System]), its
// own directory and the paths it declares, write only the paths it declares, and run programs
// only from the directories it declares. Everything else on the file system — the owner's key
// file (~/.config/hologram/key), the kernel's database, the rest of $HOME — is refused with
// EACCES, whatever bug or hostile input the plugin meets.
//
// A kernel without Landlock (or HOLOGRAM_LANDLOCK=off, the switch tests use) logs it once and
// runs the plugin as before. A plugin that does not declare the network cannot connect or bind
// TCP sockets (Landlock ABI 4); the ones that fetch keep it (the web plugin's guard filters
// addresses). A seccomp filter ([Denied]) refuses the system calls no plugin needs.
//
// It is applied by each plugin's main (plugins/builtin/<name>), never by plugins/sdk, which
// third-party plugins import and which stays standard library only.
package sandbox

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Env is the switch: HOLOGRAM_LANDLOCK=off runs the plugin unconfined (logged).
const Env = "HOLOGRAM_LANDLOCK"

// System is what every built-in plugin may read: TLS roots, name resolution, time zones.
var System = []string{
	"/etc/ssl", "/etc/ca-certificates", "/usr/share/ca-certificates", "/etc/pki",
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf",
	"/etc/localtime", "/usr/share/zoneinfo",
}

// Commands is what a plugin that runs the system's programs (shell, web's chromium) adds to
// [System]: the program and library directories (read and execute), the files the C library
// and the usual tools read at start, and the harmless devices. It never holds /etc as a whole
// (/etc/shadow), /home, /root or /var.
var Commands = Permissions{
	Exec: []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt"},
	Read: []string{"/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/alternatives", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale", "/etc/mime.types",
		"/etc/fonts", "/etc/chromium", "/etc/chromium.d", "/etc/magic", "/etc/inputrc", "/etc/terminfo",
		"/dev/urandom", "/dev/random", "/sys/devices/system/cpu", "/proc/self"},
	Devices: []string{"/dev/null", "/dev/zero", "/dev/full"},
}

// Permissions are the paths a plugin needs besides [System] and its own directory.
type Permissions struct {
	Read    []string // readable files and directories
	Write   []string // readable and writable directories (created before Apply)
	Exec    []string // directories whose programs may be run (and read)
	Devices []string // device files it may read and write (/dev/null)
	// Network keeps TCP connect and bind allowed; without it they are refused with EACCES
	// (Landlock ABI 4, Linux 6.7+; an older kernel leaves the network open).
	Network bool
	// Scoped keeps signals and abstract unix sockets inside the process and what it starts
	// (Landlock ABI 6, Linux 6.12+; ignored before): the code plugin's sandbox without a pid
	// namespace cannot kill the kernel.
	Scoped bool
}

// With returns p with q's paths added (and the network when either has it).
func (p Permissions) With(q Permissions) Permissions {
	return Permissions{
		Read:    append(slices.Clone(p.Read), q.Read...),
		Write:   append(slices.Clone(p.Write), q.Write...),
		Exec:    append(slices.Clone(p.Exec), q.Exec...),
		Devices: append(slices.Clone(p.Devices), q.Devices...),
		Network: p.Network || q.Network,
		Scoped:  p.Scoped || q.Scoped,
	}
}

// Status says what Apply did.
type Status string

const (
	Confined    Status = "confined"
	Unavailable Status = "unavailable" // the kernel has no Landlock
	Off         Status = "off"         // HOLOGRAM_LANDLOCK=off
)

// Apply confines the calling process (every thread) to p and what its manifest declares
// ([Declared]) with Landlock, then loads the seccomp
// filter that refuses [Denied] (unless HOLOGRAM_SECCOMP=off). It returns Unavailable or Off,
// logged at warn, when Landlock confines nothing; an error only when Landlock or seccomp is
// there and refused the rules.
func Apply(log *slog.Logger, getenv func(string) string, p Permissions) (Status, error) {
	declared, err := Declared(getenv)
	if err != nil {
		return "", err
	}
	st, err := applyLandlock(log, getenv, declared.With(p))
	if err != nil {
		return st, err
	}
	if _, err := applySeccomp(log, getenv); err != nil {
		return "", err
	}
	return st, nil
}

// Landlock confines the calling process (every thread) to [System], its executable's
// directory and p with Landlock alone, without the manifest's paths or the seccomp filter: for
// a process that sets up its own confinement (the code plugin's sandbox). It returns like
// [Apply].
func Landlock(log *slog.Logger, getenv func(string) string, p Permissions) (Status, error) {
	return applyLandlock(log, getenv, p)
}

// applyLandlock is Apply's Landlock part.
func applyLandlock(log *slog.Logger, getenv func(string) string, p Permissions) (Status, error) {
	if getenv(Env) == "off" {
		log.Warn("Landlock switched off (" + Env + "=off): the plugin runs unconfined")
		return Off, nil
	}
	if abi, err := llsys.LandlockGetABIVersion(); err != nil || abi < 1 {
		log.Warn("this kernel has no Landlock: the plugin runs unconfined", "err", err)
		return Unavailable, nil
	}
	var rules []landlock.Rule
	ro := append(slices.Clone(System), p.Read...)
	if exe, err := os.Executable(); err == nil {
		ro = append(ro, filepath.Dir(exe))
	}
	for _, path := range ro {
		if path == "/proc/self" { // the rule is on what it resolves to: this process's own
			path = fmt.Sprintf("/proc/%d", os.Getpid())
		}
		rules = append(rules, readRule(path))
	}
	for _, dir := range p.Write {
		rules = append(rules, landlock.RWDirs(dir).IgnoreIfMissing())
	}
	for _, dir := range p.Exec {
		rules = append(rules, landlock.RODirs(dir).IgnoreIfMissing()) // read includes execute for dirs
	}
	for _, dev := range p.Devices {
		rules = append(rules, landlock.RWFiles(dev).IgnoreIfMissing())
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return "", fmt.Errorf("landlock: %w", err)
	}
	if !p.Network {
		if err := landlock.V7.BestEffort().RestrictNet(); err != nil {
			return "", fmt.Errorf("landlock (network): %w", err)
		}
	}
	if p.Scoped {
		if err := landlock.V7.BestEffort().RestrictScoped(); err != nil {
			return "", fmt.Errorf("landlock (scopes): %w", err)
		}
	}
	log.Debug("confined by Landlock", "read", ro, "write", p.Write, "exec", p.Exec, "devices", p.Devices, "network", p.Network)
	return Confined, nil
}

// readRule is a read-only rule for a file or a directory.
func readRule(path string) landlock.Rule {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		return landlock.ROFiles(path).IgnoreIfMissing()
	}
	return landlock.RODirs(path).IgnoreIfMissing()
}

// Declared are the permissions of the plugin's manifest as the host passes them, expanded
// ($HOLOGRAM_PERMISSIONS, protocol.EnvPermissions): its paths by access, and the network. None
// when the plugin runs without the host; a value that does not parse is an error.
func Declared(getenv func(string) string) (Permissions, error) {
	raw := getenv(protocol.EnvPermissions)
	if raw == "" {
		return Permissions{}, nil
	}
	var m protocol.Permissions
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return Permissions{}, fmt.Errorf("%s from the host: %w", protocol.EnvPermissions, err)
	}
	p := Permissions{Network: m.Network}
	for _, pp := range m.Paths {
		if !filepath.IsAbs(pp.Path) {
			return Permissions{}, fmt.Errorf("%s from the host: path %q is not expanded", protocol.EnvPermissions, pp.Path)
		}
		switch pp.Access {
		case protocol.AccessRead:
			p.Read = append(p.Read, pp.Path)
		case protocol.AccessWrite:
			p.Write = append(p.Write, pp.Path)
		case protocol.AccessExec:
			p.Exec = append(p.Exec, pp.Path)
		}
	}
	return p, nil
}
