package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// runBench measures homed itself (the kernel issue's figures): start to API ready, API overhead
// per turn against an instant fake LLM (p50/p99 over --turns turns, with the fake's own round
// trip measured in the same run as the baseline), and idle RSS. It starts a homed binary (--homed,
// by default the homed next to this executable, else the one on PATH) as a child on a temporary
// data dir. With --against OLD it runs OLD and homed alternately, --runs times each, and reports
// each run and the median ratio new/old: a comparison that holds on a noisy machine.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hologram-bench turns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	turns := fs.Int("turns", 1000, "number of turns to time")
	starts := fs.Int("starts", 5, "number of cold starts to time")
	homed := fs.String("homed", "", "the homed binary to measure (default: next to hologram-bench, else on PATH)")
	against := fs.String("against", "", "a second homed binary (e.g. an older build) run alternately with the first")
	runs := fs.Int("runs", 5, "with --against: runs of each binary")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 0 || *turns <= 0 || *starts <= 0 || *runs <= 0 {
		fmt.Fprintln(stderr, "usage: hologram-bench turns [--turns N] [--starts N] [--homed PATH] [--against OLD [--runs N]]")
		return 2
	}
	exe, err := findHomed(*homed)
	if err == nil {
		if *against == "" {
			var r turnStats
			if r, err = bench(ctx, exe, *turns, *starts); err == nil {
				r.print(stdout, *turns, *starts)
			}
		} else {
			err = benchAgainst(ctx, exe, *against, *turns, *starts, *runs, stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hologram-bench: %v\n", err)
		return 1
	}
	return 0
}

// benchAgainst runs old and exe alternately (old first), runs times each, printing one line per
// run, then the medians and the median of the per-pair ratios new/old.
func benchAgainst(ctx context.Context, exe, old string, turns, starts, runs int, out io.Writer) error {
	fmt.Fprintf(out, "hologram-bench turns: %s (new) against %s (old), %d runs each, alternating, %d turns, instant fake LLM\n", exe, old, runs, turns)
	var olds, news []turnStats
	for i := 0; i < runs; i++ {
		for _, b := range []struct {
			name, exe string
			into      *[]turnStats
		}{{"old", old, &olds}, {"new", exe, &news}} {
			r, err := bench(ctx, b.exe, turns, starts)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", b.name, i+1, err)
			}
			*b.into = append(*b.into, r)
			fmt.Fprintf(out, "run %d %s: turn p50 %s p99 %s   overhead p50 %s p99 %s   ready p50 %s   RSS idle %.1f MB, after the turns %.1f MB\n", i+1, b.name,
				ms(r.TurnP50), ms(r.TurnP99), ms(r.OverheadP50()), ms(r.OverheadP99()), ms(r.ReadyP50), float64(r.IdleRSS)/1024, float64(r.BusyRSS)/1024)
		}
	}
	med := func(rs []turnStats, f func(turnStats) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	p50 := func(r turnStats) float64 { return float64(r.TurnP50) }
	p99 := func(r turnStats) float64 { return float64(r.TurnP99) }
	ratios := make([]turnStats, runs)
	for i := range ratios { // a turnStats per pair, carrying the ratio in TurnP50/TurnP99
		ratios[i] = turnStats{TurnP50: time.Duration(1e6 * p50(news[i]) / p50(olds[i])), TurnP99: time.Duration(1e6 * p99(news[i]) / p99(olds[i]))}
	}
	msf := func(f float64) string { return ms(time.Duration(f)) }
	fmt.Fprintf(out, "median of runs, old: turn p50 %s p99 %s\n", msf(med(olds, p50)), msf(med(olds, p99)))
	fmt.Fprintf(out, "median of runs, new: turn p50 %s p99 %s\n", msf(med(news, p50)), msf(med(news, p99)))
	fmt.Fprintf(out, "new/old, median of per-pair ratios: p50 %.2f  p99 %.2f   (target p50 ≤ 1.0)\n", med(ratios, p50)/1e6, med(ratios, p99)/1e6)
	return nil
}

// turnStats is one run of bench.
type turnStats struct {
	ReadyP50, ReadyMax time.Duration
	TurnP50, TurnP99   time.Duration
	BaseP50, BaseP99   time.Duration // the fake LLM alone
	IdleRSS, BusyRSS   int           // KiB
}

func (r turnStats) OverheadP50() time.Duration { return r.TurnP50 - r.BaseP50 }
func (r turnStats) OverheadP99() time.Duration { return r.TurnP99 - r.BaseP99 }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func (r turnStats) print(out io.Writer, turns, starts int) {
	fmt.Fprintf(out, "hologram-bench turns: homed (%d starts, %d turns, instant fake LLM)\n", starts, turns)
	fmt.Fprintf(out, "start to API ready:   p50 %s  max %s   (target ≤ 300 ms)\n", ms(r.ReadyP50), ms(r.ReadyMax))
	fmt.Fprintf(out, "turn via API:         p50 %s  p99 %s\n", ms(r.TurnP50), ms(r.TurnP99))
	fmt.Fprintf(out, "fake LLM alone:       p50 %s  p99 %s   (same-run baseline)\n", ms(r.BaseP50), ms(r.BaseP99))
	fmt.Fprintf(out, "API overhead:         p50 %s  p99 %s   (turn minus baseline; target p99 ≤ 5 ms)\n", ms(r.OverheadP50()), ms(r.OverheadP99()))
	fmt.Fprintf(out, "turn/baseline ratio:  p50 %.2fx  p99 %.2fx\n", float64(r.TurnP50)/float64(r.BaseP50), float64(r.TurnP99)/float64(r.BaseP99))
	fmt.Fprintf(out, "idle RSS:             %.1f MB   (target ≤ 60 MB); after %d turns %.1f MB\n", float64(r.IdleRSS)/1024, turns, float64(r.BusyRSS)/1024)
}

// findHomed resolves the homed binary to measure: the given path, else homed beside this
// executable (bin/ after make build), else homed on PATH.
func findHomed(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "homed")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("homed")
	if err != nil {
		return "", fmt.Errorf("no homed binary next to hologram-bench or on PATH (build it with make build, or pass --homed PATH)")
	}
	return p, nil
}

