// Package sandboxtest checks a built-in plugin's Landlock confinement in a real process: the
// test binary re-runs itself as a child that applies the plugin's own confinement (the code its
// main runs) under a temporary home, then tries what a compromised plugin would. Import it from
// tests only.
package sandboxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
	"github.com/hologramagent/hologram/plugins/protocol"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

const childEnv = "HOLOGRAM_SANDBOXTEST_CHILD"

// Confine is the plugin's confinement: it derives the plugin's paths from getenv as its main
// does (creating its data directory), applies them, and returns the directory the plugin
// writes to ("" for a plugin that writes nowhere).
type Confine func(log *slog.Logger, getenv func(string) string) (status sandbox.Status, writable string, err error)

// result is what the child reports.
type result struct {
	Status      sandbox.Status `json:"status"`
	ReadKey     string         `json:"read_key"`     // "" or the error
	WriteOut    string         `json:"write_out"`    // "" or the error
	WriteInside string         `json:"write_inside"` // "" or the error
	ReadInside  string         `json:"read_inside"`
	Ptrace      string         `json:"ptrace"`  // ptrace(PTRACE_PEEKDATA, 1): ESRCH unfiltered
	Unshare     string         `json:"unshare"` // unshare(0): "" unfiltered
	// What programs the plugin runs can do (CheckCommands): echo and ls in its directory, cat
	// of the key, touch outside. Each "" or the error with the program's output.
	CmdInside string `json:"cmd_inside"`
	CmdKey    string `json:"cmd_key"`
	CmdOut    string `json:"cmd_out"`
	Dial      string `json:"dial"` // a TCP connection to the test's listener
	Err       string `json:"err"`
}

// Check must be the whole body of a test of its own (the child re-runs that test alone). The
// confined plugin cannot read ~/.config/hologram/key or write outside its paths, and can still
// write and read within them; with HOLOGRAM_LANDLOCK=off the same probes succeed, which shows
// that the refusals come from the confinement.
func Check(t *testing.T, confine Confine) { check(t, confine, false) }

// CheckCommands is Check for a plugin that runs programs (they inherit its confinement): a
// shell it starts can echo and ls in the plugin's directory but can neither cat the key nor
// write outside, and the plugin's seccomp filter holds for it too.
func CheckCommands(t *testing.T, confine Confine) { check(t, confine, true) }

func check(t *testing.T, confine Confine, commands bool) {
	if os.Getenv(childEnv) != "" {
		child(confine, commands)
		return
	}
	for _, tc := range []struct {
		name, switchVal string
		confined        bool
	}{{"confined", "", true}, {"switched off", "off", false}} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			key := filepath.Join(home, ".config", "hologram", "key")
			os.MkdirAll(filepath.Dir(key), 0o700)
			if err := os.WriteFile(key, []byte("v1 deadbeef SECRET-MASTER-KEY\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(home, "elsewhere")
			os.MkdirAll(outside, 0o700)
			declared, network := manifestPermissions(t, home)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
			cmd := exec.Command(os.Args[0], "-test.run=^"+strings.Split(t.Name(), "/")[0]+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"=1", "HOME="+home, protocol.EnvPermissions+"="+declared,
				"HOLOGRAM_SANDBOXTEST_ADDR="+ln.Addr().String(),
				"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
				"HOLOGRAM_SANDBOXTEST_OUTSIDE="+outside, sandbox.Env+"="+tc.switchVal, sandbox.SeccompEnv+"="+tc.switchVal)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			line := lastLine(string(out), "SANDBOXTEST ")
			var r result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("child said %q: %v", out, err)
			}
			if r.Err != "" {
				t.Fatalf("child: %s", r.Err)
			}
			if r.WriteInside != "" || r.ReadInside != "" {
				t.Fatalf("the plugin cannot use its own paths: write %q, read %q", r.WriteInside, r.ReadInside)
			}
			if commands && r.CmdInside != "" {
				t.Fatalf("a program the plugin runs cannot work in its directory: %s", r.CmdInside)
			}
			if network && r.Dial != "" {
				t.Errorf("plugin.json says network, yet a TCP connection failed: %s", r.Dial)
			}
			if !tc.confined {
				if r.Status != sandbox.Off || r.ReadKey != "" || r.WriteOut != "" || r.Unshare != "" || !strings.Contains(r.Ptrace, "no such process") || r.Dial != "" {
					t.Fatalf("switched off: %+v (the probes must succeed unconfined)", r)
				}
				if commands && (r.CmdKey != "" || r.CmdOut != "") {
					t.Fatalf("switched off, the programs' probes fail: key %q, outside %q", r.CmdKey, r.CmdOut)
				}
				return
			}
			if abi, _ := llsys.LandlockGetABIVersion(); !network && abi >= 4 && !strings.Contains(r.Dial, "permission denied") {
				t.Errorf("plugin.json says no network, yet a TCP connection: %q, want permission denied", r.Dial)
			}
			for name, got := range map[string]string{"ptrace": r.Ptrace, "unshare": r.Unshare} {
				if !strings.Contains(got, "operation not permitted") {
					t.Errorf("%s under the seccomp filter: %q, want operation not permitted (EPERM)", name, got)
				}
			}
			if commands {
				if !strings.Contains(r.CmdKey, "Permission denied") || strings.Contains(r.CmdKey, "SECRET") {
					t.Errorf("cat of the key by a program the plugin ran: %q, want Permission denied", r.CmdKey)
				}
				if !strings.Contains(r.CmdOut, "Permission denied") {
					t.Errorf("touch outside by a program the plugin ran: %q, want Permission denied", r.CmdOut)
				}
				if _, err := os.Stat(filepath.Join(outside, "planted-by-command")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a program the confined plugin ran wrote outside its paths")
				}
			}
			if r.Status != sandbox.Confined {
				t.Fatalf("status %q: this machine's kernel must have Landlock (ABI ≥ 1)", r.Status)
			}
			if !strings.Contains(r.ReadKey, "permission denied") {
				t.Errorf("reading %s: %q, want permission denied", key, r.ReadKey)
			}
			if !strings.Contains(r.WriteOut, "permission denied") {
				t.Errorf("writing in %s: %q, want permission denied", outside, r.WriteOut)
			}
			if _, err := os.Stat(filepath.Join(outside, "planted")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the confined plugin wrote outside its paths")
			}
		})
	}
}

