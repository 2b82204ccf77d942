package graph

import (
	"regexp"
	"strings"
)

// Corrections (docs/memory-graph.md, "Corrections"): a negation ("I no longer play cello",
// "我现在不住在北京了") is read as its positive form and its facts end the triples they name
// ([memory.Fact.Ends]); a switch ("I switched from cello to viola", "我从大提琴改成中提琴了")
// ends the old object's fact and states the new one with the same predicate. Single-valued
// predicates (lives in, works at…) need nothing more: a new one supersedes the old in the
// store.

// negations rewrite a negated English clause as the positive one it ends.
var negations = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)\bI\s+(?:do\s+not|don't|dont)\s+(.+?)\s+any\s?more\b`), "I $1"},
	{regexp.MustCompile(`(?i)\bI(?:'m|\s+am)\s+not\s+(.+?)\s+any\s?more\b`), "I'm $1"},
	{regexp.MustCompile(`(?i)\bI(?:'m|\s+am)\s+no\s+longer\s+`), "I'm "},
	{regexp.MustCompile(`(?i)\bI\s+no\s+longer\s+`), "I "},
	{regexp.MustCompile(`(?i)\bI\s+(?:have\s+|'ve\s+)?(?:quit|left)\s+my\s+job\s+(?:at|with)\s+`), "I work at "},
	{regexp.MustCompile(`(?i)\bI\s+(?:have\s+|'ve\s+)?(?:sold|gave\s+away|got\s+rid\s+of)\s+my\s+`), "I have a "},
	{regexp.MustCompile(`(?i)\bI\s+(?:have\s+|'ve\s+)?(?:stopped|quit)\s+(?:being\s+)?(?:a\s+|an\s+)?(vegetarian|vegan)\b`), "I'm a $1"},
}

// stoppedIng is "I stopped/quit/gave up <verb>ing …": the activity's base form is found with
// the lexicon.
var stoppedIng = regexp.MustCompile(`(?i)\bI\s+(?:have\s+|'ve\s+)?(?:stopped|quit|gave\s+up)\s+([a-z]+ing)\b`)

// gaveUp is "I gave up <thing>": the owner no longer likes it.
var gaveUp = regexp.MustCompile(`(?i)\bI\s+(?:have\s+|'ve\s+)?gave\s+up\s+`)

// zhNegation is "我(现在/已经)不(再)…了": the positive clause between.
var zhNegation = regexp.MustCompile(`我(?:现在|已经|目前|早就)?(?:已经)?(?:不再|不)([^，。！？；,!?;]+?)了`)

// switches name an old and a new object: "I switched from A to B", "I replaced A with B",
// "我从A改成B了", "我把A换成B了".
var switches = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bI(?:'ve|\s+have)?` + adv + `\s+(switched|changed|moved|went|upgraded|converted)\s+from\s+(?:the\s+|my\s+|a\s+)?(.+?)\s+(?:to|over\s+to)\s+(.+)`),
	regexp.MustCompile(`(?i)\bI(?:'ve|\s+have)?` + adv + `\s+(replaced)\s+(?:the\s+|my\s+|a\s+)?(.+?)\s+with\s+(.+)`),
	regexp.MustCompile(`我(?:已经|最近|今年|去年)?从(` + hanStop + `{1,12}?)(改成|换成|改为|换到|转到|搬到|搬去|搬回)了?(` + hanStop + `{1,12})`),
	regexp.MustCompile(`我(?:已经|最近|今年|去年)?把(` + hanStop + `{1,12}?)(改成|换成|改为)了?(` + hanStop + `{1,12})`),
}

// correction is what a clause's corrections say: the clause to read instead (its positive
// form), whether its facts end, and the facts of a switch.
type correction struct {
	text string
	ends bool
	sts  []statement
}

