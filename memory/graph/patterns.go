package graph

// The sentences of a message and the English first-person statement patterns the LLM-free
// extractor (rules.go) reads them with; the Chinese ones are in rules_zh.go.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// objMode says where a pattern's object is.
type objMode int

const (
	objPhrase  objMode = iota // a noun phrase after the match
	objName                   // a capitalised name after the match
	objJob                    // "I'm a <job>": works as / is a, or nothing
	objGroup                  // regexp group 1 (a number or a bounded phrase)
	objBefore                 // a noun phrase before the match ("Dune is my favourite book")
	objHan                    // a Chinese phrase after the match
	objHanJob                 // "我是X": works as / is from / is a, or nothing
	objHanName                // a Chinese (or Latin) name after the match, ≤ 6 runes
)

// pattern is one first-person statement pattern.
type pattern struct {
	re *regexp.Regexp
	// pred is the predicate; "%s" is replaced by the canonical form of the regexp's last
	// group (a relation, a verb, a favourite's category).
	pred     string
	kind     string
	replaces bool
	mode     objMode
	// canon maps the last group (lower case) to its canonical form.
	canon map[string]string
}

// Regexp fragments of the English patterns.
const (
	adv = `(?:\s+(?:really|also|just|still|absolutely|totally|truly|actually|definitely|always|` +
		`now|currently|recently|finally|kinda|do|did|already|even|personally|genuinely|` +
		`seriously|sometimes|usually|often|especially|mostly|so|all|both|originally))*`
	iAm   = `I(?:'m|\s+am)`
	iHave = `I(?:'ve|\s+have)`
)

var likeVerbs = map[string]string{
	"like": "likes", "liked": "likes", "love": "likes", "loved": "likes", "adore": "likes",
	"adored": "likes", "enjoy": "likes", "enjoyed": "likes", "hate": "dislikes",
	"hated": "dislikes", "dislike": "dislikes", "detest": "dislikes",
}

func en(re, pred, kind string, mode objMode) pattern {
	return pattern{re: regexp.MustCompile(`(?i)\b` + re), pred: pred, kind: kind, mode: mode}
}

