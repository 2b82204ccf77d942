package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory/sqlite"
)

func TestDailyBackups(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSetting(ctx, "note", "kept in every copy"); err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(dir, "backups")
	day := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	opts := sqlite.BackupOptions{Dir: backups, Clock: func() time.Time { return day }}

	t.Run("a copy is a whole, private database", func(t *testing.T) {
		path, err := st.Backup(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(path) != "hologram-20260301.db" {
			t.Fatalf("copy named %s", path)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("copy mode %v (%v), want 0600", fi.Mode(), err)
		}
		cp, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatalf("the copy does not open: %v", err)
		}
		defer cp.Close()
		if v, err := cp.GetSetting(ctx, "note"); err != nil || v != "kept in every copy" {
			t.Fatalf("copy holds %q, %v", v, err)
		}
	})

	t.Run("the newest 7 are kept", func(t *testing.T) {
		for i := range 9 {
			day = day.AddDate(0, 0, 1)
			if _, err := st.Backup(ctx, opts); err != nil {
				t.Fatalf("day %d: %v", i, err)
			}
		}
		ents, _ := os.ReadDir(backups)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		if len(names) != 7 || names[0] != "hologram-20260304.db" || names[6] != "hologram-20260310.db" {
			t.Fatalf("copies %v, want 7 from 20260304 to 20260310", names)
		}
	})

	t.Run("skipped when free space is under twice the size", func(t *testing.T) {
		low := opts
		low.FreeSpace = func(string) (uint64, error) { return 1 << 10, nil }
		day = day.AddDate(0, 0, 1)
		_, err := st.Backup(ctx, low)
		if !errors.Is(err, sqlite.ErrLowSpace) {
			t.Fatalf("Backup with 1 KiB free: %v", err)
		}
		if _, err := os.Stat(filepath.Join(backups, "hologram-"+day.Format("20060102")+".db")); err == nil {
			t.Fatal("a copy was written anyway")
		}
	})

	t.Run("RunBackups writes one at once, then waits for the day", func(t *testing.T) {
		dir2 := filepath.Join(dir, "run")
		run := sqlite.BackupOptions{Dir: dir2, Every: 50 * time.Millisecond}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { st.RunBackups(rctx, run); close(done) }()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if ents, _ := os.ReadDir(dir2); len(ents) == 1 && filepath.Ext(ents[0].Name()) == ".db" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no copy within 5 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
	})
}
