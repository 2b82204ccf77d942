package client

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of SplitCommand (test them with errors.Is; a QuoteError says where).
var (
	ErrUnterminatedQuote = errors.New("unterminated quote")
	ErrTrailingBackslash = errors.New("trailing backslash")
)

// QuoteError is SplitCommand's error for a quote that is not closed: Quote is ' or ", Pos its
// rune index in the line (0-based). It wraps ErrUnterminatedQuote.
type QuoteError struct {
	Quote rune
	Pos   int
}

func (e *QuoteError) Error() string {
	return fmt.Sprintf("unterminated quote %c at %d", e.Quote, e.Pos)
}

// Unwrap returns ErrUnterminatedQuote.
func (e *QuoteError) Unwrap() error { return ErrUnterminatedQuote }

// SplitCommand splits a command line into words the way a POSIX shell does, without expansions:
// blanks separate words; 'single quotes' keep everything literally; "double quotes" keep
// everything but a backslash before " \ $ ` or a newline; outside quotes a backslash keeps the
// next character (a backslash-newline is removed). An empty quoted string makes an empty word.
// Blank input gives no words and no error. waiter's --command and the desktop's plugin form use it.
func SplitCommand(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		inArg bool // a word has started (possibly empty: "")
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				words = append(words, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '\\':
			if i+1 >= len(rs) {
				return nil, ErrTrailingBackslash
			}
			i++
			if rs[i] == '\n' {
				continue
			}
			cur.WriteRune(rs[i])
			inArg = true
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j >= len(rs) {
				return nil, &QuoteError{Quote: '\'', Pos: i}
			}
			cur.WriteString(string(rs[i+1 : j]))
			inArg, i = true, j
		case c == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
					j++
					if rs[j] != '\n' {
						cur.WriteRune(rs[j])
					}
					continue
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, &QuoteError{Quote: '"', Pos: i}
			}
			inArg, i = true, j
		default:
			cur.WriteRune(c)
			inArg = true
		}
	}
	if inArg {
		words = append(words, cur.String())
	}
	return words, nil
}
