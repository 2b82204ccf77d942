package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/kernel/llm"
)

// fakeProvider is a func-field fake of llm.Provider.
type fakeProvider struct {
	name  string
	calls int
	chat  func(ctx context.Context, onDelta func(llm.Delta)) (llm.Response, error)
}

func (f *fakeProvider) Name() string { return f.name }

func (f *fakeProvider) Models(context.Context) ([]string, error) { return []string{f.name}, nil }

func (f *fakeProvider) Chat(ctx context.Context, _ llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	f.calls++
	return f.chat(ctx, onDelta)
}

func ok(text string) func(context.Context, func(llm.Delta)) (llm.Response, error) {
	return func(context.Context, func(llm.Delta)) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: "assistant", Content: text}}, nil
	}
}

func fail(err error) func(context.Context, func(llm.Delta)) (llm.Response, error) {
	return func(context.Context, func(llm.Delta)) (llm.Response, error) { return llm.Response{}, err }
}

func TestFallback(t *testing.T) {
	apiErr := func(p string, status int, msg string) error {
		return &llm.APIError{Provider: p, Status: status, Message: msg}
	}
	tests := []struct {
		name      string
		providers []*fakeProvider
		wantText  string
		wantFrom  string
		wantCalls []int
		wantErr   []string // substrings of the error
	}{
		{
			name:      "first succeeds",
			providers: []*fakeProvider{{name: "a", chat: ok("A")}, {name: "b", chat: ok("B")}},
			wantText:  "A", wantFrom: "a", wantCalls: []int{1, 0},
		},
		{
			name: "second after api error",
			providers: []*fakeProvider{
				{name: "a", chat: fail(apiErr("a", 503, "overloaded"))},
				{name: "b", chat: ok("B")},
			},
			wantText: "B", wantFrom: "b", wantCalls: []int{1, 1},
		},
		{
			name: "all fail",
			providers: []*fakeProvider{
				{name: "a", chat: fail(apiErr("a", 400, "insufficient tool messages following tool_calls message"))},
				{name: "b", chat: fail(errors.New("dial tcp: connection refused"))},
			},
			wantCalls: []int{1, 1},
			wantErr:   []string{"all 2 providers failed", "provider a: HTTP 400: insufficient tool messages", "provider b: dial tcp: connection refused"},
		},
		{
			name: "streamed delta stops fallback",
			providers: []*fakeProvider{
				{name: "a", chat: func(_ context.Context, onDelta func(llm.Delta)) (llm.Response, error) {
					onDelta(llm.Delta{Content: "par"})
					return llm.Response{}, errors.New("stream ended early")
				}},
				{name: "b", chat: ok("B")},
			},
			wantCalls: []int{1, 0},
			wantErr:   []string{"provider a: stream ended early"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := make([]llm.Provider, len(tt.providers))
			for i, p := range tt.providers {
				ps[i] = p
			}
			f := llm.NewFallback(ps...)
			if got := f.Name(); got != tt.providers[0].name {
				t.Errorf("Name() = %q, want %q", got, tt.providers[0].name)
			}
			resp, err := f.Chat(context.Background(), llm.Request{}, func(llm.Delta) {})
			for i, p := range tt.providers {
				if p.calls != tt.wantCalls[i] {
					t.Errorf("provider %s called %d times, want %d", p.name, p.calls, tt.wantCalls[i])
				}
			}
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Chat: no error, want %q", tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.Message.Content != tt.wantText || resp.Provider != tt.wantFrom {
				t.Errorf("got %q from %q, want %q from %q", resp.Message.Content, resp.Provider, tt.wantText, tt.wantFrom)
			}
		})
	}
}

func TestFallbackErrorsAs(t *testing.T) {
	a := &fakeProvider{name: "a", chat: fail(errors.New("boom"))}
	b := &fakeProvider{name: "b", chat: fail(&llm.APIError{Provider: "b", Status: 429, Message: "slow down"})}
	_, err := llm.NewFallback(a, b).Chat(context.Background(), llm.Request{}, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Provider != "b" || ae.Message != "slow down" {
		t.Fatalf("errors.As(%v) = %v, want the APIError of b", err, ae)
	}
}

func TestFallbackCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeProvider{name: "a", chat: func(ctx context.Context, _ func(llm.Delta)) (llm.Response, error) {
		cancel()
		return llm.Response{}, ctx.Err()
	}}
	b := &fakeProvider{name: "b", chat: ok("B")}
	_, err := llm.NewFallback(a, b).Chat(ctx, llm.Request{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if b.calls != 0 {
		t.Fatalf("second provider called after cancellation")
	}
}

func TestFallbackEmpty(t *testing.T) {
	f := llm.NewFallback()
	if f.Name() != "fallback" {
		t.Errorf("Name() = %q, want fallback", f.Name())
	}
	if _, err := f.Chat(context.Background(), llm.Request{}, nil); !errors.Is(err, llm.ErrNoProvider) {
		t.Errorf("err = %v, want ErrNoProvider", err)
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"one byte", "a", 1},
		{"four bytes", "abcd", 1},
		{"five bytes", "abcde", 2},
		{"sentence", "The quick brown fox jumps over the lazy dog", 11},
		{"chinese", "你好世界", 4},
		{"japanese kana", "こんにちは", 5},
		{"mixed", "北京 weather", 2 + 2},
		{"accented counts bytes", "éé", 1},
		{"invalid utf8", "\xff\xfe", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := llm.EstimateTokens(tt.in); got != tt.want {
				t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}
