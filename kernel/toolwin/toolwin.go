// Package toolwin chooses the tools one LLM request offers: the tool window. Like the memory's
// L1 window for events, it scores every tool the session may call against the turn (the input's
// words against each tool's name and description, the tools used lately, the pinned ones) and
// sends the best within a token budget and a hard count. Servers refuse more than 128 tools and
// every schema costs prompt tokens; with a few MCP servers a setup has hundreds.
//
// A tool the input names verbatim, a pinned tool and a tool the model enabled (through the
// tool_search meta-tool the agent offers when some are left out) are always in the window, up to
// the hard limit of [llm.MaxTools].
//
// The window is a stage of its own: it takes the list of tools already filtered by what the
// session may call (visibility and scopes are decided before) and knows nothing of sessions.
// [Select] is a pure function, safe for concurrent use.
package toolwin

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/hologramagent/hologram/kernel/llm"
)

// Defaults of [Options].
const (
	// DefaultMaxTools is the most tools a window holds unless configured: half the servers'
	// limit, which leaves room for tools enabled mid-turn.
	DefaultMaxTools = 64
	// DefaultTokenBudget bounds the schemas' estimated tokens (bytes / 4) in a window: a
	// quarter of an 8,000-token context is 2,000; the default is sized for today's 32k–128k
	// models and is the knob for small ones.
	DefaultTokenBudget = 12_000
)

// Options configures [Select]. The zero value uses the defaults.
type Options struct {
	MaxTools    int // at most [llm.MaxTools]; 0 = DefaultMaxTools
	TokenBudget int // estimated tokens of the window's tools; 0 = DefaultTokenBudget
}

// Input is what the turn tells the window.
type Input struct {
	Text    string   // the turn's input (and, mid-turn, the model's latest text)
	Recent  []string // tools used lately, most recent first
	Pinned  []string // tools always offered (the kernel's own meta-tools)
	Enabled []string // tools the model enabled with tool_search during this turn
}

// Reasons a tool is in a window (or not).
const (
	ReasonNamed   = "named in the input"
	ReasonPinned  = "pinned"
	ReasonEnabled = "enabled by tool_search"
	ReasonAll     = "all tools fit"
	ReasonScore   = "relevance"
	ReasonCount   = "left out: over the tool count"
	ReasonBudget  = "left out: over the token budget"
)

// Scored is one tool's place in a window.
type Scored struct {
	Name   string  `json:"name"`
	Score  float64 `json:"score"`
	Tokens int     `json:"tokens"` // estimated tokens of its name, description and schema
	Sent   bool    `json:"sent"`
	Reason string  `json:"reason"`
}

// Window is the outcome of [Select].
type Window struct {
	Tools  []llm.Tool `json:"-"`      // the tools to send, in the order given to Select
	Scores []Scored   `json:"scores"` // every tool, sent ones first, best first
	Tokens int        `json:"tokens"` // estimated tokens of the sent tools
	Left   int        `json:"left"`   // tools left out
}

// Tokens estimates the prompt tokens a tool costs (bytes / 4 of what is sent).
func Tokens(t llm.Tool) int { return (len(t.Name) + len(t.Description) + len(t.Parameters) + 40) / 4 }

