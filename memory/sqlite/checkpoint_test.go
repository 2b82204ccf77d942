package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// TestBackgroundCheckpointBoundsTheWAL: automatic checkpoints are off on the writer, so without the
// background checkpointer 3,000 commits would grow the WAL to tens of megabytes.
func TestBackgroundCheckpointBoundsTheWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(ctx, memory.Session{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		if _, err := s.AppendEvents(ctx, []memory.Event{{Session: "a", Role: memory.RoleUser, Content: "some words to index in the full-text table"}}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > (8192+2048)*4096 {
		t.Fatalf("WAL is %d bytes after 3000 commits: checkpoints are not running", fi.Size())
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}
