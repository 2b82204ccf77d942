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
// data dir.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hologram-bench turns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	turns := fs.Int("turns", 1000, "number of turns to time")
	starts := fs.Int("starts", 5, "number of cold starts to time")
	homed := fs.String("homed", "", "the homed binary to measure (default: next to hologram-bench, else on PATH)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 0 || *turns <= 0 || *starts <= 0 {
		fmt.Fprintln(stderr, "usage: hologram-bench turns [--turns N] [--starts N] [--homed PATH]")
		return 2
	}
	exe, err := findHomed(*homed)
	if err == nil {
		err = bench(ctx, exe, *turns, *starts, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hologram-bench: %v\n", err)
		return 1
	}
	return 0
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

func bench(ctx context.Context, exe string, turns, starts int, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "hb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	llmURL, stopLLM, err := instantLLM()
	if err != nil {
		return err
	}
	defer stopLLM()

	var readyTimes []time.Duration
	var child *exec.Cmd
	sock := filepath.Join(tmp, "run", "homed.sock")
	for i := 0; i < starts; i++ {
		if child != nil {
			if err := stopChild(child); err != nil {
				return err
			}
		}
		t0 := time.Now()
		child, err = startChild(exe, tmp, sock)
		if err != nil {
			return err
		}
		c, err := client.Dial(client.Options{Socket: sock})
		if err != nil {
			return err
		}
		for {
			h, err := c.Health(ctx)
			if err == nil && h.Ready {
				break
			}
			if time.Since(t0) > 10*time.Second {
				return fmt.Errorf("homed not ready after 10 s: %v", err)
			}
			time.Sleep(time.Millisecond)
		}
		readyTimes = append(readyTimes, time.Since(t0))
	}
	defer stopChild(child)
	time.Sleep(500 * time.Millisecond)
	idleRSS, err := rssKiB(child.Process.Pid)
	if err != nil {
		return err
	}

	c, err := client.Dial(client.Options{Socket: sock})
	if err != nil {
		return err
	}
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "instant", BaseURL: llmURL, Model: "instant"}); err != nil {
		return err
	}
	// Baseline: the same client machinery straight to the fake LLM (one round trip per turn).
	direct := &http.Client{}
	body := `{"model":"instant","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	var base, turn []time.Duration
	for i := 0; i < turns+50; i++ {
		t0 := time.Now()
		resp, err := direct.Post(llmURL+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return err
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
			return fmt.Errorf("turn %d: %w", i, err)
		}
		if !strings.HasPrefix(res.Text, "PONG") {
			return fmt.Errorf("turn %d: unexpected reply %q", i, res.Text)
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
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	fmt.Fprintf(out, "hologram-bench turns: homed (%d starts, %d turns, instant fake LLM)\n", starts, turns)
	fmt.Fprintf(out, "start to API ready:   p50 %s  max %s   (target ≤ 300 ms)\n", ms(p(readyTimes, 0.5)), ms(slices.Max(readyTimes)))
	fmt.Fprintf(out, "turn via API:         p50 %s  p99 %s\n", ms(p(turn, 0.5)), ms(p(turn, 0.99)))
	fmt.Fprintf(out, "fake LLM alone:       p50 %s  p99 %s   (same-run baseline)\n", ms(p(base, 0.5)), ms(p(base, 0.99)))
	fmt.Fprintf(out, "API overhead:         p50 %s  p99 %s   (turn minus baseline; target p99 ≤ 5 ms)\n",
		ms(p(turn, 0.5)-p(base, 0.5)), ms(p(turn, 0.99)-p(base, 0.99)))
	fmt.Fprintf(out, "turn/baseline ratio:  p50 %.2fx  p99 %.2fx\n", float64(p(turn, 0.5))/float64(p(base, 0.5)), float64(p(turn, 0.99))/float64(p(base, 0.99)))
	fmt.Fprintf(out, "idle RSS:             %.1f MB   (target ≤ 60 MB); after %d turns %.1f MB\n", float64(idleRSS)/1024, turns, float64(busyRSS)/1024)
	return nil
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
