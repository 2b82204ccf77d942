//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// The end-to-end tests run the real homed and waiter binaries, built once with the Makefile's
// flags, against llmtest's fake OpenAI-compatible server, over the real unix socket.

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hbin")
	if err != nil {
		panic(err)
	}
	binDir = dir
	goBin := goTool(nil)
	for _, c := range []string{"homed", "waiter"} {
		cmd := exec.Command(goBin, "build", "-trimpath", "-tags=sqlite_fts5", "-o", filepath.Join(dir, c), "../"+c)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", c, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one installation: data dir, config dir (key file), runtime dir (socket).
type env struct {
	t      *testing.T
	root   string
	data   string
	sock   string
	config string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := os.MkdirTemp("", "he") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	return &env{t: t, root: root, data: filepath.Join(root, "data"), sock: filepath.Join(root, "run", "homed.sock"), config: filepath.Join(root, "config")}
}

func (e *env) environ(extra ...string) []string {
	return append(os.Environ(), append([]string{
		"XDG_CONFIG_HOME=" + e.config, "XDG_DATA_HOME=" + filepath.Join(e.root, "xdgdata"), "XDG_RUNTIME_DIR=" + filepath.Join(e.root, "run"),
		"HOLOGRAM_SOCKET=" + e.sock, "HOLOGRAM_API_KEY=", "HOLOGRAM_TOKEN=",
	}, extra...)...)
}

// homed is a running homed child.
type homed struct {
	cmd    *exec.Cmd
	stdout *syncBuf
	stderr *syncBuf
	done   chan struct{}
	err    error
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// start runs homed and waits (by reading its log, not by sleeping) until it says it is ready.
func (e *env) start(args ...string) *homed {
	e.t.Helper()
	h, ready := e.spawn(args...)
	select {
	case <-ready:
	case <-h.done:
		e.t.Fatalf("homed exited before ready: %v\n%s", h.err, h.stderr)
	case <-time.After(30 * time.Second):
		e.t.Fatalf("homed not ready in 30 s:\n%s", h.stderr)
	}
	return h
}

func (e *env) spawn(args ...string) (*homed, chan struct{}) {
	e.t.Helper()
	args = append([]string{"--data", e.data, "--socket", e.sock}, args...)
	h := &homed{cmd: exec.Command(filepath.Join(binDir, "homed"), args...), stdout: &syncBuf{}, stderr: &syncBuf{}, done: make(chan struct{})}
	h.cmd.Env = e.environ()
	h.cmd.Stdout = h.stdout
	pr, pw := io.Pipe()
	h.cmd.Stderr = pw
	ready := make(chan struct{})
	scanned := make(chan struct{}) // every line of stderr is in h.stderr
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			h.stderr.Write([]byte(line + "\n"))
			if strings.Contains(line, "homed ready") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	if err := h.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { h.err = h.cmd.Wait(); pw.Close(); <-scanned; close(h.done) }()
	e.t.Cleanup(func() { h.cmd.Process.Kill(); <-h.done })
	return h, ready
}

func (h *homed) stop(t *testing.T) {
	t.Helper()
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("homed ignored SIGTERM:\n%s", h.stderr)
	}
	if h.err != nil {
		t.Fatalf("homed exited with %v on SIGTERM:\n%s", h.err, h.stderr)
	}
}

// listening returns the address and TLS fingerprint homed logged before it was ready.
func (h *homed) listening(t *testing.T) (addr, fp string) {
	t.Helper()
	for _, line := range strings.Split(h.stderr.String(), "\n") {
		if !strings.Contains(line, `msg="api listening"`) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "addr="); ok {
				addr = v
			}
			if v, ok := strings.CutPrefix(f, "fingerprint="); ok {
				fp = v
			}
		}
	}
	if addr == "" {
		t.Fatalf("homed logged no listening address:\n%s", h.stderr)
	}
	return addr, fp
}

func (h *homed) kill9() {
	h.cmd.Process.Signal(syscall.SIGKILL)
	<-h.done
}