// Select returns the window of tools for in. When every tool fits the count and the budget,
// every tool is sent.
func Select(tools []llm.Tool, in Input, opts Options) Window {
	max := opts.MaxTools
	if max <= 0 {
		max = DefaultMaxTools
	}
	if max > llm.MaxTools {
		max = llm.MaxTools
	}
	budget := opts.TokenBudget
	if budget <= 0 {
		budget = DefaultTokenBudget
	}
	scores := make([]Scored, len(tools))
	total := 0
	for i, t := range tools {
		scores[i] = Scored{Name: t.Name, Tokens: Tokens(t)}
		total += scores[i].Tokens
	}
	if len(tools) <= max && total <= budget {
		w := Window{Tools: append([]llm.Tool(nil), tools...), Tokens: total}
		for i := range scores {
			scores[i].Sent, scores[i].Reason = true, ReasonAll
		}
		w.Scores = sortScores(scores)
		return w
	}

	must := map[string]string{}
	for _, n := range in.Pinned {
		must[n] = ReasonPinned
	}
	for _, n := range in.Enabled {
		must[n] = ReasonEnabled
	}
	words := wordSet(in.Text)
	lower := strings.ToLower(in.Text)
	for _, t := range tools {
		if named(lower, strings.ToLower(t.Name)) {
			must[t.Name] = ReasonNamed
		}
	}
	idf := inverseFrequencies(tools)
	recent := map[string]int{}
	for i, n := range in.Recent {
		if _, ok := recent[n]; !ok {
			recent[n] = i
		}
	}
	for i, t := range tools {
		s := 0.0
		for w := range toolWords(t) {
			if words[w] {
				s += idf[w]
			}
		}
		if r, ok := recent[t.Name]; ok {
			s += 2 / float64(1+r) // the last tool used counts like a rare word matched
		}
		scores[i].Score = math.Round(s*1000) / 1000
	}
	order := make([]int, len(tools))
	for i := range order {
		order[i] = i
	}
	rank := func(i int) int { // must-haves first: named, enabled, pinned
		switch must[tools[i].Name] {
		case ReasonNamed:
			return 0
		case ReasonEnabled:
			return 1
		case ReasonPinned:
			return 2
		}
		return 3
	}
	sort.SliceStable(order, func(a, b int) bool {
		ia, ib := order[a], order[b]
		if ra, rb := rank(ia), rank(ib); ra != rb {
			return ra < rb
		}
		if scores[ia].Score != scores[ib].Score {
			return scores[ia].Score > scores[ib].Score
		}
		return tools[ia].Name < tools[ib].Name
	})
	var w Window
	sent := make([]bool, len(tools))
	n := 0
	for _, i := range order {
		reason, isMust := must[tools[i].Name]
		switch {
		case isMust && n < llm.MaxTools: // the hard limit holds even for must-haves
			scores[i].Reason = reason
		case isMust:
			scores[i].Reason = ReasonCount
			continue
		case n >= max:
			scores[i].Reason = ReasonCount
			continue
		case w.Tokens+scores[i].Tokens > budget:
			scores[i].Reason = ReasonBudget
			continue
		default:
			scores[i].Reason = ReasonScore
		}
		sent[i], scores[i].Sent = true, true
		w.Tokens += scores[i].Tokens
		n++
	}
	for i, t := range tools {
		if sent[i] {
			w.Tools = append(w.Tools, t)
		} else {
			w.Left++
		}
	}
	w.Scores = sortScores(scores)
	return w
}

// sortScores orders sent tools first, then by score, then by name.
func sortScores(s []Scored) []Scored {
	sort.SliceStable(s, func(a, b int) bool {
		if s[a].Sent != s[b].Sent {
			return s[a].Sent
		}
		if s[a].Score != s[b].Score {
			return s[a].Score > s[b].Score
		}
		return s[a].Name < s[b].Name
	})
	return s
}

// named reports whether name occurs in text as a whole word (not inside a longer identifier).
func named(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !identRune(rune(text[start-1]))) && (end == len(text) || !identRune(rune(text[end]))) {
			return true
		}
		i = start + 1
	}
}

func identRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Search ranks tools by how well query matches their names and descriptions and returns the
// best limit of those scoring above zero (all of them, best first, when limit <= 0).
func Search(tools []llm.Tool, query string, limit int) []llm.Tool {
	words := wordSet(query)
	lower := strings.ToLower(query)
	idf := inverseFrequencies(tools)
	type hit struct {
		t llm.Tool
		s float64
	}
	var hits []hit
	for _, t := range tools {
		s := 0.0
		for w := range toolWords(t) {
			if words[w] {
				s += idf[w]
			}
		}
		if named(lower, strings.ToLower(t.Name)) {
			s += 100
		}
		if s > 0 {
			hits = append(hits, hit{t, s})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].s != hits[b].s {
			return hits[a].s > hits[b].s
		}
		return hits[a].t.Name < hits[b].t.Name
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]llm.Tool, len(hits))
	for i, h := range hits {
		out[i] = h.t
	}
	return out
}

// inverseFrequencies weighs each word by how few tools use it: log(1 + N/df).
func inverseFrequencies(tools []llm.Tool) map[string]float64 {
	df := map[string]int{}
	for _, t := range tools {
		for w := range toolWords(t) {
			df[w]++
		}
	}
	idf := make(map[string]float64, len(df))
	for w, n := range df {
		idf[w] = math.Log(1 + float64(len(tools))/float64(n))
	}
	return idf
}

// toolWords are the words of a tool's name (split at _ and -) and description.
func toolWords(t llm.Tool) map[string]bool {
	ws := wordSet(t.Name + " " + t.Description)
	return ws
}

// stop words carry no relevance; the list is the closed-class English words a tool description
// and a request share whatever they are about (articles, pronouns, auxiliaries, prepositions).
var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an the and or of to in on at by for with from as is are be was it its this that " +
		"these those i you me my your we our he she they them do does can could would should will what which who how " +
		"when where please") {
		m[w] = true
	}
	return m
}()

// wordSet splits text into lower-case words of letters and digits (identifiers split at _ and
// -), with a crude plural folding (a trailing "s" dropped from words of four letters or more), stop words left out.
// Han characters count one word each, so Chinese input matches Chinese descriptions.
func wordSet(text string) map[string]bool {
	out := map[string]bool{}
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		w := b.String()
		b.Reset()
		if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if len(w) > 1 && !stop[w] {
			out[w] = true
		}
	}
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
			flush()
			out[string(r)] = true
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}
