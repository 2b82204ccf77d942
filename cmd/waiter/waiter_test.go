package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

type result struct {
	code           int
	stdout, stderr string
}

// waiter runs the command in-process with env as its whole environment.
func waiter(t *testing.T, env map[string]string, stdin io.Reader, args ...string) result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdin, &out, &errb, func(k string) string { return env[k] })
	return result{code, out.String(), errb.String()}
}

// kernel serves a fake kernel on a unix socket and returns it with an environment pointing at it.
func kernel(t *testing.T, withProvider bool) (*clienttest.Fake, map[string]string) {
	t.Helper()
	f := clienttest.New()
	sock := clienttest.ServeUnix(t, f)
	if withProvider {
		c, err := client.Dial(client.Options{Socket: sock})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.AddProvider(context.Background(), client.ProviderConfig{Name: "p", BaseURL: "http://x/v1", Model: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	return f, map[string]string{"HOLOGRAM_SOCKET": sock}
}

func TestAsk(t *testing.T) {
	tests := []struct {
		name       string
		provider   bool
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{"reply on stdout", true, "", []string{"ask", "what", "time", "is", "it"}, 0,
			"PONG: what time is it\n", []string{"→ time_now {}", "← ok: 2026-01-02T03:04:05Z"}},
		{"question from stdin", true, "hello there\n", []string{"ask"}, 0, "PONG: hello there\n", nil},
		{"session flag", true, "", []string{"ask", "--session", "main", "hi"}, 0, "PONG: hi\n", nil},
		{"kernel error", false, "", []string{"ask", "hi"}, 1, "",
			[]string{"waiter: no provider configured: add one with `waiter provider add`\n"}},
		{"unknown session", true, "", []string{"ask", "--session", "nope", "hi"}, 1, "",
			[]string{`waiter: chat: unknown session "nope" (HTTP 404)`}},
		{"no question", true, "", []string{"ask"}, 2, "", []string{"ask needs a question", "usage:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, env := kernel(t, tt.provider)
			r := waiter(t, env, strings.NewReader(tt.stdin), tt.args...)
			if r.code != tt.wantCode || r.stdout != tt.wantStdout {
				t.Fatalf("exit %d stdout %q, want %d %q; stderr:\n%s", r.code, r.stdout, tt.wantCode, tt.wantStdout, r.stderr)
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q lacks %q", r.stderr, s)
				}
			}
			for _, req := range f.Requests() {
				if req.Path == "/api/v1/chat" && !strings.Contains(req.Body, `"channel":"waiter"`) {
					t.Errorf("chat request %s without the waiter channel", req.Body)
				}
			}
		})
	}
}

func TestProviderAdd(t *testing.T) {
	base := []string{"provider", "add", "fake", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake-1"}
	tests := []struct {
		name       string
		env        map[string]string
		stdin      string
		args       []string
		wantCode   int
		wantKey    string
		wantStderr string
	}{
		{"key from env wins over stdin", map[string]string{"HOLOGRAM_API_KEY": "sk-env"}, "sk-stdin\n", base, 0, "sk-env", ""},
		{"key from stdin", nil, "sk-stdin\nsecond line\n", base, 0, "sk-stdin", ""},
		{"stdin without newline", nil, "sk-raw", base, 0, "sk-raw", ""},
		{"empty key is allowed", nil, "", base, 0, "", "no API key given"},
		{"flags before the name", map[string]string{"HOLOGRAM_API_KEY": "k"}, "",
			[]string{"provider", "add", "--model", "fake-1", "--priority", "3", "--base-url", "http://127.0.0.1:9/v1", "fake"}, 0, "k", ""},
		{"--api-key refused", nil, "", append(base, "--api-key", "sk-argv"), 2, "", "refusing --api-key"},
		{"--key= refused", nil, "", append(base, "--key=sk-argv"), 2, "", "HOLOGRAM_API_KEY or on stdin"},
		{"key as an extra argument", nil, "", append(base, "sk-argv"), 2, "", "usage: waiter provider add NAME"},
		{"missing model", nil, "", []string{"provider", "add", "fake", "--base-url", "http://x/v1"}, 2, "", "needs --base-url and --model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, env := kernel(t, false)
			for k, v := range tt.env {
				env[k] = v
			}
			r := waiter(t, env, strings.NewReader(tt.stdin), tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.wantStderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.wantStderr)
			}
			if strings.Contains(r.stderr+r.stdout, "sk-argv") {
				t.Errorf("the refused secret was echoed: %q", r.stderr)
			}
			p, ok := f.ProviderConfig("fake")
			if tt.wantCode != 0 {
				if ok || len(f.Requests()) > 0 {
					t.Errorf("a refused command reached the kernel: %+v", f.Requests())
				}
				return
			}
			if !ok || p.APIKey != tt.wantKey || p.Model != "fake-1" || p.BaseURL != "http://127.0.0.1:9/v1" {
				t.Fatalf("stored %+v (ok=%v), want key %q", p, ok, tt.wantKey)
			}
			if !strings.Contains(r.stdout, "provider fake added") {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

func TestListingsJSON(t *testing.T) {
	f, env := kernel(t, true)
	if r := waiter(t, env, nil, "ask", "hi"); r.code != 0 {
		t.Fatalf("ask: %+v", r)
	}
	_ = f
	tests := []struct {
		args []string
		into any
		text string // a header or value of the text form
	}{
		{[]string{"status"}, &client.Status{}, "active turns"},
		{[]string{"provider", "list"}, &[]client.Provider{}, "BASE URL"},
		{[]string{"tools"}, &[]client.Tool{}, "PARALLEL"},
		{[]string{"session", "list"}, &[]client.Session{}, "UPDATED"},
		{[]string{"history", "--limit", "1"}, &[]client.Message{}, "assistant: PONG: hi"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := waiter(t, env, nil, append(tt.args, "--json")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.into); err != nil {
				t.Fatalf("not valid JSON of %T: %v\n%s", tt.into, err, r.stdout)
			}
			if !json.Valid([]byte(r.stdout)) {
				t.Errorf("trailing garbage: %q", r.stdout)
			}
			r = waiter(t, env, nil, tt.args...)
			if r.code != 0 || !strings.Contains(r.stdout, tt.text) {
				t.Errorf("text form (exit %d) lacks %q:\n%s%s", r.code, tt.text, r.stdout, r.stderr)
			}
		})
	}
	t.Run("empty list is []", func(t *testing.T) {
		_, env := kernel(t, false)
		r := waiter(t, env, nil, "provider", "list", "--json")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
			t.Fatalf("exit %d stdout %q", r.code, r.stdout)
		}
	})
}

func TestSessions(t *testing.T) {
	_, env := kernel(t, true)
	steps := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"new with id", []string{"session", "new", "--title", "Work", "work", "--system-prompt", "be brief"}, 0, "work\n"},
		{"new picks an id", []string{"session", "new"}, 0, "s"},
		{"show instructions", []string{"session", "instructions", "work"}, 0, "session: work\nmodel: (default)\nsystem prompt:\nbe brief\n"},
		{"set model keeps prompt", []string{"session", "instructions", "work", "--model", "m2"}, 0, "session: work\nmodel: m2\nsystem prompt:\nbe brief\n"},
		{"clear prompt", []string{"session", "instructions", "--system-prompt", "", "work"}, 0, "session: work\nmodel: m2\nsystem prompt:\n(none)\n"},
		{"unknown session", []string{"session", "instructions", "nope"}, 1, ""},
		{"ask in session", []string{"ask", "--session", "work", "hi"}, 0, "PONG: hi\n"},
		{"history", []string{"history", "--session", "work"}, 0, "user: hi\n"},
		{"list", []string{"session", "list"}, 0, "Work"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := waiter(t, env, nil, st.args...)
			if r.code != st.wantCode || !strings.Contains(r.stdout, st.want) {
				t.Fatalf("exit %d stdout %q, want %d %q; stderr %s", r.code, r.stdout, st.wantCode, st.want, r.stderr)
			}
		})
	}
}

func TestUsageAndErrors(t *testing.T) {
	_, env := kernel(t, true)
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.sock")
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		stream   string // "out" or "err"
		want     string
	}{
		{"unknown command", []string{"frobnicate"}, env, 2, "err", `unknown command "frobnicate"`},
		{"unknown global flag", []string{"--frob", "status"}, env, 2, "err", "usage: waiter"},
		{"unknown command flag", []string{"status", "--frob"}, env, 2, "err", "flag provided but not defined: -frob"},
		{"provider without subcommand", []string{"provider"}, env, 2, "err", "add, list or remove"},
		{"token on argv refused", []string{"--remote", "https://h:1", "--token", "abc", "status"}, env, 2, "err", "refusing --token"},
		{"remote without token", []string{"--remote", "https://h:1", "status"}, env, 2, "err", "needs --token-file F or HOLOGRAM_TOKEN"},
		{"socket and remote", []string{"--socket", "/s", "--remote", "https://h:1", "status"},
			map[string]string{"HOLOGRAM_TOKEN": "t"}, 2, "err", "exclude each other"},
		{"plain http refused", []string{"--remote", "http://example.com:1", "status"},
			map[string]string{"HOLOGRAM_TOKEN": "t"}, 1, "err", "refusing plain HTTP to example.com: use https or --insecure"},
		{"version", []string{"version"}, env, 0, "out", "waiter "},
		{"--version", []string{"--version"}, env, 0, "out", "waiter "},
		{"help", []string{"--help"}, env, 0, "out", "usage: waiter"},
		{"no kernel", []string{"status"}, map[string]string{"HOLOGRAM_SOCKET": missing}, 1, "err",
			"waiter: no kernel running at " + missing + " (start it with `homed`)\n"},
		{"no kernel via --socket", []string{"--socket", missing, "ask", "hi"}, nil, 1, "err", "no kernel running at " + missing},
		{"no kernel chat", []string{"--socket", missing}, nil, 1, "err", "no kernel running at " + missing},
		{"remove unknown provider", []string{"provider", "remove", "nope"}, env, 1, "err", `unknown provider "nope" (HTTP 404)`},
		{"remove provider", []string{"provider", "remove", "p"}, env, 0, "out", "provider p removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := waiter(t, tt.env, nil, tt.args...)
			got := r.stderr
			if tt.stream == "out" {
				got = r.stdout
			}
			if r.code != tt.wantCode || !strings.Contains(got, tt.want) {
				t.Fatalf("exit %d, want %d; std%s lacks %q:\nstdout %q\nstderr %q", r.code, tt.wantCode, tt.stream, tt.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestRemote(t *testing.T) {
	f := clienttest.New()
	f.Token = "tok-1"
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		want     string
	}{
		{"token file and pin", []string{"--remote", srv.URL, "--token-file", tokenFile, "--fingerprint", "sha256:" + pin, "status"}, nil, 0, "fake"},
		{"token from env", []string{"--remote", srv.URL, "--fingerprint", pin, "tools", "--json"}, map[string]string{"HOLOGRAM_TOKEN": "tok-1"}, 0, "time_now"},
		{"wrong pin", []string{"--remote", srv.URL, "--fingerprint", strings.Repeat("00", 32), "status"}, map[string]string{"HOLOGRAM_TOKEN": "tok-1"}, 1, "fingerprint mismatch"},
		{"wrong token", []string{"--remote", srv.URL, "--fingerprint", pin, "status"}, map[string]string{"HOLOGRAM_TOKEN": "nope"}, 1, "(HTTP 401)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := waiter(t, tt.env, nil, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout+r.stderr, tt.want) {
				t.Fatalf("exit %d, want %d and %q:\nstdout %q\nstderr %q", r.code, tt.wantCode, tt.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestChat(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		wantStdout string
		wantTurns  int
	}{
		{"lines then quit", "hello\n\n/quit\nignored\n", "PONG: hello\n", 1},
		{"until EOF", "one\ntwo", "PONG: one\nPONG: two\n", 2},
		{"empty input", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, env := kernel(t, true)
			r := waiter(t, env, strings.NewReader(tt.stdin), "chat")
			if r.code != 0 || r.stdout != tt.wantStdout {
				t.Fatalf("exit %d stdout %q, want %q; stderr %s", r.code, r.stdout, tt.wantStdout, r.stderr)
			}
			turns := 0
			for _, req := range f.Requests() {
				if req.Path == "/api/v1/chat" {
					turns++
				}
			}
			if turns != tt.wantTurns {
				t.Errorf("%d turns, want %d", turns, tt.wantTurns)
			}
			if tt.wantTurns > 0 && !strings.Contains(r.stderr, "→ time_now {}") {
				t.Errorf("stderr %q lacks the tool call", r.stderr)
			}
		})
	}
	t.Run("turn error keeps the chat going", func(t *testing.T) {
		_, env := kernel(t, false)
		r := waiter(t, env, strings.NewReader("a\nb\n"), "chat")
		if r.code != 0 || strings.Count(r.stderr, "no provider configured") != 2 {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	})
}

func TestChatInterrupt(t *testing.T) {
	sigs := make(chan os.Signal) // unbuffered: each send is taken by exactly one receiver
	old := notifyInterrupt
	notifyInterrupt = func() (<-chan os.Signal, func()) { return sigs, func() {} }
	t.Cleanup(func() { notifyInterrupt = old })

	f, env := kernel(t, true)
	ended := make(chan struct{})
	f.Chat = func(ctx context.Context, req client.ChatRequest, turnID string, send func(client.ChatEvent)) {
		send(client.ChatEvent{Type: client.EventDelta, TurnID: turnID, Text: "partial"})
		<-ctx.Done()
		close(ended)
	}
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	go func() { _, _ = io.WriteString(pw, "long question\n") }()
	stdout := &notifyWriter{first: make(chan struct{})}
	go func() {
		<-stdout.first       // the delta is on screen: the turn runs
		sigs <- os.Interrupt // cancels the running turn
		sigs <- os.Interrupt // at the prompt: leaves
	}()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"chat"}, pr, stdout, &stderr, func(k string) string { return env[k] })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	<-ended // the kernel saw the turn's request go away
	if stdout.buf.String() != "partial\n" || !strings.Contains(stderr.String(), "(cancelled)") {
		t.Errorf("stdout %q stderr %q", stdout.buf.String(), stderr.String())
	}
}

// notifyWriter closes first on its first write. It is written from one goroutine.
type notifyWriter struct {
	buf   bytes.Buffer
	first chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	if w.buf.Len() == 0 {
		defer close(w.first)
	}
	return w.buf.Write(p)
}

func TestDefaultSocket(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"HOLOGRAM_SOCKET wins", map[string]string{"HOLOGRAM_SOCKET": "/x/k.sock", "XDG_RUNTIME_DIR": "/run/user/1"}, "/x/k.sock"},
		{"runtime dir", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"}, "/run/user/1/hologram/homed.sock"},
		{"fallback", nil, "/tmp/hologram-" + uid + "/homed.sock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := defaultSocket(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
