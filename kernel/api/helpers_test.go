package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// fakeBackend is a Backend whose methods call the func fields; unset fields answer zero values.
type fakeBackend struct {
	thumbnail       func(block string) ([]byte, error)
	health          func(ctx context.Context) (client.Health, error)
	status          func(ctx context.Context) (client.Status, error)
	chat            func(ctx context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error)
	cancel          func(ctx context.Context, turnID string) error
	upload          func(context.Context, client.UploadRequest, io.Reader) (client.Upload, error)
	answerToolCall  func(ctx context.Context, turnID, callID string, a client.ToolAnswer) error
	sessions        func(ctx context.Context) ([]client.Session, error)
	createSession   func(ctx context.Context, s client.Session) (client.Session, error)
	setInstructions func(ctx context.Context, id string, in client.Instructions) (client.Session, error)
	history         func(ctx context.Context, id string, limit int) ([]client.Message, error)
	providers       func(ctx context.Context) ([]client.Provider, error)
	addProvider     func(ctx context.Context, p client.ProviderConfig) (client.Provider, error)
	removeProvider  func(ctx context.Context, name string) error
	tools           func(ctx context.Context) ([]client.Tool, error)
	window          func(ctx context.Context, sessionID string) (client.Window, error)
	searchMemory    func(ctx context.Context, q client.MemoryQuery) ([]client.MemoryHit, error)
	complete        func(ctx context.Context, req client.CompletionRequest, emit func(client.ChatEvent)) (client.ChatResult, error)
	models          func(ctx context.Context) ([]string, error)
	plugins         func(ctx context.Context) ([]client.Plugin, error)
	addPlugin       func(ctx context.Context, p client.PluginConfig) (client.Plugin, error)
	pluginAction    func(ctx context.Context, name, action string) (client.Plugin, error)
	pluginLogs      func(ctx context.Context, name string, n int) ([]client.LogLine, error)
}

func (f *fakeBackend) Plugins(ctx context.Context) ([]client.Plugin, error) {
	if f.plugins == nil {
		return nil, nil
	}
	return f.plugins(ctx)
}

func (f *fakeBackend) AddPlugin(ctx context.Context, p client.PluginConfig) (client.Plugin, error) {
	if f.addPlugin == nil {
		return client.Plugin{Name: p.Name, Kind: "mcp", State: "starting", Command: p.Command}, nil
	}
	return f.addPlugin(ctx, p)
}

func (f *fakeBackend) PluginAction(ctx context.Context, name, action string) (client.Plugin, error) {
	if f.pluginAction == nil {
		return client.Plugin{Name: name}, nil
	}
	return f.pluginAction(ctx, name, action)
}

func (f *fakeBackend) PluginLogs(ctx context.Context, name string, n int) ([]client.LogLine, error) {
	if f.pluginLogs == nil {
		return nil, nil
	}
	return f.pluginLogs(ctx, name, n)
}

var _ Backend = (*fakeBackend)(nil)

func (f *fakeBackend) Health(ctx context.Context) (client.Health, error) {
	if f.health == nil {
		return client.Health{OK: true, Ready: true}, nil
	}
	return f.health(ctx)
}

func (f *fakeBackend) Status(ctx context.Context) (client.Status, error) {
	if f.status == nil {
		return client.Status{}, nil
	}
	return f.status(ctx)
}

func (f *fakeBackend) Chat(ctx context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
	if f.chat == nil {
		return client.ChatResult{}, nil
	}
	return f.chat(ctx, req, emit)
}

func (f *fakeBackend) AnswerToolCall(ctx context.Context, turnID, callID string, a client.ToolAnswer) error {
	if f.answerToolCall == nil {
		return client.ErrNotFound
	}
	return f.answerToolCall(ctx, turnID, callID, a)
}

func (f *fakeBackend) Upload(ctx context.Context, req client.UploadRequest, r io.Reader) (client.Upload, error) {
	if f.upload == nil {
		return client.Upload{}, client.ErrInvalid
	}
	return f.upload(ctx, req, r)
}

func (f *fakeBackend) Cancel(ctx context.Context, turnID string) error {
	if f.cancel == nil {
		return nil
	}
	return f.cancel(ctx, turnID)
}

func (f *fakeBackend) Sessions(ctx context.Context) ([]client.Session, error) {
	if f.sessions == nil {
		return nil, nil
	}
	return f.sessions(ctx)
}

func (f *fakeBackend) CreateSession(ctx context.Context, s client.Session) (client.Session, error) {
	if f.createSession == nil {
		return s, nil
	}
	return f.createSession(ctx, s)
}