var englishPatterns = []pattern{
	en(`(?:I`+adv+`\s+live|`+iAm+adv+`\s+(?:living|based|located))\s+in\s+`, "lives in", KindPlace, objPhrase),
	func() pattern {
		p := en(`I(?:'ve|\s+have)?`+adv+`\s+(?:moved|relocated)\s+(?:to|into)\s+`, "lives in", KindPlace, objPhrase)
		p.replaces = true
		return p
	}(),
	en(`(?:I`+adv+`\s+work|`+iAm+adv+`\s+(?:working|employed))\s+(?:at|for|by)\s+`, "works at", KindOrg, objPhrase),
	en(`(?:I`+adv+`\s+work|`+iAm+adv+`\s+working)\s+as\s+`, "works as", KindConcept, objPhrase),
	en(iAm+adv+`\s+an?\s+`, "", KindConcept, objJob),
	{re: regexp.MustCompile(`(?i)\bmy\s+(` + relationAlt + `)(?:'s\s+name\s+is|\s+is\s+(?:called|named)|\s+is|\s+was\s+(?:called|named)|\s+named|\s+called|,)?\s+`),
		pred: "has %s", mode: objName, canon: relations},
	{re: regexp.MustCompile(`(?i)\b(?:I|we)(?:\s+have|'ve\s+got|\s+have\s+got|\s+own|\s+got|(?:'ve|\s+have)?\s+adopted)\s+(?:a|an|one|two|three|another|our|my)?\s*(?:little\s+|younger\s+|older\s+|big\s+|baby\s+|new\s+|cute\s+)?(` + relationAlt + `)s?\s+(?:named|called)\s+`),
		pred: "has %s", mode: objName, canon: relations},
	// "Oscar, my guinea pig": a name, then the relation.
	{re: regexp.MustCompile(`\b(\p{Lu}\p{Ll}+(?:\s\p{Lu}\p{Ll}+)?),\s+(?i:my|our)\s+(?i:(` + relationAlt + `))\b`),
		pred: "has %s", mode: objGroup, canon: relations},
	{re: regexp.MustCompile(`(?i)\bI` + adv + `\s+(like|love|enjoy|hate|adore|dislike|detest|liked|loved|enjoyed|hated|adored)\s+`),
		pred: "%s", kind: KindThing, mode: objPhrase, canon: likeVerbs},
	en(`I(?:\s+(?:really|just|honestly))?\s+(?:don't|do\s+not|didn't|did\s+not|never)(?:\s+really)?\s+(?:like|enjoy|love)\s+`, "dislikes", KindThing, objPhrase),
	en(`I\s+(?:can't|cannot)\s+stand\s+`, "dislikes", KindThing, objPhrase),
	en(iAm+adv+`\s+(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?fan\s+of\s+`, "likes", KindThing, objPhrase),
	en(iAm+adv+`\s+(?:into|passionate\s+about|obsessed\s+with|crazy\s+about)\s+`, "likes", KindThing, objPhrase),
	en(`(?:I|we)`+adv+`\s+(?:went|traveled|travelled|flew|drove|headed|took\s+a\s+trip)\s+(?:back\s+)?to\s+`, "visited", KindPlace, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)`+adv+`\s+been\s+to\s+`, "visited", KindPlace, objPhrase),
	en(`(?:I|we)`+adv+`\s+visited\s+`, "visited", KindPlace, objPhrase),
	en(`(?:I|we)`+adv+`\s+(?:went|go|love\s+going|like\s+going)\s+([a-z]+ing)\b`, "does", KindConcept, objGroup),
	en(`(?:I|we)`+adv+`\s+joined\s+`, "joined", KindOrg, objPhrase),
	en(`(?:I`+adv+`\s+(?:volunteer|volunteered)|`+iAm+adv+`\s+volunteering)\s+(?:at|for|with)\s+`, "volunteers at", KindOrg, objPhrase),
	en(`I`+adv+`\s+attended\s+`, "attended", KindEvent, objPhrase),
	en(`(?:`+iAm+adv+`\s+from|I`+adv+`\s+(?:come|came)\s+from|I`+adv+`\s+grew\s+up\s+in)\s+`, "is from", KindPlace, objPhrase),
	en(`my\s+birthday\s+is\s+(?:on\s+)?`, "birthday", KindTime, objPhrase),
	en(iAm+`\s+(\d{1,3})\s*(?:years?\s+old|yo)\b`, "age", KindConcept, objGroup),
	en(`I\s+(?:just\s+)?turned\s+(\d{1,3})\b`, "age", KindConcept, objGroup),
	en(`I(?:\s+(?:also|just|still|now|already|finally|even))?(?:\s+have|\s+own|'ve\s+got|\s+have\s+got)\s+(?:a|an|my\s+own|one)\s+`, "owns", KindThing, objPhrase),
	en(`(?:`+iAm+`|`+iHave+`\s+been)`+adv+`\s+(?:learning|studying)\s+`, "studies", KindConcept, objPhrase),
	en(`I`+adv+`\s+(?:study|learn|(?:started|began)\s+(?:learning|studying))\s+`, "studies", KindConcept, objPhrase),
	en(`I`+adv+`\s+(?:play|played)\s+`, "plays", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:bought|purchased|picked\s+up|ordered)\s+`, "bought", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:made|painted|drew|baked|built|knitted|crafted|sewed|composed|designed|cooked|wrote|created)\s+`, "made", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:started|began)\s+(?:taking\s+|learning\s+|doing\s+|playing\s+|practicing\s+|practising\s+)?`, "started", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:finished|completed)\s+(?:reading\s+|writing\s+|building\s+)?`, "finished", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+won\s+`, "won", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:received|got)\s+(?:a|an)\s+((?:\w+\s+)?(?:gift|present|award|prize|scholarship|promotion|certificate|medal|trophy|letter))\b`, "received", KindThing, objGroup),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:tried\s+(?:my|our)\s+hand\s+at|tried\s+out|tried)\s+`, "tried", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:met|met\s+up\s+with|hung\s+out\s+with)\s+`, "met", KindPerson, objName),
	en(`(?:`+iAm+`|we're|we\s+are)`+adv+`\s+(?:planning|going|hoping|about|excited)\s+to\s+(?:visit|go\s+to|travel\s+to|fly\s+to)\s+`, "plans to visit", KindPlace, objPhrase),
	en(`(?:I|we)`+adv+`\s+(?:plan|want|hope|intend)\s+to\s+(?:visit|go\s+to|travel\s+to)\s+`, "plans to visit", KindPlace, objPhrase),
	en(`I`+adv+`\s+(?:want|hope|plan|dream|aspire)\s+to\s+(?:be|become)\s+(?:a|an)\s+`, "wants to be", KindConcept, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:signed\s+up\s+for|enrolled\s+in|registered\s+for)\s+`, "joined", KindOrg, objPhrase),
	en(iAm+adv+`\s+allergic\s+to\s+`, "is allergic to", KindThing, objPhrase),
	en(`I`+adv+`\s+(?:prefer|would\s+rather\s+have)\s+`, "prefers", KindThing, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:use|used|been\s+using|switched\s+to)\s+`, "uses", KindThing, objName),
	en(`(?:`+iAm+`|`+iHave+`\s+been|we're|we\s+are)`+adv+`\s+(?:working\s+on|building|developing|writing|preparing|organi[sz]ing)\s+`, "works on", KindThing, objPhrase),
	en(`(?:`+iAm+`|`+iHave+`\s+been|I\s+was)`+adv+`\s+(?:taking|attending)\s+(?:a\s+|an\s+|some\s+|the\s+)?((?:[\w-]+\s+){0,3}?(?:class|classes|course|courses|lessons?|lectures?|workshops?|program))\b`, "studies", KindConcept, objGroup),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+adopted\s+`, "owns", KindAnimal, objPhrase),
	en(`(?:I|`+iAm+`)`+adv+`\s+(?:(?:ready|trying|going|planning|hoping|eager|keen|excited|about)\s+to|(?:want|need|plan|hope|decided|intend)\s+to)\s+(?:learn|study|master|practi[cs]e)\s+`, "studies", KindConcept, objPhrase),
	en(`(?:I|we)(?:'ve|\s+have)?`+adv+`\s+(?:installed|been\s+installing|trying\s+to\s+install|set\s+up|switched\s+to)\s+`, "uses", KindThing, objName),
	en(`\b(?:I|we)`+adv+`\s+(?:am|'m|are|'re)?\s*(?:writing|finishing|working\s+on|preparing)\s+(?:my|our)\s+`, "works on", KindThing, objPhrase),
	{re: regexp.MustCompile(`(?i)\bmy\s+(?:all[- ]time\s+|absolute\s+)?favou?rite\s+([a-z]+(?:\s+[a-z]+)?)\s+(?:is|was)\s+`),
		pred: "favourite %s", kind: KindThing, mode: objPhrase},
	{re: regexp.MustCompile(`(?i)\b(?:is|was)\s+(?:my|our)\s+(?:all[- ]time\s+|absolute\s+)?favou?rite\s+([a-z]+)`),
		pred: "favourite %s", kind: KindThing, mode: objBefore},
}

