package client_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/client/clienttest"
)

// deskBackend is an api.Backend whose desktop methods record what reached them and answer what
// the test set; every other method is left to the nil embedded interfaces (and panics).
type deskBackend struct {
	client.Service
	client.CompletionService

	mu       sync.Mutex
	paused   []bool
	tested   []client.ProviderConfig
	check    client.ProviderCheck
	detected []client.ProviderConfig
	err      error
}

func (b *deskBackend) SetPaused(_ context.Context, p bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused = append(b.paused, p)
	return b.err
}

func (b *deskBackend) TestProvider(_ context.Context, p client.ProviderConfig) (client.ProviderCheck, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tested = append(b.tested, p)
	return b.check, b.err
}

func (b *deskBackend) DetectProviders(context.Context) ([]client.ProviderConfig, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.detected, b.err
}

// locked runs fn under the backend's lock (handlers run on the server's goroutines).
func (b *deskBackend) locked(fn func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fn()
}

func TestDesktopOverAPI(t *testing.T) {
	ctx := context.Background()
	b := &deskBackend{
		check: client.ProviderCheck{OK: true, Latency: 1234 * time.Millisecond, Model: "qwen-plus", Models: []string{"qwen-plus", "qwen-max"}, Reply: "OK"},
		detected: []client.ProviderConfig{{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"},
			{Name: "llamacpp", BaseURL: "http://127.0.0.1:8080/v1", Model: "gguf"}},
	}
	c := serveAPI(t, b)
	for _, p := range []bool{true, false} {
		if err := c.SetPaused(ctx, p); err != nil {
			t.Fatalf("SetPaused(%v): %v", p, err)
		}
	}
	b.locked(func() {
		if !reflect.DeepEqual(b.paused, []bool{true, false}) {
			t.Fatalf("the kernel got %v", b.paused)
		}
	})
	cfg := client.ProviderConfig{Name: "qwen", BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", Model: "qwen-plus", APIKey: "sk-q", Proxy: "socks5://127.0.0.1:1080"}
	got, err := c.TestProvider(ctx, cfg)
	if err != nil || !reflect.DeepEqual(got, b.check) {
		t.Fatalf("TestProvider = %+v, %v; want %+v", got, err, b.check)
	}
	b.locked(func() {
		if len(b.tested) != 1 || b.tested[0] != cfg {
			t.Fatalf("the kernel got %+v, want the whole configuration with its key", b.tested)
		}
	})
	ps, err := c.DetectProviders(ctx)
	if err != nil || !reflect.DeepEqual(ps, b.detected) {
		t.Fatalf("DetectProviders = %+v, %v", ps, err)
	}
	b.locked(func() { b.detected = nil })
	if ps, err := c.DetectProviders(ctx); err != nil || ps == nil || len(ps) != 0 {
		t.Fatalf("DetectProviders of nothing = %#v, %v; want an empty list", ps, err)
	}

	b.locked(func() { b.err = fmt.Errorf("%w: provider x: a model is required (--model)", client.ErrInvalid) })
	if _, err := c.TestProvider(ctx, client.ProviderConfig{Name: "x", BaseURL: "http://h/v1"}); !errors.Is(err, client.ErrInvalid) ||
		!strings.Contains(err.Error(), "a model is required") {
		t.Fatalf("TestProvider refused = %v", err)
	}
	b.locked(func() { b.err = fmt.Errorf("saving the pause: %w", client.ErrUnavailable) })
	if err := c.SetPaused(ctx, true); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("SetPaused failing = %v", err)
	}
}

func TestDesktopFake(t *testing.T) {
	ctx := context.Background()
	f := clienttest.New()
	c := dialUnix(t, f)
	if _, err := c.AddProvider(ctx, client.ProviderConfig{Name: "p", BaseURL: "http://x/v1", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSession(ctx, client.Session{ID: "qq-1", Channel: "qq", Partner: "bob"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if r := reqs[len(reqs)-1]; r.Method+" "+r.Path != "POST /api/v1/pause" || r.Body != `{"paused":true}` {
		t.Fatalf("request %+v", r)
	}
	if st, err := c.Status(ctx); err != nil || !st.Paused || !f.Paused() {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if _, err := c.Chat(ctx, client.ChatRequest{Session: "qq-1", Input: "hi"}, nil); !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "paused") {
		t.Fatalf("channel chat while paused = %v", err)
	}
	if res, err := c.Chat(ctx, client.ChatRequest{Input: "hi"}, nil); err != nil || res.Text != "PONG: hi" {
		t.Fatalf("owner chat while paused = %+v, %v", res, err)
	}
	if err := c.SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(ctx, client.ChatRequest{Session: "qq-1", Input: "hi"}, nil); err != nil {
		t.Fatalf("channel chat after resume = %v", err)
	}

	cfg := client.ProviderConfig{Name: "ds", BaseURL: "https://api.deepseek.com/v1/", Model: "deepseek-chat", APIKey: "sk-good"}
	got, err := c.TestProvider(ctx, cfg)
	if want := (client.ProviderCheck{OK: true, Latency: 42 * time.Millisecond, Model: "deepseek-chat", Models: []string{"deepseek-chat"}, Reply: "OK"}); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("default TestProvider = %+v, %v", got, err)
	}
	f.SetProviderCheck(func(p client.ProviderConfig) client.ProviderCheck {
		if p.APIKey != "sk-good" {
			return client.ProviderCheck{Error: "provider " + p.Name + ": HTTP 401: Incorrect API key provided", Latency: time.Millisecond}
		}
		return client.ProviderCheck{OK: true, Model: p.Model}
	})
	cfg.APIKey = "sk-bad"
	if got, err := c.TestProvider(ctx, cfg); err != nil || got.OK || !strings.Contains(got.Error, "401") {
		t.Fatalf("scripted TestProvider = %+v, %v", got, err)
	}
	if _, err := c.TestProvider(ctx, client.ProviderConfig{Name: "ds", BaseURL: "api.deepseek.com", Model: "m"}); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("TestProvider without a URL scheme = %v", err)
	}
	if ps, err := c.Providers(ctx); err != nil || len(ps) != 1 {
		t.Fatalf("a tested provider was saved: %+v, %v", ps, err)
	}

	if ps, err := c.DetectProviders(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("DetectProviders by default = %+v, %v", ps, err)
	}
	ollama := client.ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b"}
	f.SetDetected(ollama)
	if ps, err := c.DetectProviders(ctx); err != nil || !reflect.DeepEqual(ps, []client.ProviderConfig{ollama}) {
		t.Fatalf("DetectProviders = %+v, %v", ps, err)
	}
}
