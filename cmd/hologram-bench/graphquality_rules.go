package main

import (
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/graph"
)

// newQualityRules builds the rules extractor as the memory engine does: WordNet's word
// classes, jieba's part-of-speech tags and jieba's words as Chinese keywords. (For the before
// figures on main, this file is replaced by one that builds main's extractor.)
func newQualityRules(owner string, lex *embed.Lexicon, tok *embed.Tokenizer) graph.Extractor {
	return graph.NewRules(graph.RulesOptions{Owner: owner, Lexicon: lex, Tag: jiebaTags(tok), Keywords: hanKeywords(tok)})
}

// jiebaTags adapts the tokenizer's tagging to the rules' hook.
func jiebaTags(tok *embed.Tokenizer) func(string) []graph.Tagged {
	return func(text string) []graph.Tagged {
		tags, err := tok.Tag(text)
		if err != nil {
			return nil
		}
		out := make([]graph.Tagged, len(tags))
		for i, t := range tags {
			out[i] = graph.Tagged{Word: t.Word, POS: t.POS}
		}
		return out
	}
}

// hanKeywords are the text's jieba words of two characters or more, in order (the engine
// ranks them by document frequency; the bench has no store to count in).
func hanKeywords(tok *embed.Tokenizer) func(string) []string {
	return func(text string) []string {
		toks, err := tok.Tokens(text)
		if err != nil {
			return nil
		}
		seen := map[string]bool{}
		var out []string
		for _, t := range toks {
			if utf8.RuneCountInString(t) >= 2 && !seen[t] && t[0] >= 0x80 {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	}
}

// endsFact reports whether a fact is a negation (it ends a triple, creates none).
func endsFact(f memory.Fact) bool { return f.Ends }
