package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// TestCheckpointerRunsEveryNCommits: the writer's automatic checkpoint only bounds the WAL at
// walBoundPages, so the background checkpointer must run after every checkpointEvery commits.
func TestCheckpointerRunsEveryNCommits(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ran := make(chan error, 8)
	s.ckpt.ran = func(err error) { ran <- err }
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < checkpointEvery-1; i++ {
		if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-ran:
		t.Fatalf("checkpoint ran after %d commits (%v)", checkpointEvery-1, err)
	default:
	}
	if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "x"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("checkpoint failed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no checkpoint after checkpointEvery commits")
	}
}

// TestBackgroundCheckpointBoundsTheWAL: automatic checkpoints are off on the writer (up to
// walBoundPages), so without the background checkpointer 3,000 commits would grow the WAL to tens
// of megabytes. The test waits for each background checkpoint as it is due, so the bound does not
// depend on how the machine schedules the checkpointer's goroutine.
func TestBackgroundCheckpointBoundsTheWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ran := make(chan error, 1)
	s.ckpt.ran = func(err error) { ran <- err }
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	commits := 0
	for i := 0; i < 3000; i++ {
		if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "some words to index in the full-text table"}}); err != nil {
			t.Fatal(err)
		}
		if commits++; commits%checkpointEvery == 0 {
			select {
			case err := <-ran:
				if err != nil {
					t.Fatalf("background checkpoint: %v", err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("no background checkpoint after %d commits", commits)
			}
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > (8192+2048)*4096 {
		t.Fatalf("WAL is %d bytes after 3000 commits: checkpoints do not bound it", fi.Size())
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointBesideBackground: Checkpoint (homed calls it when it stops) while the background
// checkpointer runs its own must not fail as busy; the two take turns.
func TestCheckpointBesideBackground(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{}, 1)
	s.ckpt.ran = func(error) {
		select {
		case ran <- struct{}{}:
		default:
		}
	}
	for round := 0; round < 20; round++ {
		for i := 0; i < checkpointEvery; i++ { // the last commit wakes the background checkpointer
			if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "some words to fill the log"}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Checkpoint(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		<-ran
	}
}
