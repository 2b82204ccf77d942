package memory

import (
	"strings"
	"unicode"
)

// Tokenizer turns text into index tokens (jieba for Chinese, word tokens otherwise). It returns an
// error when it cannot work (e.g. its dictionary is missing); stores then refuse to index.
type Tokenizer func(text string) ([]string, error)

// DefaultTokenize is the tokenizer stores use when none is injected: it lowercases text and splits
// it on every rune that is neither a letter nor a digit, so "Hello, 北京大学!" gives
// ["hello", "北京大学"]. It never fails and is safe for concurrent use.
func DefaultTokenize(text string) ([]string, error) {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), nil
}

// IndexedText is the text of an event that goes through the tokenizer into the full-text index:
// its Content, plus the tool name for tool results, plus each call's name and arguments for
// assistant events with tool calls, separated by newlines.
func IndexedText(e Event) string {
	var b strings.Builder
	b.WriteString(e.Content)
	if e.Role == RoleTool && e.ToolName != "" {
		b.WriteString("\n")
		b.WriteString(e.ToolName)
	}
	if e.Role == RoleAssistant {
		for _, c := range e.ToolCalls {
			b.WriteString("\n")
			b.WriteString(c.Name)
			b.WriteString("\n")
			b.WriteString(c.Arguments)
		}
	}
	return b.String()
}

// IndexTokens tokenizes the indexed text of e with tok (nil: [DefaultTokenize]) and returns the
// tokens space-joined, as stored in a full-text index and returned in [TextHit.Indexed]. Empty
// tokens are dropped and a token containing whitespace counts as its parts, so the joined form
// splits back into exactly the stored tokens.
func IndexTokens(tok Tokenizer, e Event) (string, error) {
	if tok == nil {
		tok = DefaultTokenize
	}
	toks, err := tok(IndexedText(e))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range toks {
		for _, f := range strings.Fields(t) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f)
		}
	}
	return b.String(), nil
}