// hypothetical words before "I" make a clause not a statement ("if I moved to Paris").
var hypothetical = set("if when whenever unless whether wish hope maybe perhaps would could " +
	"should might what where why how wonder imagine suppose")

// englishStatements finds the English first-person statements of a sentence.
func englishStatements(s string) []statement {
	if !firstPerson(s) {
		return nil // every pattern speaks of I, we, my or our
	}
	var out []statement
	for _, p := range englishPatterns {
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			if hypothetical[strings.ToLower(lastWord(s[:m[0]]))] {
				continue
			}
			if st, ok := p.statement(s, m, false); ok {
				out = append(out, st)
			}
		}
	}
	// "I have a dog named Rex": "has dog → Rex" says more than "has → dog".
	return slices.DeleteFunc(out, func(st statement) bool {
		if st.pred != "owns" {
			return false
		}
		rel, ok := relations[strings.ToLower(singular(strings.ToLower(st.obj)))]
		return ok && slices.ContainsFunc(out, func(o statement) bool { return o.rel == rel })
	})
}

// statement reads the statement of one match m of p in s.
func (p pattern) statement(s string, m []int, han bool) (statement, bool) {
	st := statement{pred: p.pred, kind: p.kind, replaces: p.replaces}
	if strings.Contains(p.pred, "%s") {
		g := len(m)/2 - 1
		if g < 1 || m[2*g] < 0 {
			return st, false
		}
		word := strings.ToLower(normName(s[m[2*g]:m[2*g+1]]))
		if p.canon != nil {
			c, ok := p.canon[word]
			if !ok {
				return st, false
			}
			word = c
		}
		if p.mode == objBefore && (word == "one" || word == "part" || word == "thing") {
			return st, false
		}
		if han {
			word = hanCategory(word)
		}
		st.pred = fmt.Sprintf(p.pred, word)
		if p.pred == "has %s" {
			st.rel, st.pred = word, word+" of"
		}
		if st.kind == "" {
			st.kind = KindPerson
			if pets[word] || word == "guinea pig" {
				st.kind = KindAnimal
			}
		}
	}
	rest := s[m[1]:]
	switch p.mode {
	case objPhrase:
		lr := strings.ToLower(strings.TrimSpace(rest))
		if (st.pred == "likes" || st.pred == "dislikes") && (strings.HasPrefix(lr, "that ") || strings.HasPrefix(lr, "it ")) {
			return st, false // "a company I like that needs …", "I love it when …"
		}
		if infinitivePreds[st.pred] && strings.HasPrefix(lr, "to ") {
			return st, false // "I tried to stay calm": an action, not an entity
		}
		st.obj = phrase(rest, st.pred == "visited")
		if st.pred == "made" && lightObjects[strings.ToLower(lastWord(st.obj))] {
			return st, false // "made a difference", "made a wish": an idiom, not a thing made
		}
		if st.obj != "" && (st.kind == KindThing || st.pred == "owns") {
			st.kind = guessKind(st.obj, st.kind)
		}
		if st.pred == "visited" && eventNouns[strings.ToLower(lastWord(st.obj))] {
			st.pred, st.kind = "attended", KindEvent
		}
		if st.pred == "owns" && hasVague[strings.ToLower(lastWord(st.obj))] {
			return st, false
		}
	case objName:
		st.obj = leadingName(rest)
		if st.obj != "" && st.kind == KindThing {
			st.kind = guessKind(st.obj, st.kind)
		}
	case objJob:
		obj := phrase(rest, false)
		head := strings.ToLower(lastWord(obj))
		switch {
		case obj == "":
		case identities[head]:
			st.pred = "is a"
		case isJob(head):
			st.pred = "works as"
		default:
			return st, false
		}
		st.obj = obj
	case objGroup:
		st.obj = s[m[2]:m[3]]
		switch lw := strings.ToLower(st.obj); {
		case st.pred == "age":
			st.obj = zhNumber(st.obj)
		case common[lw] && st.pred != "does", rejectFirst[lw], notActivities[lw]:
			return st, false
		}
	case objBefore:
		if han {
			st.obj = hanBefore(s[:m[0]])
		} else {
			st.obj = phraseBefore(s[:m[0]])
		}
	case objHan:
		st.obj = hanPhrase(rest, 12)
		if st.pred == "owns" && strings.IndexAny(st.obj, "一两三几") == 0 {
			return st, false // "养了一只猫": the pattern with the measure word reads it
		}
		if st.pred == "owns" && hanAnimals[st.obj] {
			st.kind = KindAnimal
		}
	case objHanName:
		st.obj = hanPhrase(rest, 6)
	case objHanJob:
		return hanJob(hanPhrase(rest, 12))
	}
	if st.obj == "" || st.pred == "" {
		return st, false
	}
	return st, true
}

