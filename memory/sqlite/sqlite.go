// Package sqlite implements [memory.Store] on one SQLite file (github.com/mattn/go-sqlite3).
//
// The database runs in WAL mode with foreign keys on. A Store holds one writer connection (every
// write is a BEGIN IMMEDIATE transaction on it) and a pool of read-only connections, so reads never
// wait for the writer. The schema is created and upgraded by migrations embedded in the binary
// (migrations/NNNN_name.sql), applied in order, one transaction each; the schema version lives in
// PRAGMA user_version, and a binary refuses a database whose version is newer than it knows.
//
// Build with -tags=sqlite_fts5: without it the FTS5 module is missing and Open fails.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// readers is the size of the read-only connection pool.
const readers = 4

// Errors of [Open] about the file itself, before or while SQLite reads it. The caller (the
// composition root) adds what the owner can do about them; Open never repairs or replaces a
// file it cannot read: that would lose the owner's memory.
var (
	// ErrEmptyFile: the file exists and has zero bytes. A new database is never left empty by
	// Open (it writes the schema at once), so an empty one is a truncated or replaced file.
	ErrEmptyFile = errors.New("the database file is empty (0 bytes)")
	// ErrNotDatabase: the file does not start with SQLite's header.
	ErrNotDatabase = errors.New("the file is not an SQLite database")
	// ErrMalformed: SQLite found the file damaged (SQLITE_CORRUPT or SQLITE_NOTADB).
	ErrMalformed = errors.New("the database file is malformed")
)

// sqliteHeader is the first 16 bytes of every SQLite 3 database file.
const sqliteHeader = "SQLite format 3\x00"

// checkFile refuses an existing file at path that is empty or not an SQLite database; a
// missing file is fine (Open creates it).
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file (%s)", ErrNotDatabase, st.Mode().Type())
	}
	if st.Size() == 0 {
		return ErrEmptyFile
	}
	head := make([]byte, len(sqliteHeader))
	if n, _ := f.ReadAt(head, 0); n < len(head) || string(head) != sqliteHeader {
		return fmt.Errorf("%w: its first bytes are %q", ErrNotDatabase, head[:n])
	}
	return nil
}

// malformed wraps err with [ErrMalformed] when SQLite reports a damaged file.
func malformed(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB) {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return err
}

// Options configures [Open]. The zero value is usable.
type Options struct {
	// Logger receives migration and maintenance logs; nil discards them.
	Logger *slog.Logger
	// Clock returns the current time (session and setting timestamps, event times left zero);
	// nil means time.Now.
	Clock func() time.Time
	// Tokenize turns an event's indexed text (see [memory.IndexedText]) into the tokens of the
	// full-text index, and must be the tokenizer that produces [memory.TextQuery] terms. It must
	// be safe for concurrent use. nil means [memory.DefaultTokenize]. An error fails the
	// AppendEvents call (nothing is stored), or Open when a migration re-indexes old events.
	Tokenize func(text string) ([]string, error)
	// Expand returns extra index terms derived from an event's indexed text (e.g. WordNet
	// hypernyms), stored in the index's expansion column and weighted by [ExpansionWeight] in
	// ranking. nil: no expansion. It must be safe for concurrent use.
	Expand func(text string) []string
}

