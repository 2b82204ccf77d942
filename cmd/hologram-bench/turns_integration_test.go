//go:build integration

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTurnsAgainst runs `hologram-bench turns --against` with a real homed built here (the same
// binary as both sides): every run is reported, then the medians and the ratio line.
func TestTurnsAgainst(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go on PATH: %v", err)
	}
	homed := filepath.Join(t.TempDir(), "homed")
	cmd := exec.Command(gobin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", homed, "../homed")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building homed: %v\n%s", err, out)
	}
	var o, e bytes.Buffer
	code := run(context.Background(), []string{"turns", "--homed", homed, "--against", homed, "--runs", "2", "--turns", "5", "--starts", "1"}, &o, &e)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, o.String(), e.String())
	}
	out := o.String()
	for _, want := range []string{"run 1 old:", "run 1 new:", "run 2 old:", "run 2 new:", "median of runs, old:", "median of runs, new:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`new/old, median of per-pair ratios: p50 \d+\.\d\d  p99 \d+\.\d\d`).MatchString(out) {
		t.Errorf("no ratio line:\n%s", out)
	}
}
