// Command hologram-bench runs HologramAgent's benchmarks. It is a development tool: `make build`
// builds it into bin/, and no package ships it (the product binaries link no `testing` and no
// memory/memtest).
//
//	hologram-bench [turns] [--turns N] [--starts N] [--homed PATH]
//	    start to API ready, API overhead per turn and idle RSS of a child homed
//	hologram-bench locomo [--json OUT] [--param name=value]… FILE
//	    the memory recall benchmark on a LoCoMo-format file, beside the same-run BM25 baseline
//	hologram-bench realmem DIR | madial DIR [--lang zh,en]
//	    the same on RealMem personas (user↔assistant) and MADial-Bench (Chinese, English)
//	hologram-bench recall --locomo FILE --realmem DIR --madial DIR
//	    every set, one table (make bench-memory)
//	hologram-bench memory [--events N] [--queries N] [--json OUT]
//	    recall latency, ingest rate and RSS on a synthetic store (default 100,000 events)
//	hologram-bench graph [--data DIR] [--sets locomo,realmem,madial-zh] [--out DIR --tag after]
//	    the LLM-free graph's figures and a fixed-seed sample of 100 triples per set
//
// Flags and arguments may come in any order (`locomo FILE --json OUT` or `locomo --json OUT FILE`).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: hologram-bench COMMAND [flags] [args]

Commands:
  turns [--turns N] [--starts N] [--homed PATH]
    	measure start to ready, API overhead per turn and idle RSS of a child homed (the default)
  locomo FILE [--json OUT] [--param name=value]...
    	the memory recall benchmark on a LoCoMo-format file, beside the same-run BM25 baseline
  realmem DIR, madial DIR [--lang zh,en]
    	the same on RealMem personas and MADial-Bench
  recall [--locomo FILE] [--realmem DIR] [--madial DIR]
    	several sets, one table (make bench-memory)
  memory [--events N] [--queries N] [--json OUT]
    	recall latency, ingest rate and RSS on a synthetic store (default 100,000 events)
  graph [--data DIR] [--sets locomo,realmem,madial-zh] [--out DIR] [--tag after]
    	the LLM-free graph's figures and a fixed-seed sample of triples per set (docs/memory-graph.md)`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "locomo", "realmem", "madial", "recall":
			return runBenchRecall(ctx, args[0], args[1:], stdout, stderr)
		case "memory":
			return runBenchMemory(ctx, args[1:], stdout, stderr)
		case "graph":
			return runGraphQuality(ctx, args[1:], stdout, stderr)
		case "turns":
			return runBench(ctx, args[1:], stdout, stderr)
		case "help", "-h", "-help", "--help":
			fmt.Fprintln(stdout, usage)
			return 0
		}
		if len(args[0]) > 0 && args[0][0] != '-' {
			fmt.Fprintf(stderr, "hologram-bench: unknown command %q (commands: turns, locomo, realmem, madial, recall, memory, graph)\n", args[0])
			return 2
		}
	}
	return runBench(ctx, args, stdout, stderr)
}

// parseInterleaved parses fs's flags wherever they stand among the positional arguments (the
// standard flag package stops at the first positional one) and returns the positional ones in
// order. Everything after "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		before := len(args)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse consumed a "--" when rest is shorter than what it parsed and rest[0] follows it.
		consumed := args[:before-len(rest)]
		if len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
