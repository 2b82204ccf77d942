package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/kernel/llm/openai"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/memory/sqlite"
)

// logWatch is a slog handler that keeps every message, so tests can wait for one.
type logWatch struct {
	mu      sync.Mutex
	msgs    []string
	changed chan struct{} // closed and replaced on every record
}

func newLogWatch() *logWatch { return &logWatch{changed: make(chan struct{})} }

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *logWatch) WithGroup(string) slog.Handler            { return w }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	close(w.changed)
	w.changed = make(chan struct{})
	return nil
}

// count returns how many records had msg.
func (w *logWatch) count(msg string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// wait blocks until at least n records had msg.
func (w *logWatch) wait(t *testing.T, msg string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		w.mu.Lock()
		ch := w.changed
		w.mu.Unlock()
		if w.count(msg) >= n {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			w.mu.Lock()
			last := w.msgs[max(0, len(w.msgs)-5):]
			w.mu.Unlock()
			t.Fatalf("no %d× log %q (got %d); the last logs: %q", n, msg, w.count(msg), last)
		}
	}
}

// deskKernel is a started kernel on the data dir dir (so a later one can reopen it), built like
// newMemKernel; tweak adjusts its configuration and dependencies.
type deskKernel struct {
	*kernel.Kernel
	stop func() // closes the kernel, then its store; idempotent (also run at cleanup)
}

func newDeskKernel(t *testing.T, dir string, tweak func(*config.Config, *kernel.Deps)) deskKernel {
	t.Helper()
	tok, lex := sharedAssets(t)
	cfg := config.Default(func(string) string { return "" })
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Memory.GCInterval.Duration = 0
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "hologram.db"), sqlite.Options{Tokenize: tok.Tokens, Expand: lex.Expand})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := security.LoadOrCreateKeyFile(filepath.Join(dir, "config", "key"))
	if err != nil {
		t.Fatal(err)
	}
	deps := kernel.Deps{
		Store:  store,
		Sealer: security.NewCodec(keys),
		NewProvider: func(ps kernel.ProviderSettings) (llm.Provider, error) {
			return openai.New(openai.Config{Name: ps.Name, BaseURL: ps.BaseURL, Model: ps.Model, APIKey: ps.APIKey, Proxy: ps.Proxy, MaxRetries: -1})
		},
		Tokens: tok.Tokens,
	}
	if tweak != nil {
		tweak(&cfg, &deps)
	}
	k, err := kernel.New(cfg, deps)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			if err := k.Close(); err != nil {
				t.Errorf("kernel close: %v", err)
			}
			store.Close()
		})
	}
	t.Cleanup(stop)
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return deskKernel{Kernel: k, stop: stop}
}

func TestPauseSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	k := newDeskKernel(t, dir, nil)
	sub := k.Bus().Subscribe(kernel.EventKernelPaused, kernel.EventKernelResumed)
	defer sub.Close()

	if err := k.Service().SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := k.Service().SetPaused(ctx, true); err != nil { // no second event
		t.Fatal(err)
	}
	if err := k.Service().SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := k.Service().SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		ev := <-sub.C()
		if ev.Publisher.Kind != events.KindKernel || ev.Payload["paused"] != (ev.Type == kernel.EventKernelPaused) {
			t.Fatalf("event %+v", ev)
		}
		got = append(got, ev.Type)
	}
	if want := []string{"kernel_paused", "kernel_resumed", "kernel_paused"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	select {
	case ev := <-sub.C():
		t.Fatalf("extra event %+v", ev)
	default:
	}
	// Plugins may not fake the kernel's pause events.
	err := k.Bus().Publish(events.Event{Type: kernel.EventKernelResumed, Publisher: events.Publisher{Kind: events.KindPlugin, Name: "qq"}})
	if !errors.Is(err, events.ErrDenied) {
		t.Fatalf("a plugin published %s: %v", kernel.EventKernelResumed, err)
	}
	k.stop()

	// The same data dir, a new kernel: still paused, and channel sessions still refused.
	k2 := newDeskKernel(t, dir, nil)
	if st, err := k2.Service().Status(ctx); err != nil || !st.Paused || !k2.Paused() {
		t.Fatalf("Status after restart = %+v, %v", st, err)
	}
	if _, err := k2.Service().CreateSession(ctx, client.Session{ID: "qq-1", Channel: "qq", Partner: "bob"}); err != nil {
		t.Fatal(err)
	}
	_, err = k2.Service().Chat(ctx, client.ChatRequest{Session: "qq-1", Input: "hi"}, nil)
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "paused") || !strings.Contains(err.Error(), "qq") {
		t.Fatalf("channel chat after restart = %v", err)
	}
	if err := k2.Service().SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}
	k2.stop()
	if k3 := newDeskKernel(t, dir, nil); k3.Paused() {
		t.Fatal("resumed kernel starts paused after a restart")
	}
}