func bench(ctx context.Context, exe string, turns, starts int) (turnStats, error) {
	var r turnStats
	tmp, err := os.MkdirTemp("", "hb")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(tmp)

	llmURL, stopLLM, err := instantLLM()
	if err != nil {
		return r, err
	}
	defer stopLLM()

	var readyTimes []time.Duration
	var child *exec.Cmd
	sock := filepath.Join(tmp, "run", "homed.sock")
	for i := 0; i < starts; i++ {
		if child != nil {
			// A start is timed from launch to ready; how the previous one stopped is not
			// measured (an older homed may exit 1 when stopped while still loading plugins).
			if err := stopChild(child); err != nil {
				fmt.Fprintf(os.Stderr, "hologram-bench: %s: %v (the timings stand)\n", exe, err)
			}
		}
		t0 := time.Now()
		child, err = startChild(exe, tmp, sock)
		if err != nil {
			return r, err
		}
		c, err := client.Dial(client.Options{Socket: sock})
		if err != nil {
			return r, err
		}
		for {
			h, err := c.Health(ctx)
			if err == nil && h.Ready {
				break
			}
			if time.Since(t0) > 10*time.Second {
				return r, fmt.Errorf("homed not ready after 10 s: %v", err)
			}
			time.Sleep(time.Millisecond)
		}
		readyTimes = append(readyTimes, time.Since(t0))
	}
	defer stopChild(child)
	// Idle is after the background loads (the lexicon; jieba where Chinese is expected) have
	// finished and settled, not a snapshot of them half done.
	if err := settled(ctx, sock); err != nil {
		return r, err
	}
	idleRSS, err := rssKiB(child.Process.Pid)
	if err != nil {
		return r, err
	}

	c, err := client.Dial(client.Options{Socket: sock})
	if err != nil {
		return r, err
	}
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "instant", BaseURL: llmURL, Model: "instant"}); err != nil {
		return r, err
	}
	// Baseline: the same client machinery straight to the fake LLM (one round trip per turn).
	direct := &http.Client{}
	body := `{"model":"instant","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	var base, turn []time.Duration
	for i := 0; i < turns+50; i++ {
		t0 := time.Now()
		resp, err := direct.Post(llmURL+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return r, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if i >= 50 {
			base = append(base, time.Since(t0))
		}
	}
	for i := 0; i < turns+50; i++ {
		t0 := time.Now()
		res, err := c.Chat(ctx, client.ChatRequest{Input: "bench turn " + strconv.Itoa(i)}, nil)
		if err != nil {
			return r, fmt.Errorf("turn %d: %w", i, err)
		}
		if !strings.HasPrefix(res.Text, "PONG") {
			return r, fmt.Errorf("turn %d: unexpected reply %q", i, res.Text)
		}
		if i >= 50 { // the first turns warm caches
			turn = append(turn, time.Since(t0))
		}
	}
	busyRSS, _ := rssKiB(child.Process.Pid)

	p := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	return turnStats{
		ReadyP50: p(readyTimes, 0.5), ReadyMax: slices.Max(readyTimes),
		TurnP50: p(turn, 0.5), TurnP99: p(turn, 0.99),
		BaseP50: p(base, 0.5), BaseP99: p(base, 0.99),
		IdleRSS: idleRSS, BusyRSS: busyRSS,
	}, nil
}

func startChild(exe, tmp, sock string) (*exec.Cmd, error) {
	cmd := exec.Command(exe, "--data", filepath.Join(tmp, "data"), "--socket", sock, "--key-file", filepath.Join(tmp, "config", "key"), "--log-level", "warn")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	cmd.Stderr = os.Stderr
	return cmd, cmd.Start()
}

func stopChild(cmd *exec.Cmd) error {
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("homed exited with %v", err)
	}
	return err
}

// settled waits until the kernel's pending facilities have stayed the same for two seconds (a
// lazy one, jieba without Chinese, stays pending until a text needs it).
func settled(ctx context.Context, sock string) error {
	c, err := client.Dial(client.Options{Socket: sock})
	if err != nil {
		return err
	}
	defer c.Close()
	t0, since, last := time.Now(), time.Now(), "?"
	for time.Since(since) < 2*time.Second {
		if time.Since(t0) > 60*time.Second {
			return fmt.Errorf("homed still loading after 60 s: %s", last)
		}
		st, err := c.Status(ctx)
		if err != nil {
			return err
		}
		if p := strings.Join(st.Pending, ","); p != last {
			last, since = p, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

func rssKiB(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, errors.New("no VmRSS")
}

// instantLLM serves an OpenAI-compatible endpoint that answers at once with "PONG", streamed.
func instantLLM() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	chunk := func(delta map[string]any, finish any) string {
		b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "model": "instant",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		return "data: " + string(b) + "\n\n"
	}
	stream := chunk(map[string]any{"role": "assistant", "content": "PONG"}, nil) + chunk(map[string]any{}, "stop") + "data: [DONE]\n\n"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/v1", func() { _ = srv.Close() }, nil
}
