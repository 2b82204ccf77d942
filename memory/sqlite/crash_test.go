//go:build integration

package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// Environment of the helper process started by TestKillDuringAppend.
const (
	crashDBEnv  = "HOLOGRAM_SQLITE_CRASH_DB"
	crashRunEnv = "HOLOGRAM_SQLITE_CRASH_RUN"
)

// batchSize is the number of events in batch b: 1 to 5, so batches differ.
func batchSize(b int) int { return 1 + b%5 }

// TestCrashHelperProcess is not a test on its own: run as a child of TestKillDuringAppend (the
// environment names a database), it appends batches until killed, printing "committed N" after
// each commit. Without that environment it returns at once.
func TestCrashHelperProcess(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		return
	}
	run := os.Getenv(crashRunEnv)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	if _, err := s.CreateSession(ctx, memory.Session{ID: "crash"}); err != nil && !errors.Is(err, memory.ErrExists) {
		fmt.Fprintln(os.Stderr, "create session:", err)
		os.Exit(2)
	}
	for b := 0; b < 1_000_000; b++ {
		n := batchSize(b)
		turn := fmt.Sprintf("run%s-batch%d", run, b)
		evs := make([]memory.Event, n)
		for i := range evs {
			evs[i] = memory.Event{Session: "crash", TurnID: turn, Role: memory.RoleUser,
				Content: fmt.Sprintf("%d/%d %s", i, n, strings.Repeat("padding ", 20*i))}
		}
		if _, err := s.AppendEvents(ctx, evs); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(2)
		}
		fmt.Printf("committed %d\n", b)
	}
	os.Exit(3) // never killed: the parent treats this as a failure
}

// TestKillDuringAppend SIGKILLs a child that appends batches, ten times at random points, and
// checks after each kill that the database is intact, every batch is complete or absent, and every
// batch the child reported committed is present.
func TestKillDuringAppend(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	for run := range 10 {
		killAfter := rng.IntN(40) // commits to see before the kill
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashRunEnv+"="+strconv.Itoa(run))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start helper: %v", err)
		}
		sc := bufio.NewScanner(out)
		reported := -1
		for sc.Scan() {
			var b int
			if _, err := fmt.Sscanf(sc.Text(), "committed %d", &b); err == nil {
				reported = b
				if b >= killAfter {
					break
				}
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatalf("run %d: kill: %v", run, err)
		}
		_ = cmd.Wait() // "signal: killed"
		if reported < killAfter {
			t.Fatalf("run %d: helper stopped after batch %d before the kill; stderr:\n%s", run, reported, stderr.String())
		}
		checkBatches(ctx, t, path, run, reported)
	}
}

// checkBatches opens the database after a kill and checks its integrity and every batch.
func checkBatches(ctx context.Context, t *testing.T, path string, run, reported int) {
	t.Helper()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("run %d: reopen after kill: %v", run, err)
	}
	defer s.Close()
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatalf("run %d: %v", run, err)
	}
	hist, err := s.History(ctx, "crash", 0)
	if err != nil {
		t.Fatalf("run %d: History: %v", run, err)
	}
	type batch struct{ got, size int64 }
	batches := make(map[string]*batch)
	var lastRunBatch = -1
	for i, e := range hist {
		var k, n int
		if _, err := fmt.Sscanf(e.Content, "%d/%d", &k, &n); err != nil {
			t.Fatalf("run %d: unexpected content %q", run, e.Content)
		}
		b := batches[e.TurnID]
		if b == nil {
			b = &batch{size: int64(n)}
			batches[e.TurnID] = b
		} else if hist[i-1].TurnID != e.TurnID {
			t.Fatalf("run %d: batch %s is not contiguous", run, e.TurnID)
		}
		if int64(k) != b.got {
			t.Fatalf("run %d: batch %s: event %d where %d was expected", run, e.TurnID, k, b.got)
		}
		b.got++
		var r, bn int
		if _, err := fmt.Sscanf(e.TurnID, "run%d-batch%d", &r, &bn); err == nil && r == run && bn > lastRunBatch {
			lastRunBatch = bn
		}
	}
	for id, b := range batches {
		if b.got != b.size {
			t.Fatalf("run %d: batch %s has %d of %d events (torn batch)", run, id, b.got, b.size)
		}
	}
	if lastRunBatch < reported {
		t.Fatalf("run %d: child reported batch %d committed, database holds up to %d", run, reported, lastRunBatch)
	}
	for b := 0; b <= lastRunBatch; b++ {
		if batches[fmt.Sprintf("run%d-batch%d", run, b)] == nil {
			t.Fatalf("run %d: batch %d missing before the last stored batch %d", run, b, lastRunBatch)
		}
	}
}