func (f *fakeBackend) SetInstructions(ctx context.Context, id string, in client.Instructions) (client.Session, error) {
	if f.setInstructions == nil {
		return client.Session{ID: id, SystemPrompt: in.SystemPrompt, Model: in.Model}, nil
	}
	return f.setInstructions(ctx, id, in)
}

func (f *fakeBackend) History(ctx context.Context, id string, limit int) ([]client.Message, error) {
	if f.history == nil {
		return nil, nil
	}
	return f.history(ctx, id, limit)
}

func (f *fakeBackend) Providers(ctx context.Context) ([]client.Provider, error) {
	if f.providers == nil {
		return nil, nil
	}
	return f.providers(ctx)
}

func (f *fakeBackend) AddProvider(ctx context.Context, p client.ProviderConfig) (client.Provider, error) {
	if f.addProvider == nil {
		return client.Provider{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, HasKey: p.APIKey != ""}, nil
	}
	return f.addProvider(ctx, p)
}

func (f *fakeBackend) RemoveProvider(ctx context.Context, name string) error {
	if f.removeProvider == nil {
		return nil
	}
	return f.removeProvider(ctx, name)
}

func (f *fakeBackend) Tools(ctx context.Context) ([]client.Tool, error) {
	if f.tools == nil {
		return nil, nil
	}
	return f.tools(ctx)
}

func (f *fakeBackend) Window(ctx context.Context, sessionID string) (client.Window, error) {
	if f.window == nil {
		return client.Window{Session: sessionID}, nil
	}
	return f.window(ctx, sessionID)
}

func (f *fakeBackend) SearchMemory(ctx context.Context, q client.MemoryQuery) ([]client.MemoryHit, error) {
	if f.searchMemory == nil {
		return nil, nil
	}
	return f.searchMemory(ctx, q)
}

// Approvals and AnswerApproval: none pending (approvalBackend has some).
func (f *fakeBackend) Approvals(context.Context) ([]client.Approval, error) {
	return []client.Approval{}, nil
}
func (f *fakeBackend) AnswerApproval(_ context.Context, id string, _ bool) (client.Approval, error) {
	return client.Approval{}, fmt.Errorf("%w: no pending approval %q", client.ErrNotFound, id)
}

func (f *fakeBackend) Complete(ctx context.Context, req client.CompletionRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
	if f.complete == nil {
		return client.ChatResult{}, nil
	}
	return f.complete(ctx, req, emit)
}

func (f *fakeBackend) Models(ctx context.Context) ([]string, error) {
	if f.models == nil {
		return nil, nil
	}
	return f.models(ctx)
}

// logBuffer collects log output for assertions; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// socketDir returns a short temp dir for unix sockets (paths are limited to 108 bytes).
func socketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "h")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// served is a running listener of a Server.
type served struct {
	client *http.Client
	base   string
	path   string // unix socket path
	stop   func() error
}

// serveUnix runs s.ServeUnix at path (default: a fresh dir) until the test ends or stop is called.
func serveUnix(t testing.TB, s *Server, path string) *served {
	t.Helper()
	if path == "" {
		path = filepath.Join(socketDir(t), "run", "k.sock")
	}
	ready := make(chan struct{}, 1)
	s.testHookListening = func(string) { ready <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.ServeUnix(ctx, path) }()
	select {
	case <-ready:
	case err := <-errc:
		cancel()
		t.Fatalf("ServeUnix: %v", err)
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			stopErr = <-errc
			tr.CloseIdleConnections()
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("ServeUnix returned %v", err)
		}
	})
	return &served{client: &http.Client{Transport: tr}, base: "http://hologram", path: path, stop: stop}
}

// serveTCP runs s.ServeTCP on ln (default: 127.0.0.1:0) until the test ends.
func serveTCP(t testing.TB, s *Server, ln net.Listener, tr *http.Transport) *served {
	t.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.ServeTCP(ctx, ln, nil, false) }()
	if tr == nil {
		tr = &http.Transport{}
	}
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ServeTCP returned %v", err)
		}
		tr.CloseIdleConnections()
	})
	return &served{client: &http.Client{Transport: tr}, base: "http://" + addr}
}

// do sends a request and returns the response with its body read.
func (sv *served) do(t testing.TB, method, path, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, sv.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := sv.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, string(b)
}

// apiError decodes an /api/v1 error body.
func apiError(t testing.TB, body string) client.Error {
	t.Helper()
	var e struct {
		Error client.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e.Error
}
