package sqlite

import (
	"context"
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