// correct reads the corrections of a clause. prior maps the lower-case objects the subject's
// earlier facts of the batch name to their predicates (a switch keeps the old one's).
func (r *Rules) correct(text string, prior map[string]string) correction {
	c := correction{text: text}
	for _, n := range negations {
		if n.re.MatchString(text) {
			return correction{text: n.re.ReplaceAllString(text, n.repl), ends: true}
		}
	}
	if m := stoppedIng.FindStringSubmatchIndex(text); m != nil {
		if base, ok := r.ingBase(strings.ToLower(text[m[2]:m[3]])); ok {
			return correction{text: text[:m[0]] + "I " + base + text[m[3]:], ends: true}
		}
	}
	if m := gaveUp.FindStringIndex(text); m != nil {
		return correction{text: text[:m[0]] + "I like " + text[m[1]:], ends: true}
	}
	if hasHan(text) {
		if m := zhNegation.FindStringSubmatchIndex(text); m != nil {
			return correction{text: "我" + text[m[2]:m[3]], ends: true}
		}
	}
	for _, re := range switches {
		m := re.FindStringSubmatchIndex(text)
		if m == nil {
			continue
		}
		var verb, from, to string
		if hasHan(text) && re != switches[0] && re != switches[1] {
			from, verb, to = text[m[2]:m[3]], text[m[4]:m[5]], hanPhrase(strings.TrimSuffix(text[m[6]:m[7]], "了"), 12)
			from = hanPhrase(from, 12)
		} else {
			verb, from, to = strings.ToLower(text[m[2]:m[3]]), phrase(text[m[4]:m[5]], false), phrase(text[m[6]:m[7]], false)
		}
		if from == "" || to == "" {
			continue
		}
		pred, kind := switchPredicate(verb, from, to, prior)
		c.sts = append(c.sts, statement{pred: pred, obj: from, kind: kind, ends: true}, statement{pred: pred, obj: to, kind: kind})
		c.text = text[:m[0]] // the switch is read; what comes before it still counts
		return c
	}
	return c
}

// switchPredicate is the predicate of a switch: where one lives for a move; the old object's
// predicate when an earlier fact names it; plays for an instrument or a sport; studies for a
// language; uses otherwise.
func switchPredicate(verb, from, to string, prior map[string]string) (string, string) {
	switch verb {
	case "moved", "搬到", "搬去", "搬回":
		return "lives in", KindPlace
	}
	if p, ok := prior[strings.ToLower(from)]; ok {
		return p, KindThing
	}
	for _, w := range []string{from, to} {
		lw := strings.ToLower(lastWord(w))
		switch {
		case instruments[lw] || sports[lw] || hasAnySuffix(w, zhInstruments) || strings.HasSuffix(w, "球"):
			return "plays", KindThing
		case languages[lw] || strings.HasSuffix(w, "语") || strings.HasSuffix(w, "文"):
			return "studies", KindConcept
		}
	}
	return "uses", KindThing
}

var (
	instruments = set("cello viola violin piano guitar drums drum flute clarinet saxophone sax trumpet " +
		"trombone harp bass ukulele banjo keyboard oboe accordion harmonica organ")
	sports = set("tennis football soccer basketball golf chess badminton volleyball baseball hockey " +
		"rugby cricket squash handball")
	languages = set("spanish french german italian chinese mandarin cantonese japanese korean " +
		"portuguese russian arabic hindi dutch swedish greek turkish polish english")
	zhInstruments = []string{"琴", "提琴", "吉他", "鼓", "笛", "古筝", "二胡", "琵琶", "萨克斯"}
)

// ingBase returns the base form of an -ing verb ("playing" → "play", "living" → "live",
// "running" → "run"), checked with the lexicon (or the patterns' verbs without one).
func (r *Rules) ingBase(w string) (string, bool) {
	stem, ok := strings.CutSuffix(w, "ing")
	if !ok || len(stem) < 2 {
		return "", false
	}
	cands := []string{stem, stem + "e"}
	if n := len(stem); n > 2 && stem[n-1] == stem[n-2] {
		cands = append(cands, stem[:n-1])
	}
	for _, c := range cands {
		if r.isVerb(c) {
			return c, true
		}
	}
	return "", false
}
