//go:build integration

package packaging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The install tests install hologram-server for real with dpkg (as root), run the installed
// homed as its system user the way its unit does, and remove it again. They leave the machine
// as they found it: every path they may create is removed in a cleanup, on failure too.

const (
	serverPkg  = "hologram-server"
	systemUnit = "/lib/systemd/system/hologram.service"
	userUnit   = "/usr/lib/systemd/user/hologram.service"
	stateDir   = "/var/lib/hologram"
	configDir  = "/etc/hologram"
)

// watched are the trees whose file lists must be the same before and after.
var watched = []string{"/usr", "/etc", "/var/lib"}

// accountFiles are the backups and lock shadow-utils keeps when useradd/userdel change the
// account files: the system's bookkeeping, not the package's leftovers.
var accountFiles = map[string]bool{"/etc/passwd-": true, "/etc/group-": true, "/etc/shadow-": true, "/etc/gshadow-": true, "/etc/.pwd.lock": true}

// needRoot prepares an install test: root, dpkg, a machine without any hologram package or
// user (so the test cannot damage an installation), and the cleanup that purges.
func needRoot(t *testing.T) {
	t.Helper()
	need(t, "dpkg", "dpkg-query", "systemd-analyze", "curl")
	if os.Geteuid() != 0 {
		if ciMode() {
			t.Fatal("the install tests run as root (dpkg -i)")
		}
		t.Skip("the install tests run as root (dpkg -i)")
	}
	for _, v := range variants {
		if out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", v.pkg).Output(); strings.Contains(string(out), "installed") {
			t.Fatalf("%s is installed on this machine (%s): the install tests would disturb it", v.pkg, out)
		}
	}
	if _, err := user.Lookup("hologram"); err == nil {
		t.Fatal("a user hologram exists on this machine: the install tests would disturb it")
	}
	for _, d := range []string{stateDir, configDir, "/run/hologram"} {
		if _, err := os.Stat(d); err == nil {
			t.Fatalf("%s exists on this machine: the install tests would disturb it", d)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("dpkg", "--purge", serverPkg).CombinedOutput(); err != nil {
			t.Errorf("cleanup: dpkg --purge: %v\n%s", err, out)
		}
		os.RemoveAll("/run/hologram")
		// A failed postrm must not leave the account behind either.
		if _, err := user.Lookup("hologram"); err == nil {
			exec.Command("userdel", "hologram").Run()
		}
		os.RemoveAll(stateDir)
		os.RemoveAll(configDir)
	})
}

// fileList lists every path under the watched trees.
func fileList(t *testing.T) map[string]bool {
	t.Helper()
	files := map[string]bool{}
	for _, root := range watched {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // a file vanishing mid-walk (another process's temp file)
			}
			files[p] = true
			return nil
		})
	}
	return files
}

// diffLists returns the paths added to and removed from before, minus accountFiles.
func diffLists(before, after map[string]bool) (added, removed []string) {
	for p := range after {
		if !before[p] && !accountFiles[p] {
			added = append(added, p)
		}
	}
	for p := range before {
		if !after[p] && !accountFiles[p] {
			removed = append(removed, p)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}

func dpkg(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, "dpkg", args...)
}

// unit is the part of an installed unit file the tests act out.
type unit struct {
	execStart []string
	env       []string
	user      string
	runtime   string
}

func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var u unit
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "ExecStart":
			u.execStart = strings.Fields(v)
		case "Environment":
			u.env = append(u.env, strings.Fields(v)...)
		case "User":
			u.user = v
		case "RuntimeDirectory":
			u.runtime = v
		}
	}
	if len(u.execStart) == 0 || u.user == "" || u.runtime == "" {
		t.Fatalf("%s: no ExecStart, User or RuntimeDirectory: %+v", path, u)
	}
	return u
}

// account is the service user's ids.
type account struct{ uid, gid uint32 }

func lookupAccount(t *testing.T, name string) account {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("user %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return account{uint32(uid), uint32(gid)}
}

// asUser runs a command as the account, without root's groups.
func asUser(a account, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: []uint32{}}}
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + stateDir, "LANG=C.UTF-8"}, env...)
	cmd.Dir = "/"
	return cmd
}

// running is homed started the way the system unit starts it.
type running struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
	notify *net.UnixConn
	socket string
	acct   account
}

// startAsUnit acts out the installed system unit: systemd would create the RuntimeDirectory
// (0700, the user's), set Environment= and run ExecStart as User= with NOTIFY_SOCKET. It waits
// for READY=1.
func startAsUnit(t *testing.T) *running {
	t.Helper()
	u := readUnit(t, systemUnit)
	a := lookupAccount(t, u.user)
	rt := filepath.Join("/run", u.runtime)
	if err := os.MkdirAll(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(rt, int(a.uid), int(a.gid)); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("@hologram-pkgtest-%d-%d", os.Getpid(), time.Now().UnixNano())
	nc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	r := &running{stderr: &bytes.Buffer{}, done: make(chan error, 1), notify: nc, acct: a, socket: filepath.Join(rt, "homed.sock")}
	r.cmd = asUser(a, append(u.env, "NOTIFY_SOCKET="+addr), u.execStart[0], u.execStart[1:]...)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		nc.Close()
		os.RemoveAll(rt)
	})
	if got := r.next(t); !strings.HasPrefix(got, "READY=1") {
		t.Fatalf("first notification %q, want READY=1\n%s", got, r.stderr)
	}
	return r
}

