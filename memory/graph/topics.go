package graph

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// PredicateTalksAbout is the predicate of the topics [Rules] reads: the speaker (or the tool)
// talks about a noun phrase of kind concept.
const PredicateTalksAbout = "talks about"

// DefaultMaxTopics is the number of "talks about" topics (common noun phrases) an event that
// states nothing else gives when [RulesOptions.MaxTopics] is 0: none. Topics are the
// catch-all's least specific facts — in the labelled samples of three dev sets
// (docs/memory-graph.md) nearly all of them were vague or junk — so the graph holds typed
// facts and names by default, and a caller who wants topics asks for them.
const DefaultMaxTopics = -1

// topicMaxWords bounds a topic phrase; a longer run of content words keeps its last words (the
// head of an English noun phrase is its last word).
const topicMaxWords = 3

// topic is a candidate "talks about" object: a noun phrase and its rank.
type topic struct {
	name  string   // lower case, head made singular
	words []string // the words of name
	score int
	order int // position in the event, to break ties
}

// topicsOf returns at most limit topics of an event's text, best first (see [Rules]), none of
// them a name in named (keys of [memory.NameKey]) nor made only of the words of one. use says
// how the batch writes its words; speakerWords are the lower-case words of the speaker's names.
func (r *Rules) topicsOf(text string, use wordUse, named map[string]bool, speakerWords map[string]bool, limit int) []string {
	var cands []topic
	if r.keywords != nil && hasHan(text) {
		for i, k := range r.keywords(text) {
			if t, ok := keywordTopic(k, speakerWords); ok {
				// The hook's order is its ranking, and its keywords go before every phrase.
				t.score, t.order = 1<<20-i, i
				cands = append(cands, t)
			}
		}
	}
	first := len(cands)
	for si, s := range sentences(text) {
		for _, t := range englishTopics(s, use, speakerWords) {
			t.order = len(cands)
			t.score -= topicSentencePenalty * si
			cands = append(cands, t)
		}
	}
	// A word said again is what the event is about.
	count := map[string]int{}
	for _, t := range cands[first:] {
		for _, w := range t.words {
			count[w]++
		}
	}
	for i := first; i < len(cands); i++ {
		c := 0
		for _, w := range cands[i].words {
			c = max(c, count[w])
		}
		cands[i].score += topicRepeatBonus * (min(c, 3) - 1)
	}
	slices.SortStableFunc(cands, func(a, b topic) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	// Words of what the event already names: a topic made only of them says nothing new.
	var namedWords [][]string
	for k := range named {
		namedWords = append(namedWords, lemmaWords(k))
	}
	var out []string
	var chosen [][]string
	for _, t := range cands {
		if len(out) >= limit {
			break
		}
		within := func(w []string) bool { return subset(t.words, w) }
		if named[memory.NameKey(t.name)] || slices.ContainsFunc(namedWords, within) || slices.ContainsFunc(chosen, within) {
			continue
		}
		chosen = append(chosen, t.words)
		out = append(out, t.name)
	}
	return out
}

// englishTopics returns the candidate topics of one sentence: each maximal run of content words
// (see [topicWord]), cut at punctuation, possessives, names and Han text, at most
// [topicMaxWords] words (the last ones), its head made singular ([singular]), scored by
// [topicScore].
func englishTopics(s string, use wordUse, speakerWords map[string]bool) []topic {
	toks := tokens(s)
	var out []topic
	var run []string
	emit := func(phrase []string) {
		words := make([]string, len(phrase))
		for i, w := range phrase {
			words[i] = strings.ToLower(w)
		}
		words[len(words)-1] = singular(words[len(words)-1])
		out = append(out, topic{name: strings.Join(words, " "), words: words, score: topicScore(words)})
	}
	var flush func()
	flush = func() {
		// Inside a run, a word in -s between two others is a verb ("the pottery workshop
		// sells handmade bowls"): two phrases.
		for j := 1; j < len(run)-1; j++ {
			if w := strings.ToLower(run[j]); strings.HasSuffix(w, "s") && singular(w) != w {
				rest := run[j+1:]
				run = run[:j]
				flush()
				run = rest
				flush()
				return
			}
		}
		if len(run) > topicMaxWords {
			run = run[len(run)-topicMaxWords:]
		}
		if len(run) > 0 {
			emit(run)
		}
		run = nil
	}
	prev, prevName := "", false
	for i, t := range toks {
		if !t.spaceBefore {
			flush()
		}
		w := strings.ToLower(t.text)
		// A capitalised word is a name (the mentions' business) unless it merely begins the
		// sentence.
		isName := capitalised(t) && (i > 0 || use.name(t.text)) || hasHan(t.text)
		// After a name, a word in -s is its verb ("Jon grows tomatoes").
		verb := prevName && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")
		if !isName && !verb && topicWord(w, prev) && !speakerWords[w] {
			run = append(run, t.text)
		} else {
			flush()
		}
		if t.poss {
			flush()
		}
		prev, prevName = w, (isName || speakerWords[w]) && !t.poss
	}
	flush()
	return out
}

// Ranking of the English topic candidates: [topicScore], then a small penalty per sentence
// before the candidate's (what a message opens with is usually its news) and a bonus per
// repetition of one of its words in the event (at most two).
const (
	topicSentencePenalty = 2
	topicRepeatBonus     = 10
)

// topicScore ranks a candidate's specificity: 100 per word, then the length of its longest
// word (capped at 12: a longer word is usually a rarer one). A lone word loses 4 when it ends
// like a verb form or an adjective (-ing, -ful, -ous, -ive, -able, -ible: "going", "helpful",
// "passionate" are seldom what is talked about).
func topicScore(words []string) int {
	longest := 0
	for _, w := range words {
		longest = max(longest, min(utf8.RuneCountInString(w), 12))
	}
	s := 100*len(words) + longest
	if len(words) == 1 && hasAnySuffix(words[0], adjectiveEndings) {
		s -= 4
	}
	return s
}

// adjectiveEndings mark a lone word that is likely a verb form or an adjective.
var adjectiveEndings = []string{"ing", "ful", "ous", "ive", "able", "ible"}

// topicWord reports whether a lower-case word can be part of a topic: a word of at least three
// letters, with no digit and no contraction, not in the stop lists (common.txt, pronouns,
// determiners, prepositions, frequent verbs, vague nouns and evaluative adjectives), not an -ly
// adverb, not an -ed form, not an -ing form after an auxiliary ("was thinking") and not a word
// after a subject pronoun or a modal (a verb: "we roast", "I live", "can't wait"). A word in -s
// right after a name is also a verb ([englishTopics]).
func topicWord(w, prev string) bool {
	switch {
	case utf8.RuneCountInString(w) < 3, strings.ContainsFunc(w, unicode.IsDigit), strings.ContainsRune(w, '\''):
		return false
	case common[w] && !topicNouns[w], topicStop[w], cutWords[w], rejectFirst[w], determiners[w], hasVague[w]:
		return false
	case len(w) > 4 && strings.HasSuffix(w, "ly") && !notAdverbs[w]:
		return false
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return false
	case strings.HasSuffix(w, "ing") && (auxiliary[prev] || topicStop[prev]):
		return false
	case verbBefore[prev]:
		return false // "we roast", "I live", "can't wait": a verb
	}
	return true
}

// keywordTopic makes a candidate of a keyword from the Keywords hook; false for a keyword
// without Han characters (the English phrases cover Latin text), of one character, a number,
// the speaker's name, or a pronoun, function word, time word or frequent verb (hanStopWords).
func keywordTopic(k string, speakerWords map[string]bool) (topic, bool) {
	k = normName(k)
	if !hasHan(k) || utf8.RuneCountInString(k) < 2 || speakerWords[strings.ToLower(k)] || hanStopWords[k] {
		return topic{}, false
	}
	return topic{name: k, words: strings.Fields(strings.ToLower(k))}, true
}

// singular returns the singular of a lower-case plural noun ("kids" → "kid", "stories" →
// "story", "classes" → "class", "children" → "child"); other words are returned unchanged.
func singular(w string) string {
	if s, ok := irregularPlurals[w]; ok {
		return s
	}
	if notPlurals[w] || len(w) < 4 || !strings.HasSuffix(w, "s") {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4 && !ieNouns[w[:len(w)-1]]:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"),
		strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zzes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"),
		strings.HasSuffix(w, "ics"):
		return w
	}
	return w[:len(w)-1]
}

// lemmaWords returns the lower-case words of a name, the last one made singular.
func lemmaWords(name string) []string {
	f := strings.Fields(strings.ToLower(name))
	if len(f) > 0 {
		f[len(f)-1] = singular(f[len(f)-1])
	}
	return f
}

// subset reports whether every word of a is in b (for Han words: contained in one of b's).
func subset(a, b []string) bool {
	if len(a) == 0 {
		return false
	}
	for _, w := range a {
		if !slices.Contains(b, w) && !(hasHan(w) && slices.ContainsFunc(b, func(x string) bool { return strings.Contains(x, w) })) {
			return false
		}
	}
	return true
}

// hasHan reports whether s holds a Han character.
func hasHan(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) })
}