// waiter runs the waiter binary; stdin may be empty.
func (e *env) waiter(stdin string, extraEnv []string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "waiter"), args...)
	cmd.Env = e.environ(extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, er bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &er
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code == -1 {
		e.t.Fatalf("waiter %v: %v", args, err)
	}
	return o.String(), er.String(), code
}

func (e *env) addProvider(url, key string) {
	e.t.Helper()
	out, errOut, code := e.waiter("", []string{"HOLOGRAM_API_KEY=" + key}, "provider", "add", "fake", "--base-url", url, "--model", "fake-1")
	if code != 0 {
		e.t.Fatalf("provider add: exit %d\n%s%s", code, out, errOut)
	}
}

func (e *env) ask(text string) string {
	e.t.Helper()
	out, errOut, code := e.waiter("", nil, "ask", text)
	if code != 0 {
		e.t.Fatalf("waiter ask %q: exit %d: %s", text, code, errOut)
	}
	return strings.TrimSpace(out)
}

// unixHTTP is an HTTP client over the kernel's socket.
func (e *env) unixHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", e.sock)
	}}}
}

func (e *env) postJSON(path string, body any, header ...string) (int, []byte) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest("POST", "http://hologram"+path, r)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.unixHTTP().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func TestWaiterAskMultiRoundToolTurn(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	h := e.start()
	key := "sk-e2e-SECRET-4711"
	e.addProvider(fake.URL(), key)
	// Two tool rounds, then the final text.
	fake.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "time_now", Arguments: `{}`}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "time_now", Arguments: `{"timezone":"Asia/Shanghai"}`}}},
		llmtest.Reply{Text: "It is late in Shanghai."},
	)
	if got := e.ask("what time is it here and in Shanghai?"); got != "It is late in Shanghai." {
		t.Fatalf("reply %q", got)
	}
	reqs := fake.Requests()
	var chats []llmtest.Recorded
	for _, r := range reqs {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			chats = append(chats, r)
		}
	}
	if len(chats) != 3 {
		t.Fatalf("want 3 LLM requests, got %d", len(chats))
	}
	last := chats[2].Messages
	var toolMsgs int
	for _, m := range last {
		if m.Role == "tool" {
			toolMsgs++
			if !strings.Contains(m.Content, "20") { // an RFC 3339 year
				t.Errorf("tool result does not look like a time: %q", m.Content)
			}
		}
	}
	if toolMsgs != 2 {
		t.Fatalf("third request carries %d tool results, want 2: %+v", toolMsgs, last)
	}
	if chats[0].Auth != "Bearer "+key {
		t.Fatalf("auth header %q", chats[0].Auth)
	}
	if !contains(chats[0].Tools, "time_now") {
		t.Fatalf("time_now not offered: %v", chats[0].Tools)
	}
	// History shows the whole turn through the API.
	out, _, code := e.waiter("", nil, "history", "--json")
	if code != 0 || !strings.Contains(out, `"tool_call_id"`) {
		t.Fatalf("history: %d %s", code, out)
	}
	h.stop(t)
	// The key is sealed at rest: no plaintext anywhere under the data dir.
	filepath.Walk(e.data, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(key)) {
				t.Errorf("provider key in plaintext in %s", p)
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(e.config, "hologram", "key")); err != nil {
		t.Fatalf("key file not in the config dir: %v", err)
	}
}

