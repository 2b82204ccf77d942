// Package sandbox confines a built-in plugin's own process with Landlock (Linux 5.13+): after
// it has read its configuration, a plugin may read only the fixed system list ([System]), its
// own directory and the paths it declares, write only the paths it declares, and run programs
// only from the directories it declares. Everything else on the file system — the owner's key
// file (~/.config/hologram/key), the kernel's database, the rest of $HOME — is refused with
// EACCES, whatever bug or hostile input the plugin meets.
//
// A kernel without Landlock (or HOLOGRAM_LANDLOCK=off, the switch tests use) logs it once and
// runs the plugin as before. Network access is not restricted here (the plugins that fetch need
// it; the web plugin's guard filters addresses).
//
// It is applied by each plugin's main (plugins/builtin/<name>), never by plugins/sdk, which
// third-party plugins import and which stays standard library only.
package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

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

// Permissions are the paths a plugin needs besides [System] and its own directory.
type Permissions struct {
	Read  []string // readable files and directories
	Write []string // readable and writable directories (created before Apply)
	Exec  []string // directories whose programs may be run (and read)
}

// Status says what Apply did.
type Status string

const (
	Confined    Status = "confined"
	Unavailable Status = "unavailable" // the kernel has no Landlock
	Off         Status = "off"         // HOLOGRAM_LANDLOCK=off
)

// Apply confines the calling process (every thread) to p. It returns Unavailable or Off, logged
// at warn, when it confines nothing; an error only when Landlock is there and refused the rules.
func Apply(log *slog.Logger, getenv func(string) string, p Permissions) (Status, error) {
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
		rules = append(rules, readRule(path))
	}
	for _, dir := range p.Write {
		rules = append(rules, landlock.RWDirs(dir).IgnoreIfMissing())
	}
	for _, dir := range p.Exec {
		rules = append(rules, landlock.RODirs(dir).IgnoreIfMissing()) // read includes execute for dirs
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return "", fmt.Errorf("landlock: %w", err)
	}
	log.Debug("confined by Landlock", "read", ro, "write", p.Write, "exec", p.Exec)
	return Confined, nil
}

// readRule is a read-only rule for a file or a directory.
func readRule(path string) landlock.Rule {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		return landlock.ROFiles(path).IgnoreIfMissing()
	}
	return landlock.RODirs(path).IgnoreIfMissing()
}
