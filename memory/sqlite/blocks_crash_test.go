//go:build integration

package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
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

// Environment of the child process TestKillDuringBlockMoves starts.
const (
	blockCrashDBEnv   = "HOLOGRAM_BLOCK_CRASH_DB"   // the database
	blockCrashRefsEnv = "HOLOGRAM_BLOCK_CRASH_REFS" // the file of committed block references
	blockCrashSeedEnv = "HOLOGRAM_BLOCK_CRASH_SEED" // the child's random seed
)

// TestBlockMoveChild is not a test on its own: run as a child of TestKillDuringBlockMoves (the
// environment names a database), it appends events with text and image blocks, records every
// committed block as a line "ref <event> <block> <pos>" in the references file (fsync'd), and
// moves events and blocks until killed: SetLayer L1↔L2 of a few events, PinBlock of a block to
// a new or an existing entity. It prints "op N" after each operation. Without that environment
// it returns at once.
func TestBlockMoveChild(t *testing.T) {
	path := os.Getenv(blockCrashDBEnv)
	if path == "" {
		return
	}
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(2)
	}
	seed, err := strconv.ParseUint(os.Getenv(blockCrashSeedEnv), 10, 64)
	if err != nil {
		fail("seed", err)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fail("open", err)
	}
	if _, err := s.CreateSession(ctx, memory.Session{ID: "crash"}); err != nil && !errors.Is(err, memory.ErrExists) {
		fail("create session", err)
	}
	refs, err := os.OpenFile(os.Getenv(blockCrashRefsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fail("references file", err)
	}
	// What earlier runs left: events, blocks, entities.
	var events []int64
	var blocks []string
	var entities []int64
	hist, err := s.History(ctx, "crash", 0)
	if err != nil {
		fail("history", err)
	}
	for _, e := range hist {
		events = append(events, e.ID)
		for _, b := range e.Blocks {
			blocks = append(blocks, b.ID)
			if b.Holder.Entity != 0 {
				entities = append(entities, b.Holder.Entity)
			}
		}
	}
	for op := 0; ; op++ {
		switch k := rng.IntN(10); {
		case k < 3 || len(events) == 0: // append 1 to 3 events with 0 to 3 blocks each
			batch := make([]memory.Event, 1+rng.IntN(3))
			for i := range batch {
				batch[i] = memory.Event{Session: "crash", Role: memory.RoleUser, Content: fmt.Sprintf("op %d event %d", op, i)}
				for j := range rng.IntN(4) {
					if rng.IntN(2) == 0 {
						batch[i].Blocks = append(batch[i].Blocks, memory.Block{Kind: memory.BlockText,
							Text: fmt.Sprintf("note %d/%d/%d\n%s", op, i, j, strings.Repeat("words ", rng.IntN(200)))})
					} else {
						data := make([]byte, rng.IntN(64<<10))
						for x := range data {
							data[x] = byte(rng.Uint32())
						}
						batch[i].Blocks = append(batch[i].Blocks, memory.Block{Kind: memory.BlockImage, MIME: "image/png",
							Data: data, Text: fmt.Sprintf("ocr %d", op)})
					}
				}
			}
			out, err := s.AppendEvents(ctx, batch)
			if err != nil {
				fail("append", err)
			}
			var lines strings.Builder
			for _, e := range out {
				events = append(events, e.ID)
				for pos, b := range e.Blocks {
					blocks = append(blocks, b.ID)
					fmt.Fprintf(&lines, "ref %d %s %d\n", e.ID, b.ID, pos)
				}
			}
			if _, err := refs.WriteString(lines.String()); err != nil { // one write per batch
				fail("record", err)
			}
			if err := refs.Sync(); err != nil {
				fail("sync", err)
			}
		case k < 7: // move a few events to L1 or L2
			ids := make([]int64, 1+rng.IntN(5))
			for i := range ids {
				ids[i] = events[rng.IntN(len(events))]
			}
			if err := s.SetLayer(ctx, ids, memory.Layer(1+rng.IntN(2))); err != nil {
				fail("set layer", err)
			}
		default: // pin a block to a new note or to an existing entity
			if len(blocks) == 0 {
				break
			}
			var to int64
			if len(entities) > 0 && rng.IntN(2) == 0 {
				to = entities[rng.IntN(len(entities))]
			}
			ent, err := s.PinBlock(ctx, blocks[rng.IntN(len(blocks))], to)
			if err != nil {
				fail("pin block", err)
			}
			entities = append(entities, ent.ID)
		}
		fmt.Printf("op %d\n", op)
	}
}