func TestOpenAICompatibleSessions(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	e.start()
	e.addProvider(fake.URL(), "k")
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	call := func(msgs []msg, extra map[string]any) string {
		body := map[string]any{"model": "fake-1", "user": "alice", "messages": msgs, "temperature": 0.2, "top_p": 1}
		for k, v := range extra {
			body[k] = v
		}
		code, out := e.postJSON("/v1/chat/completions", body)
		if code != 200 {
			t.Fatalf("HTTP %d: %s", code, out)
		}
		var r struct {
			Choices []struct{ Message msg } `json:"choices"`
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("bad answer %s: %v", out, err)
		}
		return r.Choices[0].Message.Content
	}
	a1 := call([]msg{{"system", "be brief"}, {"user", "first question"}}, nil)
	if a1 != "PONG first question" {
		t.Fatalf("a1 %q", a1)
	}
	// The second call sends only its new message: the LLM still sees the first exchange.
	a2 := call([]msg{{"user", "second question"}}, nil)
	reqs := fake.Requests()
	seen := reqs[len(reqs)-1].Messages
	joined := ""
	for _, m := range seen {
		joined += m.Role + ":" + m.Content + "\n"
	}
	// The session's instructions follow the base prompt in the system message.
	for _, want := range []string{"\nbe brief\nuser:first question", "user:first question", "assistant:PONG first question", "user:second question"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("LLM prompt lacks %q:\n%s", want, joined)
		}
	}
	// The third call resends the whole history: nothing is stored twice.
	call([]msg{{"system", "be brief"}, {"user", "first question"}, {"assistant", a1}, {"user", "second question"}, {"assistant", a2}, {"user", "third"}}, nil)
	out, _, code := e.waiter("", nil, "history", "--session", "alice", "--json")
	if code != 0 {
		t.Fatalf("history exit %d", code)
	}
	var hist []struct{ Role, Content string }
	if err := json.Unmarshal([]byte(out), &hist); err != nil {
		t.Fatalf("history json: %v\n%s", err, out)
	}
	counts := map[string]int{}
	for _, m := range hist {
		counts[m.Role+":"+m.Content]++
	}
	for _, k := range []string{"user:first question", "user:second question", "user:third", "assistant:PONG first question", "assistant:PONG second question"} {
		if counts[k] != 1 {
			t.Errorf("%q stored %d times, want 1 (history %v)", k, counts[k], hist)
		}
	}
	if len(hist) != 6 {
		t.Errorf("history has %d events, want 6", len(hist))
	}
	// Client-side tools are refused; unknown OpenAI parameters are not.
	code2, body := e.postJSON("/v1/chat/completions", map[string]any{"messages": []msg{{"user", "x"}}, "tools": []any{map[string]any{"type": "function"}}})
	if code2 != 400 || !strings.Contains(string(body), "tools") {
		t.Fatalf("tools not refused: %d %s", code2, body)
	}
	// X-Hologram-Session wins over user.
	code3, _ := e.postJSON("/v1/chat/completions", map[string]any{"user": "alice", "messages": []msg{{"user", "via header"}}}, "X-Hologram-Session", "bob")
	if code3 != 200 {
		t.Fatalf("header session: %d", code3)
	}
	out, _, _ = e.waiter("", nil, "history", "--session", "bob", "--json")
	if !strings.Contains(out, "via header") {
		t.Fatalf("bob's history lacks the message: %s", out)
	}
}

func TestSecondHomedOnSameDataDirExits1(t *testing.T) {
	e := newEnv(t)
	h := e.start()
	second, _ := e.spawn("--socket", filepath.Join(e.root, "run", "other.sock"))
	select {
	case <-second.done:
	case <-time.After(30 * time.Second):
		t.Fatal("second homed kept running")
	}
	if code := second.cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("second homed exit %d, want 1", code)
	}
	msg := second.stderr.String()
	if !strings.Contains(msg, fmt.Sprint(h.cmd.Process.Pid)) || !strings.Contains(msg, e.sock) {
		t.Fatalf("message does not name pid %d and socket %s: %s", h.cmd.Process.Pid, e.sock, msg)
	}
}

