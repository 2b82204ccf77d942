package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// checkpointEvery is the number of commits after which the background checkpointer copies the
// WAL back into the database file.
const checkpointEvery = 64

// walBoundPages is the WAL size (in pages) at which SQLite checkpoints inside a commit after all.
const walBoundPages = 8192

// checkpointer moves WAL checkpoints off the commit path. SQLite's automatic checkpoint (every
// 1000 pages by default) runs inside the commit that crosses the threshold and fsyncs the database
// file there, which made that commit, and so that turn, several milliseconds slower than the
// others. This goroutine runs PASSIVE checkpoints on its own connection, which never block the
// writer or the readers; when writes pause, the next write restarts the WAL from its beginning.
// The writer keeps an automatic checkpoint only at walBoundPages, a bound for continuous writes.
type checkpointer struct {
	// mu is held while a checkpoint runs, the background one or Store.Checkpoint's: two at
	// once make the second fail as busy.
	mu      sync.Mutex
	db      *sql.DB
	commits atomic.Int64
	kick    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	log     func(msg string, args ...any)
	ran     func(error) // test hook: called after each checkpoint; set before the first commit
}

func startCheckpointer(ctx context.Context, uri string, log func(string, ...any)) (*checkpointer, error) {
	db, err := sql.Open("sqlite3", uri+"?_busy_timeout=5000")
	if err != nil {
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), log: log}
	c.wg.Add(1)
	go c.loop()
	return c, nil
}

// committed counts one commit and wakes the loop every checkpointEvery commits. It never blocks.
func (c *checkpointer) committed() {
	if c.commits.Add(1)%checkpointEvery == 0 {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

func (c *checkpointer) loop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
			c.mu.Lock()
			_, err := c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
			c.mu.Unlock()
			if err != nil {
				c.log("background checkpoint failed", "err", err)
			}
			if c.ran != nil {
				c.ran(err)
			}
		}
	}
}

func (c *checkpointer) close() error {
	close(c.stop)
	c.wg.Wait()
	return c.db.Close()
}
