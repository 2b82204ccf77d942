package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/llm"
)

// The recall benchmark (memory-recall issue), one harness for every set: for each corpus a fresh
// store and kernel with homed's default configuration (plus the --param overrides of an
// ablation); the corpus is one group channel; events go in through Kernel.Ingest (the unit id as
// metadata) and questions through Kernel.Recall, the Recall pre_action and coldcontext_query use.
// Beside it, in the same run and over the same candidates, the plain BM25 baseline (bm25.go).
// Only the relevant units reach the scorer.

var benchKs = []int{5, 10, 20, 50}

// setResult is one set's figures: the product's and the baseline's.
type setResult struct {
	set              recallSet
	n                map[string]int
	any, all         map[string]map[int]int // category → k → questions
	baseAny, baseAll map[string]map[int]int
	anyAtBase        map[string]int // any@10 within the baseline's top-10 tokens
	toks, baseToks   []int
	lat              []time.Duration
	events           int
	ingest           time.Duration
	skipped          int // questions with no relevant unit stored yet
}

func newSetResult(s recallSet) *setResult {
	return &setResult{set: s, n: map[string]int{}, any: map[string]map[int]int{}, all: map[string]map[int]int{},
		baseAny: map[string]map[int]int{}, baseAll: map[string]map[int]int{}, anyAtBase: map[string]int{}}
}

func count(m map[string]map[int]int, cat string, k int) {
	if m[cat] == nil {
		m[cat] = map[int]int{}
	}
	m[cat][k]++
}

// score records one ranking (units, best first) of one question.
func score(anyM, allM map[string]map[int]int, cats []string, rel []string, ranked []string) {
	for _, k := range benchKs {
		top := ranked[:min(k, len(ranked))]
		hit := 0
		for _, e := range rel {
			if slices.Contains(top, e) {
				hit++
			}
		}
		for _, c := range cats {
			if hit > 0 {
				count(anyM, c, k)
			}
			if hit == len(rel) {
				count(allM, c, k)
			}
		}
	}
}