func TestSIGTERMMidTurnFinishesTheTurn(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	h := e.start()
	e.addProvider(fake.URL(), "k")
	release := make(chan struct{})
	fake.Script(llmtest.Reply{Text: "finished after SIGTERM", Delay: func() { <-release }})
	type res struct {
		out  string
		code int
	}
	done := make(chan res, 1)
	go func() {
		o, _, c := e.waiter("", nil, "ask", "slow one")
		done <- res{o, c}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fake.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	close(release)
	r := <-done
	if r.code != 0 || strings.TrimSpace(r.out) != "finished after SIGTERM" {
		t.Fatalf("in-flight turn: exit %d, %q", r.code, r.out)
	}
	<-h.done
	if h.err != nil {
		t.Fatalf("homed exit: %v\n%s", h.err, h.stderr)
	}
	st, err := sqlite.Open(ctx, filepath.Join(e.data, "hologram.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hist, _ := st.History(ctx, "main", 0)
	if len(hist) == 0 || hist[len(hist)-1].Content != "finished after SIGTERM" {
		t.Fatalf("the finished turn is not stored: %+v", hist)
	}
}

func TestKill9WhileStreamOpen20Times(t *testing.T) {
	e := newEnv(t)
	fake := llmtest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h := e.start()
	e.addProvider(fake.URL(), "k")
	chats := 0
	for i := 0; i < 20; i++ {
		if i > 0 {
			h = e.start()
		}
		want := fmt.Sprintf("PONG committed %d", i)
		if got := e.ask(fmt.Sprintf("committed %d", i)); got != want {
			t.Fatalf("round %d: %q", i, got)
		}
		chats++
		fake.Script(llmtest.Reply{Text: "never finished", Hang: true})
		go e.waiter("", nil, "ask", fmt.Sprintf("interrupted %d", i))
		chats++
		if err := fake.Wait(ctx, chats); err != nil {
			t.Fatal(err)
		}
		h.kill9()
		st, err := sqlite.Open(ctx, filepath.Join(e.data, "hologram.db"), sqlite.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", i, err)
		}
		if err := st.IntegrityCheck(ctx); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		hist, err := st.History(ctx, "main", 0)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range hist {
			if ev.Content == want {
				found = true
			}
		}
		if !found {
			t.Fatalf("round %d: last committed turn %q missing after kill -9", i, want)
		}
	}
}

func TestRemoteTokenAndFingerprint(t *testing.T) {
	e := newEnv(t)
	tokenFile := filepath.Join(e.root, "token")
	certDir := filepath.Join(e.root, "tls")
	_, fp, err := security.LoadOrCreateSelfSigned(filepath.Join(certDir, "c.pem"), filepath.Join(certDir, "k.pem"), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	h := e.start("--listen", "127.0.0.1:0", "--token-file", tokenFile, "--tls-cert", filepath.Join(certDir, "c.pem"), "--tls-key", filepath.Join(certDir, "k.pem"))
	addr, logged := h.listening(t)
	if logged != fp {
		t.Fatalf("homed logged fingerprint %q, want %s", logged, fp)
	}
	url := "https://" + addr
	wrongTok := filepath.Join(e.root, "wrong")
	os.WriteFile(wrongTok, []byte("not-the-token\n"), 0o600)
	otherFP := strings.Repeat("ab", 32)
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantMsg  string
	}{
		{"pinned and right token", []string{"--remote", url, "--token-file", tokenFile, "--fingerprint", fp, "status"}, 0, "version"},
		{"wrong token", []string{"--remote", url, "--token-file", wrongTok, "--fingerprint", fp, "status"}, 1, "401"},
		{"wrong fingerprint", []string{"--remote", url, "--token-file", tokenFile, "--fingerprint", otherFP, "status"}, 1, "fingerprint"},
		{"no pin for a self-signed cert", []string{"--remote", url, "--token-file", tokenFile, "status"}, 1, "certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := e.waiter("", nil, tc.args...)
			if (tc.wantCode == 0) != (code == 0) || !strings.Contains(strings.ToLower(out+errOut), tc.wantMsg) {
				t.Fatalf("exit %d (want %d), output %q %q lacks %q", code, tc.wantCode, out, errOut, tc.wantMsg)
			}
		})
	}
	h.stop(t) // stdout is complete once homed has exited
	if out := h.stdout.String(); !strings.Contains(out, "TLS certificate fingerprint (sha256): "+fp) || !strings.Contains(out, "listening on "+addr) {
		t.Fatalf("homed did not print its address and fingerprint: %q", out)
	}
}

func TestFaultsSurfaceClearly(t *testing.T) {
	e := newEnv(t)
	e.start()
	// No provider yet.
	_, errOut, code := e.waiter("", nil, "ask", "hello")
	if code == 0 || !strings.Contains(errOut, "no LLM provider") {
		t.Fatalf("missing provider: exit %d %q", code, errOut)
	}
	// Provider down: a closed port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	e.addProvider(downURL, "k")
	_, errOut, code = e.waiter("", nil, "ask", "hello")
	if code == 0 || !strings.Contains(errOut, "fake") {
		t.Fatalf("provider down: exit %d %q", code, errOut)
	}
	fake := llmtest.NewServer(t)
	e.addProvider(fake.URL(), "k")
	cases := []struct {
		name   string
		script []llmtest.Reply
		ok     bool
		want   string
	}{
		{"garbage", []llmtest.Reply{{RawBody: "<html>oops</html>"}}, false, "invalid JSON"},
		{"server 400 message surfaces", []llmtest.Reply{{Status: 400, Message: "model fake-1 does not exist"}}, false, "model fake-1 does not exist"},
		{"unknown tool", []llmtest.Reply{{ToolCalls: []llm.ToolCall{{ID: "u1", Name: "no_such_tool", Arguments: "{}"}}}}, true, "DONE unknown tool"},
		{"arguments not matching the schema", []llmtest.Reply{{ToolCalls: []llm.ToolCall{{ID: "u2", Name: "time_now", Arguments: `{"timezone": 5}`}}}}, true, "DONE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.Script(tc.script...)
			out, errOut, code := e.waiter("", nil, "ask", "go")
			if (code == 0) != tc.ok || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, out %q, err %q; want ok=%v and %q", code, out, errOut, tc.ok, tc.want)
			}
		})
	}
	// Bad input to the API.
	for _, tc := range []struct {
		name, body string
		want       int
		msg        string
	}{
		{"malformed JSON", `{"input": `, 400, ""},
		{"unknown field", `{"input":"x","bogus":1}`, 400, "bogus"},
		{"oversize body", `{"input":"` + strings.Repeat("x", 5<<20) + `"}`, 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.postJSON("/api/v1/chat", tc.body)
			if code != tc.want || !strings.Contains(string(body), tc.msg) {
				t.Fatalf("HTTP %d %s, want %d containing %q", code, body, tc.want, tc.msg)
			}
		})
	}
}

