package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/hologramagent/hologram/cmd/internal/daemon"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
)

// The recall benchmark on a LoCoMo-format file (memory core issue). For each conversation: a
// fresh store with homed's default configuration; the conversation is one group channel
// "locomo:<sample_id>"; every turn is ingested as one event through the kernel's ingest path
// (dia_id kept as metadata, speaker as partner, time from the session date); then, with the store
// frozen, every question is asked from that group session through the same Recall that pre_action
// and coldcontext_query use. Evidence ids go only to the scorer: the answers, observations and
// summaries are never read.

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string   `json:"question"`
		Evidence []string `json:"evidence"`
		Category int      `json:"category"`
	} `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var benchKs = []int{5, 10, 20, 50}

// locomoReport is the JSON the benchmark writes.
type locomoReport struct {
	Categories     map[string]map[string]float64 `json:"categories"`
	LatencyMS      map[string]float64            `json:"latency_ms"`
	TokensPerQuery map[string]float64            `json:"tokens_per_query"`
	Conversations  int                           `json:"conversations"`
	Events         int                           `json:"events"`
	IngestPerSec   float64                       `json:"ingest_events_per_s"`
}

func runBenchLocomo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hologram-bench locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.String("json", "", "also write the report as JSON to `file`")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: hologram-bench locomo FILE [--json OUT]")
		return 2
	}
	rep, err := benchLocomo(ctx, pos[0], stdout)
	if err != nil {
		fmt.Fprintf(stderr, "hologram-bench locomo: %v\n", err)
		return 1
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "hologram-bench locomo: %v\n", err)
			return 1
		}
	}
	return 0
}

var evidenceRe = regexp.MustCompile(`^D:?(\d+):0*(\d+)$`)

// normEvidence normalises evidence ids: "D:11:26" → "D11:26", "D30:05" → "D30:5",
// "D8:6; D9:17" → two ids.
func normEvidence(ev []string) []string {
	var out []string
	for _, e := range ev {
		for _, p := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			p = strings.Trim(p, "()")
			if m := evidenceRe.FindStringSubmatch(p); m != nil {
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				out = append(out, fmt.Sprintf("D%d:%d", a, b))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sessionTime parses LoCoMo's "1:56 pm on 8 May, 2023".
func sessionTime(s string) (time.Time, error) {
	return time.Parse("3:04 pm on 2 January, 2006", strings.TrimSpace(s))
}

type catStats struct {
	n        int
	any, all map[int]int
}

func benchLocomo(ctx context.Context, file string, out io.Writer) (locomoReport, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return locomoReport{}, err
	}
	var samples []locomoSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		return locomoReport{}, fmt.Errorf("%s: %w", file, err)
	}
	tmp, err := os.MkdirTemp("", "locomo")
	if err != nil {
		return locomoReport{}, err
	}
	defer os.RemoveAll(tmp)

	stats := map[string]*catStats{}
	stat := func(key string) *catStats {
		if stats[key] == nil {
			stats[key] = &catStats{any: map[int]int{}, all: map[int]int{}}
		}
		return stats[key]
	}
	var lat []time.Duration
	var toks []int
	var events int
	var ingestTime time.Duration
	log := slog.New(slog.DiscardHandler)
	env := func(k string) string { return os.Getenv(k) }
	cfg := config.Default(env) // homed's defaults: no bench-only settings
	mem := daemon.NewMemoryAssets(cfg, log)
	defer mem.Close()
	for _, s := range samples {
		cfg.DataDir = filepath.Join(tmp, s.SampleID)
		k, store, err := daemon.BenchKernel(ctx, cfg, log, mem, filepath.Join(tmp, "key"))
		if err != nil {
			return locomoReport{}, err
		}
		session := "locomo:" + s.SampleID
		if _, err := k.CreateSession(ctx, client.Session{ID: session, Title: s.SampleID, Channel: "locomo", Scope: "group:" + s.SampleID}); err != nil {
			return locomoReport{}, err
		}
		n, d, err := ingestLocomo(ctx, k, session, s)
		if err != nil {
			return locomoReport{}, fmt.Errorf("%s: %w", s.SampleID, err)
		}
		events += n
		ingestTime += d
		k.SettleMemory()
		// Frozen: only reads from here on.
		for _, q := range s.QA {
			ev := normEvidence(q.Evidence)
			if len(ev) == 0 {
				continue
			}
			// One Recall per k, as the agent asks it (k=5 for pre_action, the tool's k…): the
			// candidate pool scales with k, so a k=10 answer is not the top of a k=50 one.
			got := map[int][]string{}
			for _, kk := range benchKs {
				t0 := time.Now()
				hits, err := k.Recall(ctx, session, q.Question, kk)
				if err != nil {
					return locomoReport{}, err
				}
				ids := make([]string, len(hits))
				tk := 0
				for i, h := range hits {
					ids[i] = h.Event.Meta["dia_id"]
					tk += h.Event.Tokens
				}
				got[kk] = ids
				if kk == 10 {
					lat = append(lat, time.Since(t0))
					toks = append(toks, tk)
				}
			}
			keys := []string{strconv.Itoa(q.Category)}
			if q.Category >= 1 && q.Category <= 4 {
				keys = append(keys, "1-4")
			}
			for _, key := range keys {
				st := stat(key)
				st.n++
				for _, kk := range benchKs {
					top := got[kk]
					hit := 0
					for _, e := range ev {
						if slices.Contains(top, e) {
							hit++
						}
					}
					if hit > 0 {
						st.any[kk]++
					}
					if hit == len(ev) {
						st.all[kk]++
					}
				}
			}
		}
		k.Close()
		store.Close()
	}
	rep := locomoReport{Categories: map[string]map[string]float64{}, Conversations: len(samples), Events: events}
	if ingestTime > 0 {
		rep.IngestPerSec = float64(events) / ingestTime.Seconds()
	}
	names := map[string]string{"1": "1 multi-hop", "2": "2 temporal", "3": "3 open-domain", "4": "4 single-hop", "1-4": "1-4 all", "5": "5 adversarial"}
	fmt.Fprintf(out, "LoCoMo recall (%d conversations, %d events; recall_any/recall_all in %%)\n", len(samples), events)
	fmt.Fprintf(out, "%-15s %5s", "category", "n")
	for _, kk := range benchKs {
		fmt.Fprintf(out, "  any@%-2d all@%-2d", kk, kk)
	}
	fmt.Fprintln(out)
	order := []string{"1", "2", "3", "4", "1-4", "5"}
	for _, key := range order {
		st := stats[key]
		if st == nil {
			continue
		}
		m := map[string]float64{"n": float64(st.n)}
		fmt.Fprintf(out, "%-15s %5d", names[key], st.n)
		for _, kk := range benchKs {
			a, l := float64(st.any[kk])/float64(st.n), float64(st.all[kk])/float64(st.n)
			m[fmt.Sprintf("any@%d", kk)], m[fmt.Sprintf("all@%d", kk)] = a, l
			fmt.Fprintf(out, "  %6.1f %6.1f", 100*a, 100*l)
		}
		fmt.Fprintln(out)
		rep.Categories[key] = m
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	slices.Sort(toks)
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	rep.LatencyMS = map[string]float64{"p50": q(0.5), "p95": q(0.95)}
	med := 0.0
	if len(toks) > 0 {
		med = float64(toks[len(toks)/2])
	}
	rep.TokensPerQuery = map[string]float64{"median": med}
	fmt.Fprintf(out, "recall latency p50 %.2f ms, p95 %.2f ms; median tokens of the top 10: %.0f; ingest %.0f events/s\n",
		rep.LatencyMS["p50"], rep.LatencyMS["p95"], med, rep.IngestPerSec)
	return rep, nil
}

// ingestLocomo stores every turn of a conversation, one LoCoMo session per call.
func ingestLocomo(ctx context.Context, k *kernel.Kernel, session string, s locomoSample) (int, time.Duration, error) {
	var keys []int
	for key := range s.Conversation {
		if n, ok := strings.CutPrefix(key, "session_"); ok && !strings.Contains(n, "_") {
			if i, err := strconv.Atoi(n); err == nil {
				keys = append(keys, i)
			}
		}
	}
	sort.Ints(keys)
	total := 0
	var took time.Duration
	for _, i := range keys {
		var turns []locomoTurn
		if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", i)], &turns); err != nil {
			return 0, 0, fmt.Errorf("session_%d: %w", i, err)
		}
		var dt string
		if raw, ok := s.Conversation[fmt.Sprintf("session_%d_date_time", i)]; ok {
			_ = json.Unmarshal(raw, &dt)
		}
		start, err := sessionTime(dt)
		if err != nil {
			return 0, 0, fmt.Errorf("session_%d date %q: %w", i, dt, err)
		}
		evs := make([]kernel.IngestEvent, 0, len(turns))
		for j, t := range turns {
			text := t.Text
			if t.BlipCaption != "" {
				text += " [shares " + t.BlipCaption + "]"
			}
			evs = append(evs, kernel.IngestEvent{Session: session, Content: text, Partner: t.Speaker,
				Time: start.Add(time.Duration(j) * 30 * time.Second), Meta: map[string]string{"dia_id": t.DiaID}})
		}
		t0 := time.Now()
		if _, err := k.Ingest(ctx, evs); err != nil {
			return 0, 0, err
		}
		took += time.Since(t0)
		total += len(evs)
	}
	return total, took, nil
}
