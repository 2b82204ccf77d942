package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// mention is a named entity found in a sentence.
type mention struct {
	name string
	kind string
}

// token is a word of a sentence with what surrounds it.
type token struct {
	text string // without a possessive 's
	poss bool   // followed by 's
	// spaceBefore reports whether only white space separates it from the previous token.
	spaceBefore bool
}

// tokens splits a sentence into words: runs of letters and digits with inner apostrophes,
// hyphens, ampersands and dots.
func tokens(s string) []token {
	var out []token
	i, gapStart := 0, 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += size
			continue
		}
		start := i
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
				i += size
				continue
			}
			if (r == '\'' || r == '-' || r == '&' || r == '.') && i+size < len(s) {
				next, _ := utf8.DecodeRuneInString(s[i+size:])
				if unicode.IsLetter(next) || unicode.IsDigit(next) {
					i += size
					continue
				}
			}
			break
		}
		t := token{text: s[start:i], spaceBefore: strings.TrimSpace(s[gapStart:start]) == ""}
		if l := strings.ToLower(t.text); strings.HasSuffix(l, "'s") && len(l) > 2 {
			t.text, t.poss = t.text[:len(t.text)-2], true
		}
		out = append(out, t)
		gapStart = i
	}
	return out
}

// capitalised reports whether a token can be part of a name: it starts with an upper-case
// letter and is not "I" or one of its contractions.
func capitalised(t token) bool {
	if !isUpperStart(t.text) {
		return false
	}
	l := strings.ToLower(t.text)
	if i := strings.IndexByte(l, '\''); i >= 0 && i+1 < len(l) && l[i+1] != 's' {
		return false // a contraction: "How're", "Don't", "I'm"
	}
	return l != "i"
}

// mentionsIn finds the named entities of a sentence: runs of capitalised words (joined by
// "of", "de", "&" …), without common words (common.txt) at either end, nor a lone
// sentence-initial word unless seen says it is a name or a verb of speech follows it ("Jon
// said"). Han text has no capitals and gives
// none.
func mentionsIn(s string, seen wordUse) []mention {
	toks := tokens(s)
	var out []mention
	for i := 0; i < len(toks); {
		if !capitalised(toks[i]) {
			i++
			continue
		}
		j := i + 1 // the run is toks[i:j]
		for j < len(toks) && !toks[j-1].poss && toks[j].spaceBefore {
			if capitalised(toks[j]) {
				j++
				continue
			}
			// "Bank of America", "Lord of the Rings": links followed by a capitalised word.
			k := j
			for k < len(toks) && toks[k].spaceBefore && nameLinks[strings.ToLower(toks[k].text)] && !capitalised(toks[k]) {
				k++
			}
			if k > j && k < len(toks) && toks[k].spaceBefore && capitalised(toks[k]) {
				j = k + 1
				continue
			}
			break
		}
		start, end := i, j
		for start < end {
			lw := strings.ToLower(toks[start].text)
			if !common[lw] && !nameLinks[lw] {
				break
			}
			if end-start >= 2 && nameStarts[lw] && capitalised(toks[start+1]) {
				break
			}
			start++
		}
		for end > start && (common[strings.ToLower(toks[end-1].text)] || nameLinks[strings.ToLower(toks[end-1].text)]) {
			end--
		}
		i = j
		if start == end {
			continue
		}
		if start == 0 && end == 1 && !seen.name(toks[0].text) && !(len(toks) > 1 && speechVerbs[strings.ToLower(toks[1].text)]) {
			continue
		}
		words := make([]string, 0, end-start)
		for _, t := range toks[start:end] {
			words = append(words, t.text)
		}
		name := strings.Join(words, " ")
		if utf8.RuneCountInString(name) < 2 || isNumber(name) {
			continue
		}
		out = append(out, mention{name: name, kind: guessMentionKind(toks, start, end)})
	}
	return out
}

// wordUse records how a batch writes its words, to tell a name from a capitalised
// sentence-initial word ("Swimming is fun", "Art's great").
type wordUse struct {
	lower   map[string]bool // written in lower case somewhere
	midCaps map[string]bool // capitalised somewhere other than the start of a sentence
}

// newWordUse reads the words of texts (normalised as [Rules] reads them).
func newWordUse(texts []string) wordUse {
	u := wordUse{lower: map[string]bool{}, midCaps: map[string]bool{}}
	for _, text := range texts {
		for _, s := range sentences(text) {
			for i, t := range tokens(s) {
				switch {
				case !isUpperStart(t.text):
					u.lower[strings.ToLower(t.text)] = true
				case i > 0:
					u.midCaps[strings.ToLower(t.text)] = true
				}
			}
		}
	}
	return u
}

// name reports whether a capitalised word that begins a sentence is a name: the batch also
// writes it capitalised inside a sentence and never in lower case.
func (u wordUse) name(w string) bool {
	l := strings.ToLower(w)
	return u.midCaps[l] && !u.lower[l]
}

// isNumber reports whether s has no letters.
func isNumber(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) < 0
}

// guessMentionKind guesses the kind of the name toks[start:end]: an organisation by its last
// word (Inc, University …), a person by a title, a place after in/at/to/from (unless "to"
// follows a verb of speaking), a person before 's or a person verb, or after a greeting;
// otherwise a thing.
func guessMentionKind(toks []token, start, end int) string {
	last := strings.ToLower(toks[end-1].text)
	if orgSuffixes[last] || end-start > 1 && orgPrefixes[strings.ToLower(toks[start].text)] {
		return KindOrg
	}
	for _, t := range toks[start:end] {
		if titles[strings.ToLower(t.text)] {
			return KindPerson
		}
	}
	prev, prev2 := "", ""
	if start > 0 {
		prev = strings.ToLower(toks[start-1].text)
	}
	if start > 1 {
		prev2 = strings.ToLower(toks[start-2].text)
	}
	next := ""
	if end < len(toks) {
		next = strings.ToLower(toks[end].text)
	}
	switch {
	case placeBefore[prev] && !((prev == "to" || prev == "from") && talkTo[prev2]):
		return KindPlace
	case toks[end-1].poss, personVerbs[next], personBefore[prev], (prev == "to" || prev == "from") && talkTo[prev2]:
		return KindPerson
	}
	return KindThing
}