func TestPauseSkipsScheduledGC(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Paused before this start (as a previous run left it).
	k := newDeskKernel(t, dir, nil)
	if err := k.Service().SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	k.stop()

	logs := newLogWatch()
	k = newDeskKernel(t, dir, func(c *config.Config, d *kernel.Deps) {
		c.Memory.GCInterval.Duration = 5 * time.Millisecond
		d.Logger = slog.New(logs)
	})
	const skipped, pass = "memory gc skipped: the kernel is paused", "memory gc"
	logs.wait(t, skipped, 3)
	if n := logs.count(pass); n != 0 {
		t.Fatalf("%d scheduled memory gc passes ran while paused", n)
	}
	// The owner's own pass runs while paused.
	if _, err := k.Service().MemoryGC(ctx); err != nil {
		t.Fatal(err)
	}
	if n := logs.count(pass); n != 1 {
		t.Fatalf("MemoryGC while paused logged %d passes, want 1", n)
	}
	if err := k.Service().SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}
	logs.wait(t, pass, 3) // the schedule runs again
}

// modelsFront serves GET …/models with models (a JSON body, or the status when it is not 200) and
// passes everything else to the llmtest server behind it.
func modelsFront(t *testing.T, back *llmtest.Server, status int, models string) string {
	t.Helper()
	u, err := url.Parse(back.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.WriteHeader(status)
			w.Write([]byte(models))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestTestProvider(t *testing.T) {
	long := strings.Repeat("好", 250)
	tests := []struct {
		name        string
		reply       llmtest.Reply
		modelStatus int    // 0: llmtest's own /models (fake-1)
		models      string // the /models body when modelStatus is set
		wantOK      bool
		wantErr     string // in Error
		wantReply   string
		wantModels  []string
	}{
		{name: "answers", reply: llmtest.Reply{Text: "OK"}, wantOK: true, wantReply: "OK", wantModels: []string{"fake-1"}},
		{name: "long reply is cut to 200 characters", reply: llmtest.Reply{Text: long}, wantOK: true,
			wantReply: strings.Repeat("好", 200), wantModels: []string{"fake-1"}},
		{name: "several models", reply: llmtest.Reply{Text: "OK"}, modelStatus: 200,
			models: `{"object":"list","data":[{"id":"qwen2.5:7b"},{"id":"llama3"}]}`, wantOK: true, wantReply: "OK",
			wantModels: []string{"qwen2.5:7b", "llama3"}},
		{name: "no models route", reply: llmtest.Reply{Text: "OK"}, modelStatus: 404, models: `{"error":{"message":"nope"}}`,
			wantOK: true, wantReply: "OK"},
		{name: "garbage models", reply: llmtest.Reply{Text: "OK"}, modelStatus: 200, models: `<html>`, wantOK: true, wantReply: "OK"},
		{name: "server error", reply: llmtest.Reply{Status: 500, Message: "model overloaded"}, wantErr: "model overloaded",
			wantModels: []string{"fake-1"}},
		{name: "auth error", reply: llmtest.Reply{Status: 401, Message: "Incorrect API key provided"}, wantErr: "HTTP 401: Incorrect API key provided",
			wantModels: []string{"fake-1"}},
		{name: "bad JSON", reply: llmtest.Reply{RawBody: "this is not json"}, wantErr: "provider trial", wantModels: []string{"fake-1"}},
		{name: "timeout", reply: llmtest.Reply{Hang: true}, wantErr: "provider trial: no answer within 200ms", wantModels: []string{"fake-1"}},
	}
	k := newDeskKernel(t, t.TempDir(), func(_ *config.Config, d *kernel.Deps) { d.ProviderTestTimeout = 200 * time.Millisecond })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			back := llmtest.NewServer(t)
			back.Script(tt.reply)
			base := back.URL()
			if tt.modelStatus != 0 {
				base = modelsFront(t, back, tt.modelStatus, tt.models)
			}
			got, err := k.Service().TestProvider(context.Background(), client.ProviderConfig{Name: "trial", BaseURL: base, Model: "fake-1", APIKey: "sk-t"})
			if err != nil {
				t.Fatalf("TestProvider: %v", err)
			}
			if got.OK != tt.wantOK || got.Reply != tt.wantReply || !reflect.DeepEqual(got.Models, tt.wantModels) || got.Latency <= 0 {
				t.Fatalf("TestProvider = %+v; want OK %v, reply %q, models %q", got, tt.wantOK, tt.wantReply, tt.wantModels)
			}
			if tt.wantOK && (got.Error != "" || got.Model != "fake-1") {
				t.Fatalf("TestProvider = %+v; want model fake-1 and no error", got)
			}
			if !tt.wantOK && (!strings.Contains(got.Error, tt.wantErr) || got.Model != "") {
				t.Fatalf("TestProvider error %q, want it to contain %q (and no model)", got.Error, tt.wantErr)
			}
			var chats []llmtest.Recorded
			for _, r := range back.Requests() {
				if strings.HasSuffix(r.Path, "/chat/completions") {
					chats = append(chats, r)
				}
			}
			if len(chats) != 1 {
				t.Fatalf("%d chat requests, want 1", len(chats))
			}
			var body struct {
				MaxTokens int `json:"max_tokens"`
			}
			c := chats[0]
			if err := json.Unmarshal(c.Raw, &body); err != nil || body.MaxTokens != 8 || c.Stream || c.Auth != "Bearer sk-t" ||
				c.Model != "fake-1" || len(c.Messages) != 2 || c.Messages[0].Role != "system" || c.Messages[0].Content != "Reply with the word OK." {
				t.Fatalf("request %+v (max_tokens %d, %v)", c, body.MaxTokens, err)
			}
		})
	}
	if ps, _ := k.Service().Providers(context.Background()); len(ps) != 0 {
		t.Fatalf("tested providers were saved: %+v", ps)
	}
}

