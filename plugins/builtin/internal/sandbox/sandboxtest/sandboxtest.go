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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hologramagent/hologram/plugins/builtin/internal/sandbox"
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
	Err         string         `json:"err"`
}

// Check must be the whole body of a test of its own (the child re-runs that test alone). The
// confined plugin cannot read ~/.config/hologram/key or write outside its paths, and can still
// write and read within them; with HOLOGRAM_LANDLOCK=off the same probes succeed, which shows
// that the refusals come from the confinement.
func Check(t *testing.T, confine Confine) {
	if os.Getenv(childEnv) != "" {
		child(confine)
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
			cmd := exec.Command(os.Args[0], "-test.run=^"+strings.Split(t.Name(), "/")[0]+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"=1", "HOME="+home,
				"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
				"HOLOGRAM_SANDBOXTEST_OUTSIDE="+outside, sandbox.Env+"="+tc.switchVal)
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
			if !tc.confined {
				if r.Status != sandbox.Off || r.ReadKey != "" || r.WriteOut != "" {
					t.Fatalf("switched off: %+v (the probes must succeed unconfined)", r)
				}
				return
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

func child(confine Confine) {
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
	r.WriteOut = errText(os.WriteFile(filepath.Join(os.Getenv("HOLOGRAM_SANDBOXTEST_OUTSIDE"), "planted"), []byte("x"), 0o600))
	if inside == "" {
		return
	}
	probe := filepath.Join(inside, "sandboxtest-probe")
	r.WriteInside = errText(os.WriteFile(probe, []byte("inside"), 0o600))
	_, err = os.ReadFile(probe)
	r.ReadInside = errText(err)
	os.Remove(probe)
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