// infinitivePreds take an entity, not "to <verb>" ("I started to cry").
var infinitivePreds = set("tried started finished likes dislikes prefers bought made won")

// lightObjects are the objects of "make" as a light verb (made a difference, a decision, a
// wish), which make no thing.
var lightObjects = set("difference decision mistake mistakes connection connections wish progress " +
	"effort choice choices change changes friend friends sense point plan plans memory memories " +
	"impact living call move sure way time peace use fun contact deal promise")

// objectPronouns end an object inside it ("art lets us get …").
var objectPronouns = set("us them me him it you i we they he she myself")

// eventNouns are heads that make "I went to …" an event attended rather than a place visited.
var eventNouns = set("concert festival conference workshop party wedding show game meeting class " +
	"event parade race marathon competition reading group session fair exhibition exhibit " +
	"ceremony funeral rally match tournament retreat seminar lecture performance play recital " +
	"meetup gala convention camp course")

// notActivities end in -ing but are not what "I went …ing" does.
var notActivities = set("morning evening thing king ring spring bring sing sting swing wing")

// hasVague are heads of "I have a …" that are not possessions.
var hasVague = set("question questions lot feeling idea chance bit couple few look problem favor " +
	"favour thought sense way day week moment point blast dream plan hunch reason kind tendency " +
	"habit time question lots clue doubt suggestion minute second sec while")

// isJob reports whether a lower-case head noun names a job.
func isJob(head string) bool {
	if jobs[head] {
		return true
	}
	if notJobs[head] || identities[head] || len(head) < 5 {
		return false
	}
	for _, suf := range []string{"ist", "ian", "eer", "er", "or", "ant"} {
		if strings.HasSuffix(head, suf) {
			return true
		}
	}
	return false
}

