//go:build integration

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// runHomed runs homed to its end (it must refuse to start) and returns its exit code and stderr.
func (e *env) runHomed(extraEnv []string, args ...string) (int, string) {
	e.t.Helper()
	args = append([]string{"--data", e.data, "--socket", e.sock}, args...)
	cmd := exec.Command(filepath.Join(binDir, "homed"), args...)
	cmd.Env = e.environ(extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		e.t.Fatalf("homed %v still running after 30 s (it should have refused to start):\n%s", args, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// wantRefusal checks that homed exited 1 with every one of want in its message.
func wantRefusal(t *testing.T, code int, stderr string, want ...string) {
	t.Helper()
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("message lacks %q:\n%s", w, stderr)
		}
	}
}

// Each way a start could silently lose or expose the owner's data is refused by the real homed
// with exit 1 and a message that says what to do.
func TestSafeStart(t *testing.T) {
	t.Run("short token", func(t *testing.T) {
		e := newEnv(t)
		tok := filepath.Join(e.root, "token")
		os.WriteFile(tok, []byte("  "+strings.Repeat("k", 31)+"  \n"), 0o600)
		for _, tc := range []struct {
			name string
			env  []string
			args []string
			want string
		}{
			{"1-character HOLOGRAM_TOKEN", []string{"HOLOGRAM_TOKEN=x"}, nil, "token is 1 characters, at least 32"},
			{"31 characters after trimming, from a file", nil, []string{"--token-file", tok}, "token is 31 characters, at least 32"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, stderr := e.runHomed(tc.env, append([]string{"--listen", "127.0.0.1:0"}, tc.args...)...)
				wantRefusal(t, code, stderr, tc.want, "waiter token")
			})
		}
		t.Run("32 characters are enough", func(t *testing.T) {
			os.WriteFile(tok, []byte(" "+strings.Repeat("k", 32)+"\n"), 0o600)
			e.start("--listen", "127.0.0.1:0", "--token-file", tok).stop(t)
		})
	})

	t.Run("missing key file with sealed secrets", func(t *testing.T) {
		e := newEnv(t)
		fake := llmtest.NewServer(t)
		h := e.start()
		e.addProvider(fake.URL(), "sk-sealed-by-the-lost-key")
		h.stop(t)
		key := filepath.Join(e.config, "hologram", "key")
		if err := os.Remove(key); err != nil {
			t.Fatal(err)
		}
		code, stderr := e.runHomed(nil)
		wantRefusal(t, code, stderr, "key file "+key+" is missing", "providers fake", "--key-file", "--reset-secrets")
		if _, err := os.Stat(key); err == nil {
			t.Fatal("the refused start made a new key file")
		}
		// --reset-secrets: the provider stays, without its key; a new key is made.
		h = e.start("--reset-secrets")
		if !strings.Contains(h.stderr.String(), "--reset-secrets dropped the secrets") {
			t.Errorf("no warning about the dropped secrets:\n%s", h.stderr)
		}
		out, _, _ := e.waiter("", nil, "provider", "list")
		if !strings.Contains(out, "fake") {
			t.Errorf("provider list after the reset:\n%s", out)
		}
		h.stop(t)
		if _, err := os.Stat(key); err != nil {
			t.Fatalf("no new key file after --reset-secrets: %v", err)
		}
		e.start().stop(t) // and the next start needs no flag
	})

	t.Run("missing key file without secrets makes a new one", func(t *testing.T) {
		e := newEnv(t)
		e.start().stop(t)
		key := filepath.Join(e.config, "hologram", "key")
		os.Remove(key)
		e.start().stop(t)
		if _, err := os.Stat(key); err != nil {
			t.Fatal(err)
		}
	})

	db := func(e *env) string { return filepath.Join(e.data, "hologram.db") }
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   []string
	}{
		{"zero-length database", func(t *testing.T, path string) { os.WriteFile(path, nil, 0o600) },
			[]string{"the database file is empty (0 bytes)", "not a HologramAgent database", "backups", "mv "}},
		{"non-SQLite database", func(t *testing.T, path string) { os.WriteFile(path, []byte("my diary, not a database\n"), 0o600) },
			[]string{"not an SQLite database", "backups"}},
		{"malformed database", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096-100), 100); err != nil { // page 1 after the header
				t.Fatal(err)
			}
		}, []string{"malformed", "sqlite3 " + "%s .recover", "backups"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.start().stop(t)
			path := db(e)
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(path + suffix)
			}
			tc.damage(t, path)
			before, _ := os.ReadFile(path)
			code, stderr := e.runHomed(nil)
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = strings.ReplaceAll(w, "%s", path)
			}
			wantRefusal(t, code, stderr, want...)
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Fatal("the refused start changed the database file")
			}
		})
	}

	t.Run("daily backup", func(t *testing.T) {
		e := newEnv(t)
		h := e.start()
		dir := filepath.Join(e.data, "backups")
		deadline := time.Now().Add(10 * time.Second)
		var copies []string
		for len(copies) == 0 {
			copies, _ = filepath.Glob(filepath.Join(dir, "hologram-*.db"))
			if time.Now().After(deadline) {
				t.Fatalf("no backup in %s 10 s after the start:\n%s", dir, h.stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
		h.stop(t)
		fi, err := os.Stat(copies[0])
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup %s: mode %v, %v", copies[0], fi.Mode(), err)
		}
		if !strings.Contains(h.stderr.String(), "daily backup written") {
			t.Errorf("no log line for the backup:\n%s", h.stderr)
		}
		// The copy is a database homed starts on.
		restored := newEnv(t)
		os.MkdirAll(restored.data, 0o700)
		raw, _ := os.ReadFile(copies[0])
		os.WriteFile(filepath.Join(restored.data, "hologram.db"), raw, 0o600)
		restored.start().stop(t)
	})

	// A socket in an existing directory leaves its mode alone; an unsafe directory is refused.
	t.Run("socket directory", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			mode   os.FileMode
			refuse string
		}{
			{"shared 0755 stays 0755", 0o755, ""},
			{"world-writable without sticky bit", 0o777, "writable by others (mode 0777) without the sticky bit"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				dir := filepath.Join(e.root, "shared")
				os.Mkdir(dir, 0o700)
				os.Chmod(dir, tc.mode)
				e.sock = filepath.Join(dir, "h.sock")
				if tc.refuse != "" {
					code, stderr := e.runHomed(nil)
					wantRefusal(t, code, stderr, tc.refuse, "--socket")
				} else {
					e.start().stop(t)
				}
				fi, err := os.Stat(dir)
				if err != nil || fi.Mode().Perm() != tc.mode {
					t.Fatalf("socket dir mode after homed: %v %v, want %04o", fi.Mode(), err, tc.mode)
				}
			})
		}
	})
}