// Off loopback TLS is always on: with no certificate given, homed generates a self-signed one,
// prints its fingerprint, and a client pinning it gets in.
func TestNonLoopbackListenGeneratesPinnedTLS(t *testing.T) {
	e := newEnv(t)
	tokenFile := filepath.Join(e.root, "token")
	h := e.start("--listen", "0.0.0.0:0", "--token-file", tokenFile)
	addr, fp := h.listening(t)
	_, port, _ := net.SplitHostPort(addr)
	if len(fp) != 64 || port == "" {
		t.Fatalf("no fingerprint or port printed: %q", h.stdout.String())
	}
	if _, err := os.Stat(filepath.Join(e.data, "tls", "cert.pem")); err != nil {
		t.Fatalf("certificate not kept in the data dir: %v", err)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file not created 0600: %v %v", fi, err)
	}
	url := "https://127.0.0.1:" + port
	out, errOut, code := e.waiter("", nil, "--remote", url, "--token-file", tokenFile, "--fingerprint", "SHA256:"+strings.ToUpper(fp), "status", "--json")
	if code != 0 || !strings.Contains(out, `"version"`) {
		t.Fatalf("pinned status: exit %d %q %q", code, out, errOut)
	}
	// Plain HTTP to the TLS port gets nowhere.
	resp, err := http.Get("http://127.0.0.1:" + port + "/api/v1/health")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && strings.Contains(string(body), `"ok"`) {
			t.Fatalf("plain HTTP answered on the TLS port: %s", body)
		}
	}
}
