package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// Summary limits.
const (
	maxExcerpt     = 500  // runes of an LLM-free excerpt
	maxPromptText  = 6000 // runes of an item's text sent to the model
	summaryTokens  = 200
	maxSummaryText = 2000 // runes kept of the model's answer
)

// noProviderText is how the kernel's llm/complete error says no provider is configured
// (kernel/llm.ErrNoProvider); the plugin then uses excerpts.
const noProviderText = "no LLM provider configured"

// Summary modes recorded in the memory event's meta.
const (
	modeLLM     = "llm"
	modeExcerpt = "excerpt"
)

// Completer asks the owner's model for one completion (sdk.Kernel.Complete).
type Completer func(ctx context.Context, req protocol.CompleteParams) (protocol.CompleteResult, error)

// PlainText returns the readable text of an item's HTML (or plain) content: tags dropped,
// scripts and styles skipped, whitespace collapsed.
func PlainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return collapse(s)
	}
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return collapse(b.String())
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript":
				skip++
			case "br", "p", "div", "li", "h1", "h2", "h3", "h4", "tr":
				b.WriteByte(' ')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript":
				if skip > 0 {
					skip--
				}
			case "p", "div", "li", "h1", "h2", "h3", "h4", "tr":
				b.WriteByte(' ')
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		}
	}
}

// collapse joins s's words with single spaces.
func collapse(s string) string { return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ") }

// Excerpt returns the first maxExcerpt runes of text, cut at a word boundary when there is one
// near the end, marked with an ellipsis when cut.
func Excerpt(text string) string {
	if utf8.RuneCountInString(text) <= maxExcerpt {
		return text
	}
	r := []rune(text)[:maxExcerpt]
	cut := len(r)
	for i := len(r) - 1; i > maxExcerpt*4/5; i-- {
		if unicode.IsSpace(r[i]) {
			cut = i
			break
		}
	}
	return strings.TrimSpace(string(r[:cut])) + "…"
}

// isNoProvider reports whether err is llm/complete's "no provider configured" (or the manifest
// not declaring the llm capability): excerpts replace summaries then, without a warning.
func isNoProvider(err error) bool {
	var ce *sdk.CapabilityError
	return errors.As(err, &ce) || strings.Contains(err.Error(), noProviderText)
}

// Summary is an item's summary for memory.
type Summary struct {
	Text string
	Mode string // modeLLM or modeExcerpt
	// NoProvider says llm/complete reported that no model is configured (or the llm capability
	// is not declared); later items of the same fetch skip the call.
	NoProvider bool
	// Err is the model's failure other than "no provider" (logged; the excerpt is used).
	Err error
}

// Summarise returns a summary of an item by the owner's model, or, when complete is nil, no
// model is configured or it fails, an excerpt of the item's text.
func Summarise(ctx context.Context, complete Completer, feedTitle, title, link, text string) Summary {
	text = strings.TrimSpace(text)
	var out Summary
	if complete != nil {
		prompt := fmt.Sprintf("Feed: %s\nTitle: %s\nLink: %s\n\n%s", feedTitle, title, link, truncateRunes(text, maxPromptText))
		res, err := complete(ctx, protocol.CompleteParams{
			System: "You summarise news items for the owner's memory. Answer with two or three plain sentences " +
				"in the item's language, with no preamble.",
			Messages: []protocol.ChatMessage{{Role: "user", Content: prompt}}, MaxTokens: summaryTokens})
		switch {
		case err == nil && strings.TrimSpace(res.Text) != "":
			return Summary{Text: truncateRunes(collapse(res.Text), maxSummaryText), Mode: modeLLM}
		case err == nil:
			out.Err = errors.New("the model answered with an empty summary")
		case isNoProvider(err):
			out.NoProvider = true
		default:
			out.Err = err
		}
	}
	out.Mode = modeExcerpt
	out.Text = Excerpt(text)
	if text == "" {
		out.Text = "(the item has no text)"
	}
	return out
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
