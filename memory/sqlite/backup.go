package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Daily backups: a consistent copy of the database written by VACUUM INTO, which only reads
// the database, on a connection apart from the writer's, so turns never wait for it (WAL:
// readers and the writer do not block each other). Copies are DIR/hologram-YYYYMMDD.db (the UTC day), mode 0600,
// written under a temporary name and renamed, so a copy is complete or absent; the newest
// BackupOptions.Keep are kept.

// BackupOptions configures [Store.Backup] and [Store.RunBackups]. Dir is required.
type BackupOptions struct {
	// Dir holds the copies (created 0700).
	Dir string
	// Keep is how many copies are kept, newest first (default 7).
	Keep int
	// Every is how often a copy is made (default 24 h); RunBackups checks hourly (or every
	// Every, when shorter) whether the newest copy is older.
	Every time.Duration
	// Clock is the time source (default time.Now).
	Clock func() time.Time
	// FreeSpace reports the bytes available in a directory (default statfs(2)); a test may
	// inject a small value to see the skip.
	FreeSpace func(dir string) (uint64, error)
}

func (o *BackupOptions) defaults() {
	if o.Keep <= 0 {
		o.Keep = 7
	}
	if o.Every <= 0 {
		o.Every = 24 * time.Hour
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.FreeSpace == nil {
		o.FreeSpace = freeSpace
	}
}

// ErrLowSpace is the reason a backup was skipped: the backup directory's file system has less
// free space than twice the database's size.
var ErrLowSpace = errors.New("not enough free space for a backup")

const backupPrefix, backupSuffix = "hologram-", ".db"

// Backup writes today's copy now, replacing one made earlier today, and prunes the oldest
// beyond Keep. It returns the copy's path. With less free space than twice the database's size
// it writes nothing and returns an error wrapping [ErrLowSpace].
func (s *Store) Backup(ctx context.Context, opts BackupOptions) (string, error) {
	opts.defaults()
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	size, err := s.fileSize()
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	free, err := opts.FreeSpace(opts.Dir)
	if err != nil {
		return "", fmt.Errorf("backup: free space of %s: %w", opts.Dir, err)
	}
	if free < 2*uint64(size) {
		return "", fmt.Errorf("backup: %w: %d MB free in %s, the database is %d MB", ErrLowSpace, free>>20, opts.Dir, size>>20)
	}
	final := filepath.Join(opts.Dir, backupPrefix+opts.Clock().UTC().Format("20060102")+backupSuffix)
	tmp := final + ".tmp"
	_ = os.Remove(tmp) // a copy a crash interrupted
	// VACUUM INTO wants a missing or empty file: made here, so its mode is ours.
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	f.Close()
	if err := s.vacuumInto(ctx, tmp); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("backup: VACUUM INTO %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("backup: %w", err)
	}
	copies, _ := listBackups(opts.Dir)
	for len(copies) > opts.Keep {
		if err := os.Remove(filepath.Join(opts.Dir, copies[0])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("backup: removing an old copy", "file", copies[0], "err", err)
		}
		copies = copies[1:]
	}
	return final, nil
}

// RunBackups makes a copy whenever the newest one is older than Every (at once when there is
// none), until ctx ends. Skips and failures are logged, never fatal.
func (s *Store) RunBackups(ctx context.Context, opts BackupOptions) {
	opts.defaults()
	check := min(time.Hour, opts.Every)
	for {
		if due(opts) {
			t0 := time.Now()
			path, err := s.Backup(ctx, opts)
			switch {
			case errors.Is(err, ErrLowSpace):
				s.log.Warn("daily backup skipped", "err", err)
			case err != nil && ctx.Err() == nil:
				s.log.Error("daily backup failed", "err", err)
			case err == nil:
				s.log.Info("daily backup written", "file", path, "ms", time.Since(t0).Milliseconds())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(check):
		}
	}
}

// due reports whether the newest copy in opts.Dir is older than opts.Every (or missing).
func due(opts BackupOptions) bool {
	copies, _ := listBackups(opts.Dir)
	if len(copies) == 0 {
		return true
	}
	fi, err := os.Stat(filepath.Join(opts.Dir, copies[len(copies)-1]))
	return err != nil || opts.Clock().Sub(fi.ModTime()) >= opts.Every
}

// listBackups returns the names of the copies in dir, oldest first.
func listBackups(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, backupPrefix) && strings.HasSuffix(n, backupSuffix) {
			out = append(out, n)
		}
	}
	slices.Sort(out) // the date in the name sorts as a string
	return out, nil
}

// vacuumInto writes a copy of the database to path on a connection of its own. VACUUM INTO
// only reads the database (one read transaction: in WAL mode the writer goes on), but the pool's
// read-only connections cannot use it (SQLite opens the output with the connection's flags), so
// the copy gets a connection that is opened for it and closed after.
func (s *Store) vacuumInto(ctx context.Context, path string) error {
	uri := (&url.URL{Scheme: "file", Path: s.path}).String()
	db, err := sql.Open("sqlite3", uri+"?_busy_timeout=5000")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.ExecContext(ctx, "VACUUM INTO ?", path)
	return err
}

// fileSize is the database's size: the main file and its WAL.
func (s *Store) fileSize() (int64, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0, err
	}
	n := fi.Size()
	if wal, err := os.Stat(s.path + "-wal"); err == nil {
		n += wal.Size()
	}
	return n, nil
}

// freeSpace is the bytes available to an unprivileged user in dir's file system.
func freeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
