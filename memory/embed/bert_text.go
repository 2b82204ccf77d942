package embed

// BERT's text handling around the WordPiece model: added tokens cut out before (or after)
// normalisation, the BertNormalizer (clean text, CJK spacing, accent stripping, lowercasing) and
// the BertPreTokenizer's word split, with the character classes they use.

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// splitAdded cuts text around the added tokens (leftmost, then longest match) and calls fn
// for each plain segment and each added token; fn returns false to stop. normalized selects
// the tokens matched before (false) or after (true) normalisation.
func splitAdded(text string, added []addedToken, normalized bool, fn func(seg string, id int32, isAdded bool) bool) {
	var candidates []addedToken
	for _, a := range added {
		if a.normalized == normalized {
			candidates = append(candidates, a)
		}
	}
	if len(candidates) == 0 {
		if text != "" {
			fn(text, 0, false)
		}
		return
	}
	segStart := 0
	for i := 0; i < len(text); {
		a, ok := matchAdded(text, i, candidates)
		if !ok {
			r, size := utf8.DecodeRuneInString(text[i:])
			// Hand a long plain stretch over at a space (where no word continues), so a
			// caller that has enough tokens stops without scanning the rest of the text.
			if i-segStart >= 1024 && unicode.IsSpace(r) {
				if !fn(text[segStart:i], 0, false) {
					return
				}
				segStart = i
			}
			i += size
			continue
		}
		segEnd, next := i, i+len(a.content)
		if a.lstrip {
			segEnd = segStart + len(strings.TrimRightFunc(text[segStart:i], unicode.IsSpace))
		}
		if a.rstrip {
			next = len(text) - len(strings.TrimLeftFunc(text[next:], unicode.IsSpace))
		}
		if segEnd > segStart && !fn(text[segStart:segEnd], 0, false) {
			return
		}
		if !fn(a.content, a.id, true) {
			return
		}
		segStart, i = next, next
	}
	if segStart < len(text) {
		fn(text[segStart:], 0, false)
	}
}

// matchAdded returns the longest added token at text[i:] (candidates are sorted longest first).
func matchAdded(text string, i int, candidates []addedToken) (addedToken, bool) {
	for _, a := range candidates {
		if !strings.HasPrefix(text[i:], a.content) {
			continue
		}
		if a.singleWord {
			before, _ := utf8.DecodeLastRuneInString(text[:i])
			after, _ := utf8.DecodeRuneInString(text[i+len(a.content):])
			if i > 0 && isWordChar(before) || i+len(a.content) < len(text) && isWordChar(after) {
				continue
			}
		}
		return a, true
	}
	return addedToken{}, false
}

func isWordChar(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// normalize applies the BertNormalizer: clean_text, handle_chinese_chars, strip_accents and
// lowercase, in that order.
func (w *WordPiece) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for _, r := range s {
		if w.cleanText {
			if r == 0 || r == utf8.RuneError || isBertControl(r) {
				continue
			}
			if unicode.IsSpace(r) {
				r = ' '
			}
		}
		if w.handleCJK && isCJKIdeograph(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if w.stripAccents {
		out = stripMarks(norm.NFD.String(out))
	}
	if w.lowercase {
		out = strings.ToLower(out)
	}
	return out
}

// stripMarks removes the non-spacing marks (category Mn) of an NFD string.
func stripMarks(s string) string {
	if strings.IndexFunc(s, isNonSpacingMark) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isNonSpacingMark(r) {
			return -1
		}
		return r
	}, s)
}

func isNonSpacingMark(r rune) bool { return unicode.Is(unicode.Mn, r) }

// isBertControl is tokenizers' is_control: the "Other" categories (Cc, Cf, Cn, Co, Cs) except
// tab, newline and carriage return, which are whitespace.
func isBertControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) || !isAssigned(r)
}

// assignedTables are the Unicode categories other than Cn (unassigned).
var assignedTables = []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C}

func isAssigned(r rune) bool { return unicode.In(r, assignedTables...) }

// isCJKIdeograph is BERT's _is_chinese_char: the CJK Unified Ideographs blocks and their
// extensions and compatibility blocks (not Hiragana, Katakana or Hangul).
func isCJKIdeograph(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// isBertPunct is the BertPreTokenizer's punctuation: all ASCII punctuation (including the
// symbols $ + < = > ^ ` | ~) and Unicode category P.
func isBertPunct(r rune) bool {
	if r < 0x80 {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.IsPunct(r)
}

// eachBertWord calls fn with the words of the BertPreTokenizer: whitespace separates words
// and is dropped, each punctuation character is a word of its own. fn returns false to stop.
func eachBertWord(s string, fn func(string) bool) {
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 && !fn(s[start:i]) {
				return
			}
			start = -1
		case isBertPunct(r):
			if start >= 0 && !fn(s[start:i]) {
				return
			}
			start = -1
			if !fn(s[i : i+utf8.RuneLen(r)]) {
				return
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

var _ TextTokenizer = (*WordPiece)(nil)
