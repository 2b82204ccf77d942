package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/kernel/config"
)

// runBenchRecall is `hologram-bench locomo FILE`, `realmem DIR`, `madial DIR` and `recall` (every
// dev set): the recall benchmark with its same-run BM25 baseline, one table, and the JSON report
// (one set: today's LoCoMo shape; several: an object keyed by set name).
func runBenchRecall(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hologram-bench "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.String("json", "", "also write the report as JSON to `file`")
	params := paramFlags{}
	fs.Var(params, "param", "override a recall parameter, `name=value` (the [memory.recall] keys; repeatable)")
	var locomo, realmem, madial, langs *string
	langs = fs.String("lang", "zh,en", "MADial languages")
	if cmd == "recall" {
		locomo = fs.String("locomo", "", "a LoCoMo-format `file`")
		realmem = fs.String("realmem", "", "a `dir` of RealMem persona files")
		madial = fs.String("madial", "", "the MADial-Bench `dir`")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	usage := map[string]string{"locomo": "locomo FILE", "realmem": "realmem DIR", "madial": "madial DIR [--lang zh,en]",
		"recall": "recall [--locomo FILE] [--realmem DIR] [--madial DIR]"}[cmd]
	if (cmd == "recall") != (len(pos) == 0) || len(pos) > 1 {
		fmt.Fprintf(stderr, "usage: hologram-bench %s [--json OUT] [--param name=value]…\n", usage)
		return 2
	}
	var loaders []func() (recallSet, error)
	addMADial := func(dir string) {
		for _, l := range strings.Split(*langs, ",") {
			if l = strings.TrimSpace(l); l != "" {
				loaders = append(loaders, func() (recallSet, error) { return loadMADial(dir, l) })
			}
		}
	}
	switch cmd {
	case "locomo":
		loaders = append(loaders, func() (recallSet, error) { return loadLocomo(pos[0]) })
	case "realmem":
		loaders = append(loaders, func() (recallSet, error) { return loadRealMem(pos[0]) })
	case "madial":
		addMADial(pos[0])
	case "recall":
		if *locomo != "" {
			loaders = append(loaders, func() (recallSet, error) { return loadLocomo(*locomo) })
		}
		if *realmem != "" {
			loaders = append(loaders, func() (recallSet, error) { return loadRealMem(*realmem) })
		}
		if *madial != "" {
			addMADial(*madial)
		}
		if len(loaders) == 0 {
			fmt.Fprintf(stderr, "usage: hologram-bench %s: name at least one set\n", usage)
			return 2
		}
	}
	var sets []recallSet
	for _, load := range loaders {
		s, err := load()
		if err != nil {
			fmt.Fprintf(stderr, "hologram-bench %s: %v\n", cmd, err)
			return 1
		}
		sets = append(sets, s)
	}
	results, err := benchRecall(ctx, sets, params, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "hologram-bench %s: %v\n", cmd, err)
		return 1
	}
	if *jsonOut != "" {
		var v any
		if len(results) == 1 {
			v = results[0].report()
		} else {
			m := map[string]setReport{}
			for _, r := range results {
				m[r.set.Name] = r.report()
			}
			v = m
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "hologram-bench %s: %v\n", cmd, err)
			return 1
		}
	}
	return 0
}

func benchRecall(ctx context.Context, sets []recallSet, params map[string]float64, out io.Writer) ([]*setResult, error) {
	log := slog.New(slog.DiscardHandler)
	mem := daemon.NewMemoryAssets(config.Default(os.Getenv), log)
	defer mem.Close()
	var results []*setResult
	for _, s := range sets {
		r, err := runRecallSet(ctx, s, params, mem)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if len(params) > 0 {
		fmt.Fprintf(out, "recall parameters overridden: %s\n", paramFlags(params))
	}
	fmt.Fprintln(out, "Recall (recall_any / recall_all in %; ours = Kernel.Recall, bm25 = the same-run baseline; tok@10 = median tokens of the top 10; any@10b = any@10 within BM25's top-10 tokens)")
	printTable(out, results)
	return results, nil
}
