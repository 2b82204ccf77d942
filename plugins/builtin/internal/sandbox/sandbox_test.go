package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hologramagent/hologram/plugins/protocol"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

func TestDeclared(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		want      Permissions
		err       string
	}{
		{"none", "", Permissions{}, ""},
		{"paths by access", `{"paths":[{"path":"/d/w","access":"write"},{"path":"/d/r","access":"read"},{"path":"/d/x","access":"exec"}],"network":true}`,
			Permissions{Read: []string{"/d/r"}, Write: []string{"/d/w"}, Exec: []string{"/d/x"}, Network: true}, ""},
		{"not JSON", `{"paths":`, Permissions{}, "HOLOGRAM_PERMISSIONS from the host"},
		{"not expanded", `{"paths":[{"path":"${HOLOGRAM_DATA_DIR}/x","access":"write"}]}`, Permissions{}, "is not expanded"},
		{"bad access", `{"paths":[{"path":"/x","access":"all"}]}`, Permissions{}, `access "all"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Declared(func(k string) string {
				if k == protocol.EnvPermissions {
					return tc.env
				}
				return ""
			})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// probe is what the confined child reports.
type probe struct {
	Status                                     Status
	WriteDeclared, ReadDeclared, WriteReadOnly string
	WriteOther, Dial                           string
	Err                                        string
}

// TestApplyDeclared confines a child process to nothing but what a manifest declares (the
// host's HOLOGRAM_PERMISSIONS): it writes the declared writable directory, reads the readable
// one but cannot write it, cannot write anywhere else, and connects over TCP only when the
// manifest says network.
func TestApplyDeclared(t *testing.T) {
	if os.Getenv("SANDBOX_TEST_CHILD") != "" {
		applyChild()
		return
	}
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
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network %v", network), func(t *testing.T) {
			dir := t.TempDir()
			w, r, other := filepath.Join(dir, "w"), filepath.Join(dir, "r"), filepath.Join(dir, "other")
			for _, d := range []string{w, r, other} {
				os.MkdirAll(d, 0o700)
			}
			os.WriteFile(filepath.Join(r, "f"), []byte("readable"), 0o600)
			perms, _ := json.Marshal(protocol.Permissions{Network: network, Paths: []protocol.PathPermission{
				{Path: w, Access: protocol.AccessWrite}, {Path: r, Access: protocol.AccessRead}}})
			cmd := exec.Command(os.Args[0], "-test.run=^TestApplyDeclared$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SANDBOX_TEST_CHILD=1", protocol.EnvPermissions+"="+string(perms),
				"SANDBOX_TEST_DIRS="+w+":"+r+":"+other, "SANDBOX_TEST_ADDR="+ln.Addr().String())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			_, line, _ := strings.Cut(string(out), "SANDBOXPROBE ")
			line, _, _ = strings.Cut(line, "\n")
			var p probe
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("child said %q", out)
			}
			if p.Err != "" || p.Status != Confined {
				t.Fatalf("child: %+v", p)
			}
			if p.WriteDeclared != "" || p.ReadDeclared != "" {
				t.Errorf("declared paths: write %q, read %q", p.WriteDeclared, p.ReadDeclared)
			}
			for what, got := range map[string]string{"writing the read-only path": p.WriteReadOnly, "writing elsewhere": p.WriteOther} {
				if !strings.Contains(got, "permission denied") {
					t.Errorf("%s: %q, want permission denied", what, got)
				}
			}
			if network && p.Dial != "" {
				t.Errorf("dial with network declared: %q", p.Dial)
			}
			if abi, _ := llsys.LandlockGetABIVersion(); !network && abi < 4 {
				t.Logf("Landlock ABI %d has no network rules: the dial is not refused (%q)", abi, p.Dial)
			} else if !network && !strings.Contains(p.Dial, "permission denied") {
				t.Errorf("dial without network: %q, want permission denied", p.Dial)
			}
		})
	}
}

func applyChild() {
	var p probe
	defer func() {
		b, _ := json.Marshal(p)
		fmt.Printf("\nSANDBOXPROBE %s\n", b)
		os.Exit(0)
	}()
	st, err := Apply(slog.New(slog.DiscardHandler), os.Getenv, Permissions{})
	if err != nil {
		p.Err = err.Error()
		return
	}
	p.Status = st
	text := func(err error) string {
		switch {
		case err == nil:
			return ""
		case errors.Is(err, syscall.EACCES):
			return "permission denied: " + err.Error()
		}
		return err.Error()
	}
	dirs := strings.Split(os.Getenv("SANDBOX_TEST_DIRS"), ":")
	p.WriteDeclared = text(os.WriteFile(filepath.Join(dirs[0], "f"), []byte("x"), 0o600))
	_, err = os.ReadFile(filepath.Join(dirs[1], "f"))
	p.ReadDeclared = text(err)
	p.WriteReadOnly = text(os.WriteFile(filepath.Join(dirs[1], "g"), []byte("x"), 0o600))
	p.WriteOther = text(os.WriteFile(filepath.Join(dirs[2], "f"), []byte("x"), 0o600))
	c, err := net.Dial("tcp", os.Getenv("SANDBOX_TEST_ADDR"))
	if err == nil {
		c.Close()
	}
	p.Dial = text(err)
}