// distinct keeps the first occurrence of each unit (RealMem credits sessions: several passages
// of one session are one session).
func distinct(units []string) []string {
	seen := map[string]bool{}
	out := units[:0:0]
	for _, u := range units {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// runRecallSet runs one set; params are recall parameter overrides (memory.recall config keys).
func runRecallSet(ctx context.Context, set recallSet, params map[string]float64, mem daemon.MemoryAssets) (*setResult, error) {
	tmp, err := os.MkdirTemp("", "recallbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	res := newSetResult(set)
	log := slog.New(slog.DiscardHandler)
	cfg := config.Default(os.Getenv) // homed's defaults: no bench-only settings
	if err := applyParams(&cfg, params); err != nil {
		return nil, err
	}
	for ci, c := range set.Corpora {
		cfg.DataDir = filepath.Join(tmp, fmt.Sprintf("c%d", ci))
		k, store, err := daemon.BenchKernel(ctx, cfg, log, mem, filepath.Join(tmp, "key"))
		if err != nil {
			return nil, err
		}
		err = runCorpus(ctx, k, set, c, res)
		k.Close()
		store.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", set.Name, c.ID, err)
		}
	}
	return res, nil
}

func runCorpus(ctx context.Context, k *kernel.Kernel, set recallSet, c benchCorpus, res *setResult) error {
	session := set.Name + ":" + c.ID
	if _, err := k.Service().CreateSession(ctx, client.Session{ID: session, Title: c.ID, Channel: set.Name, Scope: "group:" + c.ID}); err != nil {
		return err
	}
	base := newBM25()
	stored := map[string]bool{}
	for _, st := range c.Steps {
		for _, q := range st.Queries {
			var rel []string
			for _, u := range q.Relevant {
				if stored[u] {
					rel = append(rel, u)
				}
			}
			rel = distinct(rel)
			if len(rel) == 0 {
				res.skipped++
				continue
			}
			for _, cat := range q.Cats {
				res.n[cat]++
			}
			// The baseline: its top-10 tokens are also the budget of the product's any@10 at
			// BM25's budget.
			order := base.rank(q.Text)
			var bunits []string
			btok := 0
			for i, d := range order {
				bunits = append(bunits, base.units[d])
				if i < 10 {
					btok += llm.EstimateTokens(base.texts[d])
				}
			}
			res.baseToks = append(res.baseToks, btok)
			score(res.baseAny, res.baseAll, q.Cats, rel, distinct(bunits))
			// The product: one Recall per k, as the agent asks (k=5 for pre_action, the tool's
			// k…): the candidate pool scales with k. Session-credited sets ask for more passages
			// than sessions wanted, then keep the first k distinct sessions.
			ranked := map[int][]string{}
			for _, kk := range benchKs {
				want := kk
				if set.Unit == "session" {
					want = min(200, 4*kk)
				}
				t0 := time.Now()
				hits, err := k.Recall(ctx, session, q.Text, want)
				if err != nil {
					return err
				}
				d := time.Since(t0)
				units := make([]string, len(hits))
				for i, h := range hits {
					units[i] = h.Event.Meta["unit"]
				}
				ranked[kk] = distinct(units)
				if kk == 10 {
					res.lat = append(res.lat, d)
					tk, inBudget := 0, []string{}
					for i, h := range hits {
						if i < 10 {
							tk += h.Tokens() // the passage when the event is long: the recall text
						}
					}
					used := 0
					for _, h := range hits {
						if used+h.Tokens() > btok {
							break
						}
						used += h.Tokens()
						inBudget = append(inBudget, h.Event.Meta["unit"])
					}
					res.toks = append(res.toks, tk)
					for _, u := range rel {
						if slices.Contains(inBudget, u) {
							for _, cat := range q.Cats {
								res.anyAtBase[cat]++
							}
							break
						}
					}
				}
			}
			for _, kk := range benchKs {
				r := ranked[kk]
				one := map[string]map[int]int{}
				oneAll := map[string]map[int]int{}
				score(one, oneAll, q.Cats, rel, r)
				for _, cat := range q.Cats {
					if one[cat][kk] > 0 {
						count(res.any, cat, kk)
					}
					if oneAll[cat][kk] > 0 {
						count(res.all, cat, kk)
					}
				}
			}
		}
		if len(st.Events) > 0 {
			evs := make([]kernel.IngestEvent, 0, len(st.Events))
			for _, e := range st.Events {
				meta := map[string]string{"unit": e.Unit}
				if set.Unit == "turn" {
					meta["dia_id"] = e.Unit
				}
				evs = append(evs, kernel.IngestEvent{Session: session, Role: e.Role, Content: e.Text, Partner: e.Partner, Time: e.Time, Meta: meta})
				stored[e.Unit] = true
			}
			t0 := time.Now()
			if _, err := k.Ingest(ctx, evs); err != nil {
				return err
			}
			res.ingest += time.Since(t0)
			res.events += len(evs)
			k.SettleMemory()
		}
		for _, d := range st.Docs {
			base.add(d[0], d[1])
		}
	}
	return nil
}

// applyParams sets recall parameter overrides as the [memory.recall] config keys would.
func applyParams(cfg *config.Config, params map[string]float64) error {
	if len(params) == 0 {
		return nil
	}
	if cfg.Memory.Recall == nil {
		cfg.Memory.Recall = map[string]float64{}
	}
	for k, v := range params {
		cfg.Memory.Recall[k] = v
	}
	return nil
}

// setReport is one set in the JSON: today's LoCoMo shape (categories.{cat}.{any,all}@{k} in
// percent, latency_ms, tokens_per_query.median) plus the baseline's and the ratios.
type setReport struct {
	Categories     map[string]map[string]float64 `json:"categories"`
	LatencyMS      map[string]float64            `json:"latency_ms"`
	TokensPerQuery map[string]float64            `json:"tokens_per_query"`
	Conversations  int                           `json:"conversations"`
	Events         int                           `json:"events"`
	IngestPerSec   float64                       `json:"ingest_events_per_s"`
	Baseline       baselineReport                `json:"baseline_bm25"`
	Skipped        int                           `json:"questions_without_stored_evidence"`
}

type baselineReport struct {
	Categories     map[string]map[string]float64 `json:"categories"`
	TokensPerQuery map[string]float64            `json:"tokens_per_query"`
}

func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(int(1000*float64(a)/float64(n)+0.5)) / 10
}

func median(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return float64(s[len(s)/2])
}

func (r *setResult) report() setReport {
	rep := setReport{Categories: map[string]map[string]float64{}, Conversations: len(r.set.Corpora), Events: r.events, Skipped: r.skipped,
		Baseline: baselineReport{Categories: map[string]map[string]float64{}, TokensPerQuery: map[string]float64{"median": median(r.baseToks)}}}
	for cat, n := range r.n {
		m := map[string]float64{"n": float64(n)}
		b := map[string]float64{"n": float64(n)}
		for _, k := range benchKs {
			m[fmt.Sprintf("any@%d", k)] = pct(r.any[cat][k], n)
			m[fmt.Sprintf("all@%d", k)] = pct(r.all[cat][k], n)
			b[fmt.Sprintf("any@%d", k)] = pct(r.baseAny[cat][k], n)
			b[fmt.Sprintf("all@%d", k)] = pct(r.baseAll[cat][k], n)
		}
		m["any@10_at_bm25_tokens"] = pct(r.anyAtBase[cat], n)
		rep.Categories[cat] = m
		rep.Baseline.Categories[cat] = b
	}
	lat := slices.Clone(r.lat)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	rep.LatencyMS = map[string]float64{"p50": q(0.5), "p95": q(0.95)}
	rep.TokensPerQuery = map[string]float64{"median": median(r.toks)}
	if r.ingest > 0 {
		rep.IngestPerSec = float64(r.events) / r.ingest.Seconds()
	}
	return rep
}

// printTable writes the sets as one table: per set and category the product's row and BM25's.
func printTable(out io.Writer, results []*setResult) {
	fmt.Fprintf(out, "%-10s %-22s %4s %-6s", "set", "category", "n", "method")
	for _, k := range benchKs[:3] {
		fmt.Fprintf(out, " any@%-2d all@%-2d", k, k)
	}
	fmt.Fprintf(out, " %7s %7s %6s %6s\n", "tok@10", "any@10b", "p50ms", "p95ms")
	for _, r := range results {
		rep := r.report()
		for _, cat := range r.set.Order {
			if r.n[cat] == 0 {
				continue
			}
			name := r.set.Names[cat]
			m, b := rep.Categories[cat], rep.Baseline.Categories[cat]
			fmt.Fprintf(out, "%-10s %-22s %4d %-6s", r.set.Name, trunc(name, 22), r.n[cat], "ours")
			for _, k := range benchKs[:3] {
				fmt.Fprintf(out, " %6.1f %6.1f", m[fmt.Sprintf("any@%d", k)], m[fmt.Sprintf("all@%d", k)])
			}
			if cat == r.set.Agg {
				fmt.Fprintf(out, " %7.0f %7.1f %6.2f %6.2f", rep.TokensPerQuery["median"], m["any@10_at_bm25_tokens"], rep.LatencyMS["p50"], rep.LatencyMS["p95"])
			}
			fmt.Fprintln(out)
			fmt.Fprintf(out, "%-10s %-22s %4s %-6s", "", "", "", "bm25")
			for _, k := range benchKs[:3] {
				fmt.Fprintf(out, " %6.1f %6.1f", b[fmt.Sprintf("any@%d", k)], b[fmt.Sprintf("all@%d", k)])
			}
			if cat == r.set.Agg {
				fmt.Fprintf(out, " %7.0f", rep.Baseline.TokensPerQuery["median"])
			}
			fmt.Fprintln(out)
		}
		a, b := rep.Categories[r.set.Agg], rep.Baseline.Categories[r.set.Agg]
		ratio := func(x, y float64) float64 {
			if y == 0 {
				return 0
			}
			return x / y
		}
		closed := func(x, y float64) float64 {
			if y >= 100 {
				return 0
			}
			return (x - y) / (100 - y)
		}
		fmt.Fprintf(out, "%-10s %s: any@10 %.2f× all@10 %.2f× any@5 %.2f× all@5 %.2f× BM25; misses closed any@10 %.2f all@10 %.2f; %d events, ingest %.0f/s, %d questions without stored evidence skipped\n",
			r.set.Name, r.set.Names[r.set.Agg], ratio(a["any@10"], b["any@10"]), ratio(a["all@10"], b["all@10"]), ratio(a["any@5"], b["any@5"]), ratio(a["all@5"], b["all@5"]),
			closed(a["any@10"], b["any@10"]), closed(a["all@10"], b["all@10"]), rep.Events, rep.IngestPerSec, rep.Skipped)
	}
}

func trunc(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// parseParams reads --param name=value flags.
type paramFlags map[string]float64

func (p paramFlags) String() string {
	var s []string
	for k, v := range p {
		s = append(s, fmt.Sprintf("%s=%g", k, v))
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (p paramFlags) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want name=value, got %q", v)
	}
	var f float64
	if _, err := fmt.Sscanf(val, "%g", &f); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p[strings.TrimSpace(name)] = f
	return nil
}
