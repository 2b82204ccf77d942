package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
)

func TestPlainText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain   text\n here", "plain text here"},
		{"<p>The <b>lighthouse</b> reopened.</p><p>Second</p>", "The lighthouse reopened. Second"},
		{"a<br>b", "a b"},
		{"<script>track()</script><style>p{}</style>kept", "kept"},
		{"Fish &amp; chips &lt;3", "Fish & chips <3"},
		{"<p>如何阅读潮汐表</p>", "如何阅读潮汐表"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := PlainText(tt.in); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	if got := Excerpt("short"); got != "short" {
		t.Fatalf("short: %q", got)
	}
	long := strings.Repeat("word ", 200)
	got := Excerpt(long)
	if !strings.HasSuffix(got, "word…") || utf8.RuneCountInString(got) > maxExcerpt+1 {
		t.Fatalf("excerpt of words: %q", got)
	}
	cjk := strings.Repeat("潮", 800)
	if got := Excerpt(cjk); utf8.RuneCountInString(got) != maxExcerpt+1 || !strings.HasSuffix(got, "…") {
		t.Fatalf("excerpt without spaces has %d runes", utf8.RuneCountInString(got))
	}
}

func TestSummarise(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answer := func(text string, err error) Completer {
		return func(_ context.Context, req protocol.CompleteParams) (protocol.CompleteResult, error) {
			if len(req.Messages) != 1 || !strings.Contains(req.Messages[0].Content, "Title: Lighthouse") || req.MaxTokens != summaryTokens {
				t.Errorf("request %+v", req)
			}
			return protocol.CompleteResult{Text: text}, err
		}
	}
	tests := []struct {
		name       string
		complete   Completer
		text, mode string
		noProvider bool
		err        string
	}{
		{"the model summarises", answer("  The lighthouse\nreopened.  ", nil), "The lighthouse reopened.", modeLLM, false, ""},
		{"no model configured", answer("", errors.New("llm/complete: unavailable: no LLM provider configured: add one with `waiter provider add`")),
			"It reopened on Tuesday.", modeExcerpt, true, ""},
		{"no llm capability", answer("", &sdk.CapabilityError{Method: "llm/complete", Capability: "llm"}), "It reopened on Tuesday.", modeExcerpt, true, ""},
		{"the model fails", answer("", errors.New("llm/complete via fake: 500")), "It reopened on Tuesday.", modeExcerpt, false, "500"},
		{"an empty answer", answer(" ", nil), "It reopened on Tuesday.", modeExcerpt, false, "empty summary"},
		{"no completer", nil, "It reopened on Tuesday.", modeExcerpt, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarise(ctx, tt.complete, "Gazette", "Lighthouse", "https://x/1", "It reopened on Tuesday.")
			if s.Text != tt.text || s.Mode != tt.mode || s.NoProvider != tt.noProvider || (tt.err == "") != (s.Err == nil) ||
				(s.Err != nil && !strings.Contains(s.Err.Error(), tt.err)) {
				t.Fatalf("got %+v", s)
			}
		})
	}
	if s := Summarise(ctx, nil, "G", "T", "", ""); s.Text != "(the item has no text)" {
		t.Fatalf("empty item: %+v", s)
	}
}