func child(confine Confine, commands bool) {
	var r result
	defer func() {
		b, _ := json.Marshal(r)
		fmt.Printf("\nSANDBOXTEST %s\n", b)
		os.Exit(0)
	}()
	st, inside, err := confine(slog.New(slog.DiscardHandler), os.Getenv)
	if err != nil {
		r.Err = err.Error()
		return
	}
	r.Status = st
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		if errors.Is(err, syscall.EACCES) {
			return "permission denied: " + err.Error()
		}
		return err.Error()
	}
	_, err = os.ReadFile(filepath.Join(os.Getenv("HOME"), ".config", "hologram", "key"))
	r.ReadKey = errText(err)
	if c, err := net.Dial("tcp", os.Getenv("HOLOGRAM_SANDBOXTEST_ADDR")); err == nil {
		c.Close()
	} else {
		r.Dial = errText(err)
	}
	outside := os.Getenv("HOLOGRAM_SANDBOXTEST_OUTSIDE")
	r.WriteOut = errText(os.WriteFile(filepath.Join(outside, "planted"), []byte("x"), 0o600))
	runtime.LockOSThread() // unshare acts on the calling thread only; with 0 it changes nothing
	_, _, errno := syscall.RawSyscall(syscall.SYS_PTRACE, syscall.PTRACE_PEEKDATA, 1, 0)
	r.Ptrace = errText(errnoErr(errno))
	_, _, errno = syscall.RawSyscall(syscall.SYS_UNSHARE, 0, 0, 0)
	r.Unshare = errText(errnoErr(errno))
	if commands {
		run := func(line string, args ...string) string {
			out, err := exec.Command("/bin/sh", append([]string{"-c", line, "sh"}, args...)...).CombinedOutput()
			if err != nil {
				return fmt.Sprintf("%v: %s", err, out)
			}
			return ""
		}
		key := filepath.Join(os.Getenv("HOME"), ".config", "hologram", "key")
		r.CmdInside = run(`cd "$1" && echo made-by-command > cmd-probe && ls | grep -qx cmd-probe && cat cmd-probe | grep -q made && rm cmd-probe`, inside)
		r.CmdKey = run(`cat "$1"`, key)
		r.CmdOut = run(`touch "$1"/planted-by-command`, outside)
	}
	if inside == "" {
		return
	}
	probe := filepath.Join(inside, "sandboxtest-probe")
	r.WriteInside = errText(os.WriteFile(probe, []byte("inside"), 0o600))
	_, err = os.ReadFile(probe)
	r.ReadInside = errText(err)
	os.Remove(probe)
}

// manifestPermissions reads the plugin's plugin.json (the test runs in its package directory)
// and expands its permissions as the host would for a kernel whose data and config directories
// are the XDG ones under home: what the host passes in HOLOGRAM_PERMISSIONS, and its network.
func manifestPermissions(t *testing.T, home string) (string, bool) {
	t.Helper()
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatalf("the plugin's manifest: %v", err)
	}
	var m struct{ Permissions protocol.Permissions }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	wd, _ := os.Getwd()
	vars := map[string]string{protocol.VarHome: home, protocol.VarPluginDir: wd,
		protocol.VarDataDir: filepath.Join(home, ".local", "share", "hologram"), protocol.VarConfigDir: filepath.Join(home, ".config", "hologram")}
	p, err := m.Permissions.Expand(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	return string(b), p.Network
}

// errnoErr is nil for 0, else errno itself.
func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func lastLine(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(lines[i], prefix); ok {
			return v
		}
	}
	return ""
}

// CheckProcess checks that the running plugin process pid loaded the seccomp filter (its
// /proc status says filter mode, with no_new_privs, which Landlock needs too): the plugin's
// main confined itself.
func CheckProcess(t testing.TB, pid int) {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("the plugin process: %v", err)
	}
	for _, want := range []string{"\nNoNewPrivs:\t1\n", "\nSeccomp:\t2\n"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the plugin process %d is not confined: its status lacks %q\n%s", pid, strings.TrimSpace(want), raw)
		}
	}
}
