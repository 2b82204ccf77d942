package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/memory/memtest"
)

// The memory scale benchmark (memory core issue): a synthetic store of --events events from
// memtest.Synth (LoCoMo dev-split turn lengths, a Zipfian vocabulary of 50,000 pseudo-words,
// 30% Chinese), in a fresh store and kernel built as homed builds them. Ingest goes through
// Kernel.Ingest, each call one transaction acknowledged after its commit: the first --single
// events one per call (separate ingests), the rest 50 per call (concurrent ingests sharing a
// transaction). RSS is read after ingest, with jieba loaded by the Chinese events. Then, on one
// core (GOMAXPROCS 1), --queries fresh queries go through Kernel.Recall as the owner (k = 10);
// the same-run baselines are plain FTS5 queries of the same index terms straight on the store's
// database: a bm25()-ranked OR of all the terms (top 10), and an unranked MATCH of the query's
// first term (10 rows). Baseline times include tokenising the query, as Recall's do.

// memoryBenchSeed seeds the corpus; the queries use memoryBenchSeed+1 (and +2 for warm-up).
const memoryBenchSeed = 20240801

// memoryReport is the JSON the benchmark writes.
type memoryReport struct {
	Events       int                           `json:"events"`
	Queries      int                           `json:"queries"`
	Ingest       map[string]memoryIngestReport `json:"ingest"`
	RSSMB        float64                       `json:"rss_mb"`
	RSSCorpusMB  float64                       `json:"rss_with_corpus_mb"`
	JiebaLoaded  bool                          `json:"jieba_loaded"`
	RecallMS     map[string]float64            `json:"recall_ms"`
	BaselineORMS map[string]float64            `json:"baseline_fts5_bm25_or_ms"`
	BaselineOne  map[string]float64            `json:"baseline_fts5_one_term_ms"`
}

type memoryIngestReport struct {
	PerCall      int     `json:"per_call"`
	Events       int     `json:"events"`
	EventsPerSec float64 `json:"events_per_s"`
}

func runBenchMemory(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hologram-bench memory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	events := fs.Int("events", 100_000, "number of synthetic events to store")
	queries := fs.Int("queries", 500, "number of recall queries to time")
	single := fs.Int("single", 10_000, "how many of the events are ingested one per call (the rest 50 per call)")
	jsonOut := fs.String("json", "", "also write the report as JSON to `file`")
	cpuProf := fs.String("cpuprofile", "", "write a CPU profile of the timed queries (recall only) to `file`")
	params := paramFlags{}
	fs.Var(params, "param", "override a recall parameter, `name=value` (the [memory.recall] keys; repeatable)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 0 || *events <= 0 || *queries <= 0 || *single < 0 {
		fmt.Fprintln(stderr, "usage: hologram-bench memory [--events N] [--queries N] [--single N] [--json OUT] [--cpuprofile FILE] [--param name=value]…")
		return 2
	}
	rep, err := benchMemory(ctx, *events, *queries, min(*single, *events), *cpuProf, params, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "hologram-bench memory: %v\n", err)
		return 1
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "hologram-bench memory: %v\n", err)
			return 1
		}
	}
	return 0
}

