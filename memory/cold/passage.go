package cold

import (
	"strings"
	"unicode/utf8"
)

// Passages: a long message (an assistant's answer, a pasted document) is recalled as the passage
// of it that holds the query's terms, not whole. The message is cut into sentences (and lines);
// the passage is the run of consecutive sentences of at most Params.PassageTokens tokens that
// covers the most distinct query terms (the earliest such run on a tie), marked "…" where it
// was cut. The hit keeps the whole event (Hit.Event), so a caller can always show all of it.

// passages sets Hit.Passage on the hits whose event is longer than the passage bound.
func (r *Recaller) passages(hits []Hit, terms []string) {
	if r.p.PassageTokens <= 0 {
		return
	}
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	for i := range hits {
		e := hits[i].Event
		if eventTokens(e.Tokens, e.Content) <= r.p.PassageTokens {
			continue
		}
		hits[i].Passage, hits[i].PassageTokens = r.passage(e.Content, e.Tokens, want)
	}
}

type sentence struct {
	from, to int // byte range in the content
	tokens   int
	terms    map[string]bool
}

// eventTokens is the event's token count, or an estimate (4 bytes a token) when it has none.
func eventTokens(tokens int, content string) int {
	if tokens > 0 {
		return tokens
	}
	return (len(content) + 3) / 4
}

func (r *Recaller) passage(content string, tokens int, want map[string]bool) (string, int) {
	total := eventTokens(tokens, content)
	runes := max(1, utf8.RuneCountInString(content))
	var ss []sentence
	for _, sp := range splitSentences(content) {
		text := content[sp[0]:sp[1]]
		s := sentence{from: sp[0], to: sp[1], tokens: max(1, total*utf8.RuneCountInString(text)/runes), terms: map[string]bool{}}
		if toks, err := r.opts.Tokens(text); err == nil {
			for _, t := range toks {
				if want[t] {
					s.terms[t] = true
				}
			}
		}
		ss = append(ss, s)
	}
	bestFrom, bestTo, bestCov := -1, -1, -1
	for i := range ss {
		cov := map[string]bool{}
		used := 0
		for j := i; j < len(ss) && used+ss[j].tokens <= r.p.PassageTokens; j++ {
			used += ss[j].tokens
			for t := range ss[j].terms {
				cov[t] = true
			}
			if len(cov) > bestCov {
				bestFrom, bestTo, bestCov = i, j, len(cov)
			}
		}
	}
	var text string
	var from, to int
	if bestFrom < 0 { // every sentence is longer than the bound: the start of the best one
		best := 0
		for i, s := range ss {
			if len(s.terms) > len(ss[best].terms) {
				best = i
			}
		}
		from = ss[best].from
		to = from
		for n := 0; to < ss[best].to && n < r.p.PassageTokens*runes/total; n++ {
			_, size := utf8.DecodeRuneInString(content[to:])
			to += size
		}
	} else {
		from, to = ss[bestFrom].from, ss[bestTo].to
	}
	text = strings.TrimSpace(content[from:to])
	if strings.TrimSpace(content[:from]) != "" {
		text = "… " + text
	}
	if strings.TrimSpace(content[to:]) != "" {
		text += " …"
	}
	return text, max(1, total*utf8.RuneCountInString(text)/runes)
}

// splitSentences cuts text after sentence punctuation (. ! ? followed by a space, or the
// full-width 。！？；, or a line break), returning byte ranges that together cover the text.
func splitSentences(text string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		end := -1
		switch r {
		case '\n', '。', '！', '？', '；':
			end = i + size
		case '.', '!', '?':
			if i+size >= len(text) || text[i+size] == ' ' || text[i+size] == '\n' {
				end = i + size
			}
		}
		i += size
		if end > start {
			if strings.TrimSpace(text[start:end]) != "" {
				out = append(out, [2]int{start, end})
			} else if len(out) > 0 {
				out[len(out)-1][1] = end
			}
			start = end
		}
	}
	if start < len(text) {
		if strings.TrimSpace(text[start:]) != "" || len(out) == 0 {
			out = append(out, [2]int{start, len(text)})
		} else {
			out[len(out)-1][1] = len(text)
		}
	}
	return out
}