// guessKind refines kind from the object's words: an animal, or an activity (a single
// -ing word) is a concept.
func guessKind(obj, kind string) string {
	head := strings.ToLower(lastWord(obj))
	switch {
	case animals[head]:
		return KindAnimal
	case kind == KindThing && !strings.Contains(obj, " ") && strings.HasSuffix(head, "ing") && !isUpperStart(obj):
		return KindConcept
	}
	return kind
}

// phrase reads the noun phrase at the start of rest: at most 6 words, cut at clause
// boundaries (punctuation, conjunctions, prepositions, time words), leading articles and
// possessives removed. "" when there is none or it is a pronoun or a vague word. With goVerb,
// a verb cannot begin it ("went to see a film").
func phrase(rest string, goVerb bool) string {
	var out []string
	for i, w := range strings.Fields(rest) {
		core, end := trimWord(w)
		lw := strings.ToLower(core)
		if core == "" {
			if i == 0 && strings.IndexFunc(w, isClausePunct) < 0 {
				continue
			}
			break
		}
		if len(out) == 0 {
			if lw == "to" || lw == "how" || determiners[lw] {
				if end {
					break
				}
				continue
			}
			if rejectFirst[lw] || cutWords[lw] || relativeTime[lw] || goVerb && goVerbs[lw] {
				return ""
			}
		} else if cutWords[lw] {
			break
		}
		out = append(out, core)
		if end || len(out) == 6 {
			break
		}
	}
	for len(out) > 0 && trailing[strings.ToLower(out[len(out)-1])] {
		out = out[:len(out)-1]
	}
	return strings.Join(out, " ")
}

// phraseBefore reads the noun phrase that ends text: the words after the last clause boundary,
// at most 6.
func phraseBefore(text string) string {
	words := strings.Fields(text)
	start := len(words)
	for start > 0 && len(words)-start < 6 {
		core, end := trimWord(words[start-1])
		if core == "" || cutWords[strings.ToLower(core)] || end && start < len(words) {
			break
		}
		start--
	}
	return phrase(strings.Join(words[start:], " "), false)
}

// isClausePunct reports whether r ends a clause.
func isClausePunct(r rune) bool {
	return strings.ContainsRune(",;:.!?()[]{}\"—–…，。！？；：、", r)
}

// trimWord strips a word's surrounding punctuation; end reports whether punctuation (or a
// symbol such as an emoji) follows it, which ends the phrase.
func trimWord(w string) (core string, end bool) {
	core = strings.TrimLeftFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	trimmed := strings.TrimRightFunc(core, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	end = len(trimmed) < len(core)
	return strings.TrimRight(trimmed, "'"), end
}

// leadingName reads the capitalised name at the start of rest (at most 4 words).
func leadingName(rest string) string {
	var out []string
	for _, w := range strings.Fields(rest) {
		core, end := trimWord(w)
		core = strings.TrimSuffix(core, "'s")
		if core == "" || !isUpperStart(core) || common[strings.ToLower(core)] {
			break
		}
		out = append(out, core)
		if end || len(out) == 4 {
			break
		}
	}
	return strings.Join(out, " ")
}

// lastWord returns the last word of s without punctuation.
func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	core, _ := trimWord(f[len(f)-1])
	return core
}

// firstWord returns the first word of s.
func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// statement is one first-person fact found in a sentence, before its subject is known.
type statement struct {
	pred     string
	obj      string
	kind     string
	replaces bool
	// rel is set for a relation: obj is the name of the speaker's rel ("my sister is Anna").
	rel string
	// ends marks a negation: the fact ends the triple it names ([memory.Fact.Ends]).
	ends bool
}

// normaliseText maps typographic apostrophes and quotes to ASCII.
var quoteFixer = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`, "\u00a0", " ")

func normaliseText(s string) string { return quoteFixer.Replace(s) }

// sentences splits text after . ! ? ; and their CJK forms (when followed by a space, a CJK
// mark or the end) and at line breaks.
func sentences(text string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i, r := range text {
		switch r {
		case '\n', '\r':
			emit(i)
		case '。', '！', '？', '；', '…':
			emit(i + utf8.RuneLen(r))
		case '.', '!', '?', ';':
			next := i + 1
			if next >= len(text) || text[next] == ' ' || text[next] == '\n' || text[next] == '"' {
				emit(next)
			}
		}
	}
	emit(len(text))
	return out
}

// isQuestion reports whether a sentence asks rather than states.
func isQuestion(s string) bool {
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == ')' })
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") || strings.HasSuffix(s, "吗") ||
		strings.HasSuffix(s, "吗。")
}