// TestTestProviderKeepKey: keep_key without a key tests a saved provider with its saved key (the
// web UI's Test button); without keep_key, or for a name not saved, it goes without one.
func TestTestProviderKeepKey(t *testing.T) {
	k := newDeskKernel(t, t.TempDir(), nil)
	back := llmtest.NewServer(t)
	ctx := context.Background()
	if _, err := k.Service().AddProvider(ctx, client.ProviderConfig{Name: "saved", BaseURL: back.URL(), Model: "fake-1", APIKey: "sk-saved"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg      client.ProviderConfig
		wantAuth string
	}{
		{client.ProviderConfig{Name: "saved", BaseURL: back.URL(), Model: "fake-1", KeepKey: true}, "Bearer sk-saved"},
		{client.ProviderConfig{Name: "saved", BaseURL: back.URL(), Model: "fake-1"}, ""},
		{client.ProviderConfig{Name: "other", BaseURL: back.URL(), Model: "fake-1", KeepKey: true}, ""},
		{client.ProviderConfig{Name: "saved", BaseURL: back.URL(), Model: "fake-1", KeepKey: true, APIKey: "sk-new"}, "Bearer sk-new"},
	} {
		back.Script(llmtest.Reply{Text: "OK"})
		if got, err := k.Service().TestProvider(ctx, tc.cfg); err != nil || !got.OK {
			t.Fatalf("TestProvider(%+v) = %+v, %v", tc.cfg, got, err)
		}
		var auth []string
		for _, r := range back.Requests() {
			if strings.HasSuffix(r.Path, "/chat/completions") {
				auth = append(auth, r.Auth)
			}
		}
		if len(auth) == 0 || auth[len(auth)-1] != tc.wantAuth {
			t.Errorf("TestProvider(%+v) sent Authorization %q, want %q", tc.cfg, auth, tc.wantAuth)
		}
	}
}

func TestTestProviderRefusals(t *testing.T) {
	k := newDeskKernel(t, t.TempDir(), nil)
	back := llmtest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	back.Script(llmtest.Reply{Delay: cancel, Text: "too late"})
	if got, err := k.Service().TestProvider(ctx, client.ProviderConfig{Name: "p", BaseURL: back.URL(), Model: "m"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("TestProvider with the caller gone = %+v, %v; want context.Canceled", got, err)
	}
	for _, bad := range []client.ProviderConfig{
		{Name: "has space", BaseURL: back.URL(), Model: "m"},
		{Name: "p", BaseURL: "localhost:11434", Model: "m"},
		{Name: "p", BaseURL: back.URL(), Model: "m", Proxy: "::"},
	} {
		if got, err := k.Service().TestProvider(context.Background(), bad); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("TestProvider(%+v) = %+v, %v; want ErrInvalid", bad, got, err)
		}
	}
}

func TestDetectProviders(t *testing.T) {
	serve := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	models := func(body string) string {
		return serve(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/models" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		})
	}
	quit := make(chan struct{})
	hanging := serve(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-quit:
		}
	})
	t.Cleanup(func() { close(quit) }) // runs before the server's Close
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	ollama := models(`{"object":"list","data":[{"id":"qwen2.5:7b","object":"model"},{"id":"llama3.2:3b"}]}`)
	llamacpp := models(`{"data":[{"id":"  "},{"id":"gguf-model"}]}`)
	tests := []struct {
		name    string
		targets []kernel.DetectTarget
		want    []client.ProviderConfig
	}{
		{"found", []kernel.DetectTarget{{Name: "ollama", URL: ollama + "/v1/models"}, {Name: "llamacpp", URL: llamacpp + "/v1/models"}},
			[]client.ProviderConfig{{Name: "ollama", BaseURL: ollama + "/v1", Model: "qwen2.5:7b"}, {Name: "llamacpp", BaseURL: llamacpp + "/v1", Model: "gguf-model"}}},
		{"no models", []kernel.DetectTarget{{Name: "ollama", URL: models(`{"object":"list","data":[]}`) + "/v1/models"}}, nil},
		{"not found", []kernel.DetectTarget{{Name: "ollama", URL: ollama + "/api/tags"}}, nil},
		{"garbage", []kernel.DetectTarget{{Name: "ollama", URL: models(`<!doctype html><p>router login`) + "/v1/models"}}, nil},
		{"refused", []kernel.DetectTarget{{Name: "ollama", URL: closed.URL + "/v1/models"}}, nil},
		{"hanging beside a found one", []kernel.DetectTarget{{Name: "ollama", URL: hanging + "/v1/models"}, {Name: "llamacpp", URL: llamacpp + "/v1/models"}},
			[]client.ProviderConfig{{Name: "llamacpp", BaseURL: llamacpp + "/v1", Model: "gguf-model"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newDeskKernel(t, t.TempDir(), func(_ *config.Config, d *kernel.Deps) {
				d.DetectTargets, d.DetectTimeout = tt.targets, 200*time.Millisecond
			})
			got, err := k.Service().DetectProviders(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) || (len(got) > 0 && !reflect.DeepEqual(got, tt.want)) {
				t.Fatalf("DetectProviders = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDetectProvidersProbesConcurrently: each server answers only once both probes have arrived,
// so probes made one after the other would both time out.
func TestDetectProvidersProbesConcurrently(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	var urls []string
	for range 2 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived.Done()
			select {
			case <-both:
				w.Write([]byte(`{"data":[{"id":"m"}]}`))
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	k := newDeskKernel(t, t.TempDir(), func(_ *config.Config, d *kernel.Deps) {
		d.DetectTargets = []kernel.DetectTarget{{Name: "a", URL: urls[0] + "/v1/models"}, {Name: "b", URL: urls[1] + "/v1/models"}}
		d.DetectTimeout = 20 * time.Second
	})
	got, err := k.Service().DetectProviders(context.Background())
	if err != nil || len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("DetectProviders = %+v, %v", got, err)
	}
}