func benchMemory(ctx context.Context, nEvents, nQueries, single int, cpuProf string, params paramFlags, out io.Writer) (memoryReport, error) {
	tmp, err := os.MkdirTemp("", "membench")
	if err != nil {
		return memoryReport{}, err
	}
	defer os.RemoveAll(tmp)

	log := slog.New(slog.DiscardHandler)
	env := func(k string) string { return os.Getenv(k) }
	cfg := config.Default(env) // homed's defaults: no bench-only settings
	cfg.DataDir = filepath.Join(tmp, "data")
	cfg.Memory.Recall = params // the [memory.recall] overrides (none: the defaults)
	mem := daemon.NewMemoryAssets(cfg, log)
	defer mem.Close()
	k, store, err := daemon.BenchKernel(ctx, cfg, log, mem, filepath.Join(tmp, "key"))
	if err != nil {
		return memoryReport{}, err
	}
	defer store.Close()
	defer k.Close()
	dbPath := store.Path()

	corpus := memtest.Synth(memtest.SynthOptions{Events: nEvents, Seed: memoryBenchSeed})
	queries := corpus.Queries(nQueries, memoryBenchSeed+1)
	warm := corpus.Queries(20, memoryBenchSeed+2)
	for _, s := range corpus.Sessions {
		if _, err := k.Service().CreateSession(ctx, client.Session{ID: s.ID, Title: s.Title, Channel: s.Channel, Partner: s.Partner,
			Scope: s.Scope.String()}); err != nil {
			return memoryReport{}, err
		}
	}
	rep := memoryReport{Events: nEvents, Queries: nQueries, Ingest: map[string]memoryIngestReport{}}
	ingest := func(from, to, per int) error {
		if from >= to {
			return nil
		}
		t0 := time.Now()
		for i := from; i < to; i += per {
			batch := make([]kernel.IngestEvent, 0, per)
			for _, e := range corpus.Events[i:min(i+per, to)] {
				batch = append(batch, kernel.IngestEvent{Session: e.Session, Role: e.Role, Content: e.Content, Partner: e.Partner, Time: e.Time})
			}
			if _, err := k.Ingest(ctx, batch); err != nil {
				return fmt.Errorf("ingest event %d: %w", i, err)
			}
		}
		d := time.Since(t0)
		rep.Ingest[fmt.Sprintf("%d_per_call", per)] = memoryIngestReport{PerCall: per, Events: to - from, EventsPerSec: float64(to-from) / d.Seconds()}
		return nil
	}
	if err := ingest(0, single, 1); err != nil {
		return memoryReport{}, err
	}
	if err := ingest(single, nEvents, 50); err != nil {
		return memoryReport{}, err
	}
	rep.JiebaLoaded = mem.Tok.Loaded()
	// RSS of the settled kernel: its background work on what was stored (scene observation)
	// has caught up, as it does within moments of a real ingest.
	k.SettleMemory()
	if kb, err := rssKiB(os.Getpid()); err == nil {
		rep.RSSCorpusMB = float64(kb) / 1024
	}
	// The corpus is the benchmark's, not homed's: drop it before reading homed's RSS.
	corpus = memtest.SynthCorpus{}
	runtime.GC()
	debug.FreeOSMemory()
	if kb, err := rssKiB(os.Getpid()); err == nil {
		rep.RSSMB = float64(kb) / 1024
	}

	// Baselines read the store's database directly, read-only.
	db, err := sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: dbPath}).String()+"?mode=ro&_busy_timeout=5000&_query_only=on")
	if err != nil {
		return memoryReport{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ftsOR := func(q string) error {
		terms, err := mem.Tok.Tokens(q)
		if err != nil || len(terms) == 0 {
			return err
		}
		quoted := make([]string, len(terms))
		for i, t := range terms {
			quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
		}
		return drain(db.QueryContext(ctx, `SELECT rowid FROM events_fts WHERE events_fts MATCH ? ORDER BY bm25(events_fts) LIMIT 10`,
			strings.Join(quoted, " OR ")))
	}
	ftsOne := func(q string) error {
		terms, err := mem.Tok.Tokens(q)
		if err != nil || len(terms) == 0 {
			return err
		}
		return drain(db.QueryContext(ctx, `SELECT rowid FROM events_fts WHERE events_fts MATCH ? LIMIT 10`,
			`"`+strings.ReplaceAll(terms[0], `"`, `""`)+`"`))
	}
	recall := func(q string) error {
		_, err := k.Recall(ctx, "", q, 10) // "" is the owner's view
		return err
	}

	prev := runtime.GOMAXPROCS(1) // one core for the query phase
	defer runtime.GOMAXPROCS(prev)
	type phase struct {
		name string
		run  func(string) error
		lat  []time.Duration
	}
	phases := []*phase{{name: "recall", run: recall}, {name: "fts5 bm25 OR", run: ftsOR}, {name: "fts5 one term", run: ftsOne}}
	for _, p := range phases {
		for _, q := range warm {
			if err := p.run(q); err != nil {
				return memoryReport{}, fmt.Errorf("%s %q: %w", p.name, q, err)
			}
		}
	}
	// Interleaved, so the three see the same cache and machine state.
	for _, q := range queries {
		for _, p := range phases {
			t0 := time.Now()
			if err := p.run(q); err != nil {
				return memoryReport{}, fmt.Errorf("%s %q: %w", p.name, q, err)
			}
			p.lat = append(p.lat, time.Since(t0))
		}
	}
	if cpuProf != "" { // a separate pass, so profiling does not slow the timed one
		f, err := os.Create(cpuProf)
		if err != nil {
			return memoryReport{}, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return memoryReport{}, err
		}
		for _, q := range queries {
			if err := recall(q); err != nil {
				pprof.StopCPUProfile()
				f.Close()
				return memoryReport{}, err
			}
		}
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return memoryReport{}, err
		}
	}
	pct := func(d []time.Duration) map[string]float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		q := func(p float64) float64 {
			return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
		}
		return map[string]float64{"p50": q(0.5), "p95": q(0.95), "p99": q(0.99)}
	}
	rep.RecallMS, rep.BaselineORMS, rep.BaselineOne = pct(phases[0].lat), pct(phases[1].lat), pct(phases[2].lat)

	fmt.Fprintf(out, "hologram-bench memory (%d synthetic events, %d queries; GOMAXPROCS 1 for queries)\n", nEvents, nQueries)
	for _, key := range []string{"1_per_call", "50_per_call"} {
		if r, ok := rep.Ingest[key]; ok {
			fmt.Fprintf(out, "ingest %2d/call:       %7.0f events/s over %d events   (target ≥ 1000)\n", r.PerCall, r.EventsPerSec, r.Events)
		}
	}
	fmt.Fprintf(out, "RSS after ingest:     %.1f MB (jieba loaded: %v; %.1f MB before dropping the corpus)   (target ≤ 250 MB)\n",
		rep.RSSMB, rep.JiebaLoaded, rep.RSSCorpusMB)
	row := func(name string, m map[string]float64, note string) {
		fmt.Fprintf(out, "%-21s p50 %6.2f ms  p95 %6.2f ms  p99 %6.2f ms%s\n", name+":", m["p50"], m["p95"], m["p99"], note)
	}
	row("recall (k=10)", rep.RecallMS, "   (target p50 ≤ 20, p95 ≤ 60)")
	row("fts5 bm25 OR top 10", rep.BaselineORMS, "   (same-run baseline)")
	row("fts5 one term", rep.BaselineOne, "   (same-run baseline)")
	for _, b := range []struct {
		name string
		m    map[string]float64
	}{{"bm25 OR", rep.BaselineORMS}, {"one term", rep.BaselineOne}} {
		fmt.Fprintf(out, "recall/%-14s p50 %.2fx  p95 %.2fx  p99 %.2fx\n", b.name+":",
			rep.RecallMS["p50"]/b.m["p50"], rep.RecallMS["p95"]/b.m["p95"], rep.RecallMS["p99"]/b.m["p99"])
	}
	return rep, nil
}

// drain reads and closes rows.
func drain(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
	}
	return rows.Err()
}
