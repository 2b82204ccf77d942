package llm

import (
	"unicode"
	"unicode/utf8"
)

// EstimateTokens returns a cheap estimate of the number of tokens s costs a typical BPE tokenizer:
// one token per CJK (Han, Hiragana, Katakana, Hangul) rune and one token per 4 bytes of everything
// else, rounded up. It allocates nothing and is safe for concurrent use.
func EstimateTokens(s string) int {
	cjk, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			other++
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		} else {
			other += n
		}
		i += n
	}
	return cjk + (other+3)/4
}
