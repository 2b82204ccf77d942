package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hologramagent/hologram/memory/sqlite"
)

// Open refuses a file it cannot trust and never replaces it: the bytes stay as they were.
func TestOpenRefusesBadFiles(t *testing.T) {
	ctx := context.Background()
	// A real database to damage: its header survives, the schema page after it does not.
	good := filepath.Join(t.TempDir(), "good.db")
	st, err := sqlite.Open(ctx, good, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSetting(ctx, "note", "hello"); err != nil {
		t.Fatal(err)
	}
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	valid, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), valid...)
	for i := 100; i < 4096 && i < len(damaged); i++ {
		damaged[i] = 0xA5
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", []byte{}, sqlite.ErrEmptyFile},
		{"text", []byte("these are my notes, not a database\n"), sqlite.ErrNotDatabase},
		{"short", []byte("SQLite"), sqlite.ErrNotDatabase},
		{"malformed", damaged, sqlite.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hologram.db")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err == nil {
				st.Close()
				t.Fatalf("Open accepted the %s file", tc.name)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			after, _ := os.ReadFile(path)
			if string(after) != string(tc.data) {
				t.Fatalf("Open changed the refused file (%d bytes, was %d)", len(after), len(tc.data))
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "hologram.db")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := sqlite.Open(ctx, path, sqlite.Options{}); !errors.Is(err, sqlite.ErrNotDatabase) {
			t.Fatalf("Open of a directory: %v", err)
		}
	})
}