// Store is a [memory.Store] backed by one SQLite file. It is safe for concurrent use. Its
// exported API is stable; the schema changes only through new migrations.
type Store struct {
	path  string
	log   *slog.Logger
	clock func() time.Time
	tok   memory.Tokenizer
	exp   func(string) []string
	stats indexStats
	dfs   dfCache
	epDFs dfCache // the same for episodes_fts
	w     *sql.DB // one connection: the only writer
	r     *sql.DB // read-only pool
	tails *tailCache
	docs  *docCache // events' index text, for scoring search candidates (doctext.go)
	// cacheMu orders the writes that change cached events: held from the start of such a
	// transaction until the tail cache has seen its commit, so the cache sees commits in order.
	cacheMu sync.Mutex
	// heads caches each session's head (its last event on the current branch), the parent of
	// the next event appended to it; guarded by cacheMu, kept by appendCommitted and dropped
	// by every other write that can move it (invalidateSessions: branch moves, forgetting, restores).
	heads map[string]int64
	ckpt  *checkpointer // nil until Open has set the writer up
	// branched is set once some event is off its branch: recall then filters such events out
	// (before, it skips the join to events that the filter needs).
	branched atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// migration is one embedded schema step.
type migration struct {
	version int
	name    string
	sql     string
}

// Open opens (creating when missing) the database at path and brings its schema up to date. The
// parent directory is created with mode 0700 and a new file with mode 0600. It fails with an error
// wrapping [memory.ErrSchemaTooNew] when the file was written by a newer binary. The caller must
// Close the Store.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("open memory store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open memory store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open memory store: create directory: %w", err)
	}
	if err := checkFile(abs); err != nil {
		return nil, fmt.Errorf("open memory store %s: %w", abs, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open memory store: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("open memory store: %w", err)
	}

	tuneAllocator()
	s := &Store{path: abs, log: opts.Logger, clock: opts.Clock, tails: newTailCache(512, 64), docs: newDocCache(docCacheEntries, docCacheBytes), heads: map[string]int64{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	s.tok = memory.DefaultTokenize
	s.exp = opts.Expand
	if opts.Tokenize != nil {
		s.tok = opts.Tokenize
	}

	uri := (&url.URL{Scheme: "file", Path: abs}).String()
	const stmtCache = "&_stmt_cache_size=64"
	// Each connection keeps its last stmtCache prepared statements: a turn runs the same few
	// dozen queries, and preparing them anew took ≈ 0.7 ms of a 3 ms turn (the per-turn profile
	// in docs/benchmarks.md).
	s.w, err = sql.Open("sqlite3", uri+"?_journal_mode=WAL&_busy_timeout=5000&_synchronous=NORMAL&_foreign_keys=on&_txlock=immediate"+stmtCache)
	if err != nil {
		return nil, fmt.Errorf("open memory store %s: %w", abs, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)

	if err := s.migrate(ctx); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open memory store %s: %w", abs, malformed(err))
	}
	if err := s.loadStats(ctx); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open memory store %s: %w", abs, malformed(err))
	}
	var branched bool
	if err := s.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE off_branch = 1)`).Scan(&branched); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open memory store %s: %w", abs, err)
	}
	s.branched.Store(branched)
	// Checkpoints normally run in the background (see checkpointer); the automatic one inside a
	// commit stays only as a bound on the WAL under continuous writes, which leave the background
	// checkpointer no quiet moment to finish in.
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", walBoundPages)); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open memory store %s: %w", abs, err)
	}
	if s.ckpt, err = startCheckpointer(ctx, uri, s.log.Warn); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open memory store %s: %w", abs, err)
	}

	// The reader pool is opened after the writer has switched the file to WAL, so read-only
	// connections find the -wal and -shm files in place.
	s.r, err = sql.Open("sqlite3", uri+"?mode=ro&_busy_timeout=5000&_foreign_keys=on&_query_only=on"+stmtCache)
	if err != nil {
		s.ckpt.close()
		s.w.Close()
		return nil, fmt.Errorf("open memory store %s: readers: %w", abs, err)
	}
	s.r.SetMaxOpenConns(readers)
	s.r.SetMaxIdleConns(readers)
	if err := s.r.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open memory store %s: readers: %w", abs, err)
	}
	return s, nil
}

// loadMigrations returns the embedded migrations sorted by version.
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := filepath.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		b, err := migrationFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d (versions must be 1, 2, 3, …)", m.name, i+1)
		}
	}
	return ms, nil
}

// MaxSchemaVersion is the schema version this binary creates and understands.
func MaxSchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate applies every embedded migration newer than the file's user_version, each in its own
// transaction that also sets user_version.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	var cur int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if cur > len(ms) {
		return fmt.Errorf("database schema version %d is newer than this binary supports (%d); upgrade hologram: %w",
			cur, len(ms), memory.ErrSchemaTooNew)
	}
	for _, m := range ms[cur:] {
		if err := s.apply(ctx, m); err != nil {
			return err
		}
		s.log.Info("memory store migrated", "path", s.path, "schema_version", m.version, "migration", m.name)
	}
	return nil
}

// postMigrate holds the Go steps of migrations, run after the migration's SQL in its transaction.
var postMigrate = map[int]func(ctx context.Context, s *Store, tx *sql.Tx) error{
	2: reindexAll,
	8: func(ctx context.Context, s *Store, tx *sql.Tx) error {
		t0 := time.Now()
		if err := rebuildEpisodes(ctx, tx); err != nil {
			return err
		}
		s.log.Info("memory store built its episodes", "path", s.path, "took", time.Since(t0).Round(time.Millisecond))
		return nil
	},
}

// reindexAll fills events_fts with every event's tokens (migration 0002 rebuilt the table).
func reindexAll(ctx context.Context, s *Store, tx *sql.Tx) error {
	// Migration 0002 runs before 0003 adds the distilled column and 0006 the branch columns:
	// read them as 0.
	rows, err := tx.QueryContext(ctx, `SELECT `+strings.Replace(eventCols, "last_access, distilled, parent, off_branch", "last_access, 0, 0, 0", 1)+` FROM events ORDER BY id`)
	if err != nil {
		return fmt.Errorf("re-index events: %w", err)
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events_fts (rowid, tokens, expansion) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("re-index events: %w", err)
	}
	defer ins.Close()
	n := 0
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return fmt.Errorf("re-index events: %w", err)
		}
		toks, err := memory.IndexTokens(s.tok, e)
		if err != nil {
			return fmt.Errorf("re-index event %d: tokenize: %w", e.ID, err)
		}
		if _, err := ins.ExecContext(ctx, e.ID, toks, s.expansion(e)); err != nil {
			return fmt.Errorf("re-index event %d: %w", e.ID, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("re-index events: %w", err)
	}
	s.log.Info("memory store re-indexed events", "path", s.path, "events", n)
	return nil
}

// apply runs one migration in one transaction.
func (s *Store) apply(ctx context.Context, m migration) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: begin: %w", m.name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		if strings.Contains(err.Error(), "no such module: fts5") {
			return fmt.Errorf("migration %s: %w (the binary was built without -tags sqlite_fts5)", m.name, err)
		}
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if post := postMigrate[m.version]; post != nil {
		if err := post(ctx, s, tx); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	// PRAGMA takes no parameters; the version is an integer we control.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return fmt.Errorf("migration %s: set schema version: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.name, err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// SchemaVersion returns the schema version recorded in the file (PRAGMA user_version).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns an error listing the problems unless
// SQLite answers "ok". It runs on the writer's connection: SQLite 3.54 reports a false "fts5:
// checksum mismatch" on a connection that read an FTS5 table before another connection changed
// it, which a pooled reader may have done.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.w.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	return fmt.Errorf("integrity check of %s failed: %s", s.path, strings.Join(msgs, "; "))
}

// Checkpoint copies the write-ahead log into the database file and truncates the log
// (PRAGMA wal_checkpoint(TRUNCATE)). It fails when a reader kept the checkpoint from completing.
func (s *Store) Checkpoint(ctx context.Context) error {
	var busy, logFrames, done int
	if s.ckpt != nil {
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
	}
	if err := s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return fmt.Errorf("wal checkpoint: %w", err)
	}
	if busy != 0 {
		return fmt.Errorf("wal checkpoint: incomplete, %d of %d frames copied (readers busy)", done, logFrames)
	}
	return nil
}

// Close closes both connection pools. It is safe to call more than once; later calls return the
// first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.ckpt != nil {
			errs = append(errs, s.ckpt.close())
		}
		if s.r != nil {
			errs = append(errs, s.r.Close())
		}
		errs = append(errs, s.w.Close())
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("close memory store: %w", err)
		}
	})
	return s.closeErr
}

// now returns the clock's time.
func (s *Store) now() time.Time { return s.clock() }

// toNanos converts t to the stored form: UTC unix nanoseconds.
func toNanos(t time.Time) int64 { return t.UnixNano() }

// fromNanos converts a stored time back to a UTC time.Time.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// ExpansionWeight is the weight of the expansion column relative to an event's own terms in
// BM25 ranking: a general word ("martial art") should find a specific one ("taekwondo"), but
// weaker than the word itself would.
const ExpansionWeight = 0.3

// expansion returns the space-joined expansion terms of an event ("" without an expander).
func (s *Store) expansion(e memory.Event) string {
	if s.exp == nil {
		return ""
	}
	return strings.Join(s.exp(memory.IndexedText(e)), " ")
}