// TestKillDuringBlockMoves SIGKILLs a child that appends, moves and pins blocks (see
// TestBlockMoveChild), twelve times at random moments (seeded and logged; set
// HOLOGRAM_BLOCK_CRASH_SEED to replay), and after each kill reopens the database and checks
// that every block the child recorded is there once with its reference, and that every block
// has exactly one holder that exists.
func TestKillDuringBlockMoves(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	refsPath := filepath.Join(dir, "refs")
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(blockCrashSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s: %v", blockCrashSeedEnv, err)
		}
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	for run := range 12 {
		killAfter := rng.IntN(60)                                 // operations to see before the kill
		delay := time.Duration(rng.IntN(4000)) * time.Microsecond // then this much more
		t.Logf("run %d: kill after op %d + %v", run, killAfter, delay)
		cmd := exec.Command(os.Args[0], "-test.run=^TestBlockMoveChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), blockCrashDBEnv+"="+path, blockCrashRefsEnv+"="+refsPath,
			blockCrashSeedEnv+"="+strconv.FormatUint(seed+uint64(run)+1, 10))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start child: %v", err)
		}
		sc := bufio.NewScanner(out)
		reached := -1
		for reached < killAfter && sc.Scan() {
			fmt.Sscanf(sc.Text(), "op %d", &reached)
		}
		if reached >= killAfter {
			time.Sleep(delay) // the moment of the kill, not a wait for a result
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatalf("run %d: kill: %v", run, err)
		}
		_ = cmd.Wait() // "signal: killed"
		if reached < killAfter {
			t.Fatalf("run %d: child stopped after op %d, before the kill; stderr:\n%s", run, reached, stderr.String())
		}
		checkBlocksAfterKill(ctx, t, path, refsPath, run)
	}
}

// blockRef is a reference the child recorded after its commit.
type blockRef struct {
	event int64
	block string
	pos   int
}

// readBlockRefs reads the references file. A last line without its newline (a write cut by the
// kill) is ignored: its blocks were committed but not recorded, like those of a kill between the
// commit and the write, and only the invariants check them.
func readBlockRefs(t *testing.T, path string) []blockRef {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	} else {
		text = ""
	}
	var refs []blockRef
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		var r blockRef
		if _, err := fmt.Sscanf(line, "ref %d %s %d", &r.event, &r.block, &r.pos); err != nil {
			t.Fatalf("references file: line %q: %v", line, err)
		}
		refs = append(refs, r)
	}
	return refs
}

// checkBlocksAfterKill reopens the database after a kill and checks it.
func checkBlocksAfterKill(ctx context.Context, t *testing.T, path, refsPath string, run int) {
	t.Helper()
	refs := readBlockRefs(t, refsPath)
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("run %d: reopen after kill: %v", run, err)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		s.Close()
		t.Fatalf("run %d: %v", run, err)
	}
	// The store's own reading: every event still references its recorded blocks, in order.
	hist, err := s.History(ctx, "crash", 0)
	if err != nil {
		s.Close()
		t.Fatalf("run %d: History: %v", run, err)
	}
	stored := make(map[int64][]string)
	for _, e := range hist {
		for _, b := range e.Blocks {
			stored[e.ID] = append(stored[e.ID], b.ID)
		}
	}
	for _, r := range refs {
		if got := stored[r.event]; r.pos >= len(got) || got[r.pos] != r.block {
			t.Errorf("run %d: event %d references %v; recorded block %s at %d", run, r.event, got, r.block, r.pos)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, r := range refs {
		var blocks, links int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM blocks WHERE id = ?1),
			(SELECT count(*) FROM event_blocks WHERE event = ?2 AND block = ?1 AND pos = ?3)`, r.block, r.event, r.pos).Scan(&blocks, &links); err != nil {
			t.Fatal(err)
		}
		if blocks != 1 || links != 1 {
			t.Errorf("run %d: recorded block %s of event %d: %d rows in blocks, %d references; want 1 and 1", run, r.block, r.event, blocks, links)
		}
	}
	invariants := []struct{ what, query string }{
		{"blocks without exactly one existing holder in the holder's layer", `SELECT id FROM blocks b WHERE NOT (
			(b.holder_layer IN (1, 2) AND b.holder_entity IS NULL
				AND EXISTS (SELECT 1 FROM events e WHERE e.id = b.holder_event AND e.layer = b.holder_layer))
			OR (b.holder_layer = 3 AND b.holder_event IS NULL
				AND EXISTS (SELECT 1 FROM entities n WHERE n.id = b.holder_entity)))`},
		{"references to missing events or blocks", `SELECT event || ' ' || block FROM event_blocks eb
			WHERE NOT EXISTS (SELECT 1 FROM events WHERE id = eb.event) OR NOT EXISTS (SELECT 1 FROM blocks WHERE id = eb.block)`},
		{"blocks their holder event does not reference", `SELECT id FROM blocks b WHERE b.holder_event IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM event_blocks eb WHERE eb.event = b.holder_event AND eb.block = b.id)`},
		{"blocks no event references", `SELECT id FROM blocks b WHERE NOT EXISTS (SELECT 1 FROM event_blocks eb WHERE eb.block = b.id)`},
		{"entities whose text block they do not hold", `SELECT id FROM entities n WHERE n.block_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.id = n.block_id AND b.holder_entity = n.id AND b.kind = 'text')`},
		{"foreign key violations", `SELECT "table" || ' ' || rowid FROM pragma_foreign_key_check`},
	}
	for _, inv := range invariants {
		rows, err := db.Query(inv.query)
		if err != nil {
			t.Fatalf("run %d: %s: %v", run, inv.what, err)
		}
		var bad []string
		for rows.Next() {
			var v sql.NullString
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			bad = append(bad, v.String)
		}
		rows.Close()
		if len(bad) > 0 {
			t.Errorf("run %d: %s: %v", run, inv.what, bad)
		}
	}
	var nBlocks, nL3 int
	if err := db.QueryRow(`SELECT count(*), count(holder_entity) FROM blocks`).Scan(&nBlocks, &nL3); err != nil {
		t.Fatal(err)
	}
	t.Logf("run %d: %d recorded references, %d blocks (%d in L3), %d events", run, len(refs), nBlocks, nL3, len(hist))
}
