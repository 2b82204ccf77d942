//go:build integration

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeRun is the README's first command as a new user runs it: `make run` in the checkout,
// under Xvfb, on a fresh home. The window comes up, and the agent has the built-in plugins'
// tools (BIN/plugins/*, built by `make run` and found by the kernel next to its executable):
// `waiter tools`, with the waiter `make run` built, lists notes_ and files_ tools. The binaries
// are built with the Makefile's flags, as a user's `make run` does, into a BIN of the test's.
func TestMakeRun(t *testing.T) {
	need(t, "make")
	in := newInstall(t, xserver(t))
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// A preferences file a cut-short save left empty: Fyne said "Preferences load error: EOF"
	// on every start.
	prefs := filepath.Join(in.root, "config", "fyne", appID, "preferences.json")
	if err := os.MkdirAll(filepath.Dir(prefs), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefs, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	gocache := goEnv(t, "GOCACHE")
	// Into a bin/ of the test's own (BIN, the Makefile's output folder): the checkout's bin/ holds
	// what `make packages` packed, which the packaging tests compare the packages with, and a
	// tree other tests write into meanwhile can make this build's version "-dirty".
	bin := filepath.Join(in.root, "bin")
	run := exec.Command("make", "--no-print-directory", "run", "BIN="+bin)
	run.Dir = root
	// A fresh home, but the runner's Go caches (a new GOCACHE would rebuild SQLite from scratch)
	// and its PATH (make, go, gcc).
	run.Env = append(in.environ("", "GOCACHE="+gocache, "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPATH="+goEnv(t, "GOPATH"),
		"GOFLAGS="+os.Getenv("GOFLAGS"), "GOTOOLCHAIN=local"), "PATH="+os.Getenv("PATH"),
		// A bare locale, as in a container or a minimal install: Fyne must not complain about it.
		"LANG=C.UTF-8", "LC_ALL=")
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: Wait returns when make exits, not when the last process holding its
	// output (a build's helpers) lets go.
	logFile, err := os.Create(filepath.Join(in.root, "make-run.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	run.Stdout, run.Stderr = logFile, logFile
	out := fileText(logFile.Name())
	start := time.Now()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := waitCmd(run)
	t.Cleanup(func() {
		syscall.Kill(-run.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(waitLong):
			syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("make run said:\n%s", out)
		}
	})

	// The build takes minutes on a cold cache (the Makefile's CGO_CFLAGS rebuild SQLite and
	// GLFW once: 10 minutes and more on a loaded 2-core machine); warm, it relinks nothing.
	deadline := time.Now().Add(25 * time.Minute)
	for {
		if id, _ := in.xdo(context.Background(), "search", "--onlyvisible", "--name", "^HologramAgent$"); strings.TrimSpace(id) != "" {
			break
		}
		select {
		case <-done:
			t.Fatalf("make run ended before a window came up (%v)", run.ProcessState)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no window after 25 minutes of make run")
		}
	}
	t.Logf("make run to first window: %v", time.Since(start).Round(time.Millisecond))

	waiter := filepath.Join(bin, "waiter")
	var tools string
	for tick := time.Now(); ; {
		cmd := exec.Command(waiter, "tools")
		cmd.Env = in.environ("")
		b, err := cmd.CombinedOutput()
		tools = string(b)
		if err == nil && strings.Contains(tools, "notes_") && strings.Contains(tools, "files_") {
			break
		}
		if time.Since(tick) > waitLong {
			t.Fatalf("waiter tools (%v) lists no notes_ and files_ tools:\n%s", err, tools)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(out.String(), "no built-in plugins found") {
		t.Errorf("the kernel found no built-in plugins:\n%s", out)
	}
	in.screenshot("make-run", nil)
	for _, bad := range []string{"Error parsing user locale", "Preferences load error"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("make run printed %q:\n%s", bad, out)
		}
	}
}

// fileText reads a file's text each time it is printed or asked for.
type fileText string

func (f fileText) String() string { b, _ := os.ReadFile(string(f)); return string(b) }

func waitCmd(cmd *exec.Cmd) chan struct{} {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	return done
}

// goEnv is `go env name` of the test's runner.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	b, err := exec.Command(goTool(), "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(b))
}