func (r *running) next(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 4096)
	r.notify.SetReadDeadline(time.Now().Add(60 * time.Second)) // a guard, not a measurement
	n, err := r.notify.Read(buf)
	if err != nil {
		t.Fatalf("no notification from homed: %v\n%s", err, r.stderr)
	}
	return string(buf[:n])
}

// stop sends SIGTERM as systemd would, expects STOPPING=1 and exit 0, and removes the
// RuntimeDirectory as systemd does when the unit stops.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	if got := r.next(t); got != "STOPPING=1" {
		t.Fatalf("notification after SIGTERM %q, want STOPPING=1", got)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("homed exited with %v\n%s", err, r.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("homed did not stop\n%s", r.stderr)
	}
	os.RemoveAll(filepath.Dir(r.socket))
}

// asService runs a client command as the service user against the socket.
func (r *running) asService(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := asUser(r.acct, []string{"HOLOGRAM_SOCKET=" + r.socket}, name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v as the service user: %v\n%s%s\nhomed:\n%s", name, args, err, out.String(), errOut.String(), r.stderr)
	}
	return out.String()
}

func (r *running) health(t *testing.T) map[string]any {
	t.Helper()
	body := r.asService(t, "curl", "--silent", "--show-error", "--fail", "--unix-socket", r.socket, "http://hologram/api/v1/health")
	var h map[string]any
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("health %q: %v", body, err)
	}
	return h
}

func checkOwned(t *testing.T, path string, a account, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != a.uid || st.Gid != a.gid || fi.Mode().Perm() != mode {
		t.Errorf("%s: owner %d:%d mode %v, want %d:%d %v", path, st.Uid, st.Gid, fi.Mode().Perm(), a.uid, a.gid, mode)
	}
}

func TestServerInstallRunRemovePurge(t *testing.T) {
	needRoot(t)
	deb := findPackages(t)["server"].deb
	before := fileList(t)

	dpkg(t, "--install", deb)
	a := lookupAccount(t, "hologram")
	u, _ := user.Lookup("hologram")
	if u.HomeDir != stateDir || a.uid >= 1000 || a.uid == 0 {
		t.Errorf("user hologram: home %s uid %d, want %s and a system uid", u.HomeDir, a.uid, stateDir)
	}
	checkOwned(t, stateDir, a, 0o700)
	checkOwned(t, configDir, a, 0o700)

	// The system unit as installed, with its binary and man pages in place; a server has no
	// user unit and no example plugin.
	for _, f := range []string{userUnit, "/usr/lib/hologram/plugins/echo"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("the server package installed %s (%v)", f, err)
		}
	}
	for _, unit := range []string{systemUnit} {
		if out, err := exec.Command("systemd-analyze", "verify", unit).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
		}
	}
	if out, err := exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=50", systemUnit).CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze security: exposure above 5.0: %v\n%s", err, out)
	} else {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Logf("systemd-analyze security: %s", lines[len(lines)-1])
	}

	r := startAsUnit(t)
	h := r.health(t)
	if h["version"] == nil {
		t.Errorf("health %v has no version", h)
	}
	if out := r.asService(t, "/usr/bin/waiter", "status"); out == "" {
		t.Error("waiter status printed nothing")
	}
	// homed created the missing key file in /etc/hologram, for its user only.
	checkOwned(t, filepath.Join(configDir, "key"), a, 0o600)
	r.stop(t)

	// Remove keeps the data and the key, nothing else (but dpkg's record of a package whose
	// configuration stays, which purge needs).
	dpkg(t, "--remove", serverPkg)
	added, removed := diffLists(before, fileList(t))
	for _, p := range added {
		if p != stateDir && p != configDir && !strings.HasPrefix(p, stateDir+"/") && !strings.HasPrefix(p, configDir+"/") &&
			!strings.HasPrefix(p, "/var/lib/dpkg/info/"+serverPkg+".") {
			t.Errorf("after dpkg --remove, %s is left", p)
		}
	}
	for _, keep := range []string{filepath.Join(configDir, "key"), filepath.Join(stateDir, "hologram.db")} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("dpkg --remove deleted %s: %v", keep, err)
		}
	}
	if len(removed) > 0 {
		t.Errorf("dpkg --remove deleted files it did not install: %q", removed)
	}

	// Purge removes them and the user: the file lists are as before.
	dpkg(t, "--purge", serverPkg)
	added, removed = diffLists(before, fileList(t))
	if len(added)+len(removed) > 0 {
		t.Errorf("after dpkg --purge: added %q, removed %q", added, removed)
	}
	if _, err := user.Lookup("hologram"); err == nil {
		t.Error("dpkg --purge left the user hologram")
	}
}
