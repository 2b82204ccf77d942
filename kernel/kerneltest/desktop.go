package kerneltest

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
)

// testPause: pausing stops chat on channel sessions (ErrUnavailable naming the pause) while the
// owner's sessions keep working; Status reports it; resuming lets the channel in again.
func testPause(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	if _, err := s.CreateSession(ctx, client.Session{ID: "qq-g1", Channel: "qq", Scope: "group:g1"}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Status(ctx); err != nil || st.Paused {
		t.Fatalf("Status of a fresh kernel = %+v, %v (want not paused)", st, err)
	}
	for range 2 { // pausing twice is pausing once
		if err := s.SetPaused(ctx, true); err != nil {
			t.Fatalf("SetPaused(true): %v", err)
		}
	}
	if st, err := s.Status(ctx); err != nil || !st.Paused {
		t.Fatalf("Status after SetPaused(true) = %+v, %v", st, err)
	}
	before := len(fake.Requests())
	_, err := s.Chat(ctx, client.ChatRequest{Session: "qq-g1", Input: "hello from the group"}, nil)
	if !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "paused") {
		t.Fatalf("channel chat while paused = %v, want ErrUnavailable saying paused", err)
	}
	if n := len(fake.Requests()); n != before {
		t.Fatalf("a refused channel turn reached the LLM (%d requests, was %d)", n, before)
	}
	if h, err := s.History(ctx, "qq-g1", 0); err != nil || len(h) != 0 {
		t.Fatalf("a refused channel turn was stored: %+v, %v", h, err)
	}
	if res, err := s.Chat(ctx, client.ChatRequest{Input: "owner here"}, nil); err != nil || res.Text != "PONG owner here" {
		t.Fatalf("owner chat while paused = %+v, %v", res, err)
	}
	if err := s.SetPaused(ctx, false); err != nil {
		t.Fatalf("SetPaused(false): %v", err)
	}
	if st, err := s.Status(ctx); err != nil || st.Paused {
		t.Fatalf("Status after resume = %+v, %v", st, err)
	}
	if res, err := s.Chat(ctx, client.ChatRequest{Session: "qq-g1", Input: "back again"}, nil); err != nil || res.Text != "PONG back again" {
		t.Fatalf("channel chat after resume = %+v, %v", res, err)
	}
}

// testTestProvider: a working provider is OK with its reply, model and model list, a failing one
// is OK false with the server's message, a bad configuration is ErrInvalid, and nothing is saved.
func testTestProvider(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := llmtest.NewServer(t)
	cfg := client.ProviderConfig{Name: "trial", BaseURL: fake.URL() + "/", Model: "fake-1", APIKey: "sk-trial"}
	got, err := s.TestProvider(ctx, cfg)
	if err != nil {
		t.Fatalf("TestProvider: %v", err)
	}
	if !got.OK || got.Error != "" || got.Model == "" || !strings.HasPrefix(got.Reply, "PONG") || got.Latency <= 0 ||
		!slices.Equal(got.Models, []string{"fake-1"}) {
		t.Fatalf("TestProvider of a working server = %+v", got)
	}
	var chats int
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			chats++
			if r.Stream || r.Auth != "Bearer sk-trial" || len(r.Messages) == 0 || r.Messages[0].Role != "system" {
				t.Errorf("test request %+v: want one non-streamed request with the key and a system message", r)
			}
		}
	}
	if chats != 1 {
		t.Fatalf("%d chat requests, want 1", chats)
	}

	fake.Script(llmtest.Reply{Status: 401, Message: "Incorrect API key provided"})
	got, err = s.TestProvider(ctx, cfg)
	if err != nil || got.OK || !strings.Contains(got.Error, "Incorrect API key provided") {
		t.Fatalf("TestProvider of a server refusing the key = %+v, %v", got, err)
	}

	for _, bad := range []client.ProviderConfig{
		{Name: "", BaseURL: fake.URL(), Model: "m"},
		{Name: "p", BaseURL: "ftp://x", Model: "m"},
		{Name: "p", BaseURL: fake.URL(), Model: " "},
	} {
		if got, err := s.TestProvider(ctx, bad); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("TestProvider(%+v) = %+v, %v; want ErrInvalid", bad, got, err)
		}
	}
	if ps, err := s.Providers(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("a tested provider was saved: %+v, %v", ps, err)
	}
}

// testDetectProviders: whatever local servers run, detection answers, and every offer is a
// configuration AddProvider accepts.
func testDetectProviders(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	ps, err := s.DetectProviders(ctx)
	if err != nil {
		t.Fatalf("DetectProviders: %v", err)
	}
	for _, p := range ps {
		u, err := url.Parse(p.BaseURL)
		if err != nil || u.Scheme != "http" || !strings.HasSuffix(p.BaseURL, "/v1") || p.Name == "" || p.Model == "" || p.APIKey != "" {
			t.Fatalf("offer %+v: want a name, an http://…/v1 base URL, a model and no key", p)
		}
		if _, err := s.AddProvider(ctx, p); err != nil {
			t.Fatalf("AddProvider(offer %+v): %v", p, err)
		}
	}
}
