package graph

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// RulesOptions configures [NewRules].
type RulesOptions struct {
	// Owner is the subject of first-person statements in user events without a partner.
	// "" means [DefaultOwner].
	Owner string
	// NoMentions turns off the "mentions" facts read from capitalised names.
	NoMentions bool
	// MaxMentions bounds the catch-all facts of the names one event mentions (tool results and
	// pasted documents can be long lists of names). 0 means 3.
	MaxMentions int
	// MaxToolText bounds the bytes of a tool result that are read for mentions and topics.
	// 0 means 4096.
	MaxToolText int
	// MaxTopics bounds the "talks about" facts of one event (see [Rules]). 0 means
	// [DefaultMaxTopics]; a negative value turns topics off.
	MaxTopics int
	// Keywords, when set, returns the keywords of a text that holds Han characters, best
	// first; the kernel passes jieba's. Its keywords (pronouns, function words, numbers,
	// one-character words and the speaker's name dropped) are the first topic candidates of
	// such a text. Without it Chinese text gets no topics: the English chunking needs spaces
	// between words. It must be safe for concurrent use.
	Keywords func(text string) []string
	// Lexicon, when set, tells English nouns from other words (the kernel passes WordNet's):
	// an object must be a noun phrase, and a verb after a named subject is recognised in any
	// form. Without it, objects are not checked by part of speech.
	Lexicon Lexicon
	// Tag, when set, returns the words of a text holding Han characters with their jieba
	// part-of-speech tags (the kernel passes jieba's): a Chinese object must end in a noun or a
	// name, names (nr, ns, nt, nz) are the Chinese catch-all objects, and relations' names
	// must be tagged person names. It must be safe for concurrent use.
	Tag func(text string) []Tagged
}

// Rules is the LLM-free extractor: English and Chinese first-person patterns ("I live in
// Paris", "我住在北京", "my sister is Anna"), named-entity mentions (runs of capitalised
// words) and topics. It needs no model and no data files. A Rules is safe for concurrent use.
//
// Topics are the "talks about" facts: the speaker (or the tool) talks about the event's most
// specific noun phrases, of kind concept, at most [RulesOptions.MaxTopics] per event. The
// candidates are the maximal runs of content words of each sentence — words of three letters
// or more that are not in the stop lists (common.txt, pronouns, determiners, prepositions,
// frequent verbs in all forms, vague nouns, evaluative adjectives), not numbers or dates, not
// -ly adverbs or -ed forms, not verbs by position (an -ing form after an auxiliary, any word
// after a subject pronoun or a modal), not names (capitalised words other than a sentence's
// first: those are mentions) nor the speaker's name — cut at punctuation and possessives, at
// most 3 words (the last ones), lower case, the head made singular ("kids" → "kid"). They are
// ranked by specificity: more words first, then the longest word (longer words are rarer);
// then, by a few points, a lone word ending like a verb form or an adjective (-ing, -ful,
// -ous, -ive, -able, -ible) goes down, a later sentence goes down and a word said again goes
// up. A candidate that is an entity the event already names (a pattern's object or
// predicate, a mention, the speaker) or only repeats words of one, or of a topic already
// chosen, is skipped. Han text gets topics only through [RulesOptions.Keywords].
//
// Only user events state facts about their speaker (the event's Partner, or the owner); tool
// results give only mentions and topics. Assistant events give nothing: the model mostly
// restates what it was told, and what it says is not the owner's world. Questions state
// nothing (their words still give topics: "have you tried pottery?" talks about pottery).
type Rules struct {
	owner       string
	mentions    bool
	maxMentions int
	maxTool     int
	maxTopics   int
	keywords    func(string) []string
	lex         Lexicon
	tag         func(string) []Tagged
	refs        *sessionRefs
}

// NewRules returns a rules extractor.
func NewRules(o RulesOptions) *Rules {
	r := &Rules{owner: o.Owner, mentions: !o.NoMentions, maxMentions: o.MaxMentions, maxTool: o.MaxToolText,
		maxTopics: o.MaxTopics, keywords: o.Keywords, lex: o.Lexicon, tag: o.Tag, refs: &sessionRefs{}}
	if r.owner == "" {
		r.owner = DefaultOwner
	}
	if r.maxMentions <= 0 {
		r.maxMentions = 3
	}
	if r.maxTool <= 0 {
		r.maxTool = 4096
	}
	if r.maxTopics == 0 {
		r.maxTopics = DefaultMaxTopics
	}
	return r
}

// Name returns [OriginRules].
func (r *Rules) Name() string { return OriginRules }

// Extract implements [Extractor]. It fails only when ctx is done.
func (r *Rules) Extract(ctx context.Context, evs []memory.Event) ([]memory.Fact, []memory.Adoption, error) {
	// How the batch writes its words tells names from sentence-initial words.
	var use wordUse
	if r.mentions || r.maxTopics > 0 {
		texts := make([]string, len(evs))
		for i, e := range evs {
			texts[i] = r.text(e)
		}
		use = newWordUse(texts)
	}
	// The names the batch writes as persons' may be the subjects of their own facts.
	known := map[string]string{}
	partners := map[string]bool{}
	for _, e := range evs {
		if p := strings.TrimSpace(e.Partner); p != "" {
			known[strings.ToLower(p)] = KindPerson
			partners[strings.ToLower(p)] = true
		}
		if r.mentions {
			for _, s := range sentences(r.text(e)) {
				for _, m := range mentionsIn(s, use) {
					if m.kind == KindPerson && !strings.Contains(m.name, " ") {
						known[strings.ToLower(m.name)] = KindPerson
					}
				}
			}
		}
	}
	var facts []memory.Fact
	prior := map[string]map[string]string{} // subject key → object → predicate, for switches
	for _, e := range evs {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("rules extraction: %w", err)
		}
		fs := r.event(e, use, known, partners, prior)
		for _, f := range fs {
			if f.Ends || f.Predicate == PredicateTalksAbout {
				continue
			}
			k := memory.NameKey(f.Subject)
			if prior[k] == nil {
				prior[k] = map[string]string{}
			}
			prior[k][strings.ToLower(f.Object)] = f.Predicate
		}
		facts = append(facts, fs...)
	}
	facts = consolidate(facts)
	return facts, adoptions(evs, facts), nil
}

// text is the text of an event that the rules read: typographic quotes made plain, a tool
// result cut to MaxToolText bytes (at a space).
func (r *Rules) text(e memory.Event) string {
	text := normaliseText(e.Content)
	if e.Role != memory.RoleTool || len(text) <= r.maxTool {
		return text
	}
	cut := r.maxTool
	if i := strings.LastIndexAny(text[:cut+1], " \t\n"); i > 0 {
		cut = i // do not read half a word
	}
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// event reads the facts of one event; use says how the batch writes its words (see
// [wordUse]); known holds the lower-case names the batch knows as persons or animals (with
// their kinds), and grows with the relations the event names.
func (r *Rules) event(e memory.Event, use wordUse, known map[string]string, partners map[string]bool, prior map[string]map[string]string) []memory.Fact {
	text := r.text(e)
	subj := speaker(e, r.owner)
	var facts []memory.Fact
	var hanTags []Tagged
	for _, s := range sentences(text) {
		if subj == "" || isQuestion(s) {
			continue
		}
		at := namedTime(s, e.Time)
		var cls []clause
		if hasHan(s) {
			tags := r.tagText(s)
			hanTags = append(hanTags, tags...)
			cls = r.zhClauses(s, e.Session, subj, tags)
		} else {
			cls = r.clauses(s, e.Session, subj, known)
		}
		for ci, c := range cls {
			var sts []statement
			if ci == 0 && hasHan(c.text) {
				sts = zhRelNames(c.text, r.tagText(c.text))
			}
			corr := r.correct(c.text, prior[memory.NameKey(c.subj)])
			sts = append(sts, corr.sts...)
			c.text = corr.text
			first := len(sts)
			if hasHan(c.text) {
				sts = append(sts, chineseStatements(c.text)...)
				if r.tag != nil {
					sts = append(sts, zhPlaceStatements(r.tag(c.text))...)
				}
			} else {
				sts = append(sts, englishStatements(c.text)...)
			}
			for i, st := range sts {
				if c.events && !eventPredicates[st.pred] && st.pred != "does" {
					continue
				}
				if corr.ends && i >= first && st.rel == "" {
					st.ends, st.replaces = true, false
				}
				facts = append(facts, r.statementFacts(st, c, e, at, known)...)
			}
		}
	}
	if subj != "" {
		for _, t := range hanTags {
			if nameTag(t.POS) && utf8.RuneCountInString(t.Word) >= 2 && !strings.EqualFold(t.Word, subj) {
				if _, ok := known[strings.ToLower(t.Word)]; !ok && t.POS == "nr" {
					known[strings.ToLower(t.Word)] = KindPerson
				}
			}
		}
	}
	who, whoKind := mentioner(e, r.owner)
	if who == "" || !r.mentions && r.maxTopics < 0 {
		return facts
	}
	named := map[string]bool{memory.NameKey(who): true, memory.NameKey(r.owner): true}
	if e.Partner != "" {
		named[memory.NameKey(e.Partner)] = true
	}
	for _, f := range facts {
		named[memory.NameKey(f.Object)] = true
		named[memory.NameKey(f.Subject)] = true
	}
	typed := len(facts)
	if r.mentions {
		facts = r.mentionFacts(facts, e, text, use, who, whoKind, named, partners)
		facts = r.hanNameFacts(facts, e, hanTags, who, whoKind, named)
	}
	if r.maxTopics > 0 && len(facts) == 0 {
		// The catch-all topics only for an event that states nothing else: a typed fact or a
		// name says more than a topic.
		for _, f := range facts[:typed] {
			named[memory.NameKey(f.Predicate)] = true
		}
		speakerWords := map[string]bool{}
		for _, n := range []string{who, e.Partner, r.owner} {
			for _, w := range strings.Fields(strings.ToLower(n)) {
				speakerWords[w] = true
			}
		}
		n := 0
		for _, t := range r.topicsOf(text, use, named, speakerWords, r.maxTopics*4) {
			if n >= r.maxTopics {
				break
			}
			if !r.topicOK(t) {
				continue
			}
			n++
			facts = append(facts, memory.Fact{
				Subject: who, SubjectKind: whoKind, Predicate: PredicateTalksAbout,
				Object: t, ObjectKind: KindConcept, Sources: []int64{e.ID},
			})
		}
	}
	return facts
}

// tagText tags a text's words with the Tag hook (nil without one).
func (r *Rules) tagText(s string) []Tagged {
	if r.tag == nil {
		return nil
	}
	return r.tag(s)
}

// topicOK reports whether a topic candidate names a thing: an English phrase whose words are
// nouns (the lexicon's) or a Chinese keyword tagged a noun.
func (r *Rules) topicOK(t string) bool {
	if hasHan(t) {
		if r.tag == nil {
			return true
		}
		tags := r.tag(t)
		return len(tags) > 0 && nounTag(tags[len(tags)-1].POS) && !slices.ContainsFunc(tags, func(x Tagged) bool { return functionTag(x.POS) })
	}
	if r.lex == nil {
		return true
	}
	for _, w := range strings.Fields(t) {
		if c := r.lex.Classes(w); c&ClassNoun == 0 || c&ClassAdj != 0 && !nounFirst[w] {
			return false
		}
	}
	return r.objectOK(PredicateTalksAbout, t)
}

// statementFacts turns one statement of a clause into facts: the clause's subject's, or, for
// a relation ("my sister is Anna"), the named entity's ("Anna —sister of→ speaker", and
// "Rex —is a→ dog" for a pet). Objects that are not nouns or names are dropped; event facts
// are dated with the time the sentence names.
func (r *Rules) statementFacts(st statement, c clause, e memory.Event, at time.Time, known map[string]string) []memory.Fact {
	if st.rel != "" {
		name := st.obj
		if name == "" || strings.EqualFold(name, c.subj) {
			return nil
		}
		kind := KindPerson
		pred := st.rel + " of"
		if pets[st.rel] || st.rel == "guinea pig" {
			kind, pred = KindAnimal, "pet of"
		}
		r.refs.set(e.Session, c.subj, st.rel, name)
		if _, ok := known[strings.ToLower(name)]; !ok {
			known[strings.ToLower(name)] = kind
		}
		out := []memory.Fact{{Subject: name, SubjectKind: kind, Predicate: pred, Object: c.subj, ObjectKind: c.kind, Sources: []int64{e.ID}}}
		if pred == "pet of" && st.rel != "pet" {
			out = append(out, memory.Fact{Subject: name, SubjectKind: kind, Predicate: "is a", Object: st.rel, ObjectKind: KindAnimal, Sources: []int64{e.ID}})
		}
		return out
	}
	if st.pred == "age" {
		st.obj += " years old"
	}
	st.obj = strings.TrimFunc(st.obj, func(r rune) bool { return unicode.IsPunct(r) && r != '\'' && r != '.' || unicode.IsSpace(r) })
	if rejectFirst[strings.ToLower(firstWord(st.obj))] {
		return nil
	}
	st.obj = r.cutObject(st.obj)
	if strings.EqualFold(st.obj, c.subj) || !r.objectOK(st.pred, st.obj) {
		return nil
	}
	if st.pred == "visited" && hasHan(st.obj) && hasAnySuffix(st.obj, zhEventSuffixes) {
		st.pred, st.kind = "attended", KindEvent
	}
	if hasHan(st.obj) {
		st.obj = r.hanObject(st.obj)
	} else if r.lex != nil && !isUpperStart(st.obj) {
		// One spelling per noun: the head's lemma ("turtles" → "turtle").
		words := strings.Fields(st.obj)
		if l, ok := r.lex.NounLemma(strings.ToLower(words[len(words)-1])); ok && !strings.Contains(l, " ") {
			words[len(words)-1] = l
			st.obj = strings.Join(words, " ")
		}
	}
	f := memory.Fact{Subject: c.subj, SubjectKind: c.kind, Predicate: st.pred, Object: st.obj, ObjectKind: st.kind,
		Replaces: st.replaces, Ends: st.ends, Sources: []int64{e.ID}}
	if eventPredicates[st.pred] && !at.IsZero() {
		f.ValidFrom = at
	}
	return []memory.Fact{f}
}

// cutObject ends an English object before a pronoun or a word that can only be a verb (the
// lexicon's): "art lets us get our emotions" → "art".
func (r *Rules) cutObject(obj string) string {
	if hasHan(obj) {
		return obj
	}
	words := strings.Fields(obj)
	for i := 1; i < len(words); i++ {
		lw := strings.ToLower(words[i])
		// "art lets us …": a word in -s followed by a pronoun or a determiner is a verb.
		verbS := strings.HasSuffix(lw, "s") && i+1 < len(words) && (objectPronouns[strings.ToLower(words[i+1])] || determiners[strings.ToLower(words[i+1])])
		if verbS || objectPronouns[lw] || r.lex != nil && !isUpperStart(words[i]) && r.lex.Classes(lw)&(ClassVerb|ClassNoun) == ClassVerb {
			return strings.Join(words[:i], " ")
		}
	}
	return obj
}

// hanObject strips a Chinese object's leading words that are not part of the entity
// (numerals, measure words, adverbs, pronouns: 很多朋友的礼物 → 朋友的礼物, 一套拼图 → 拼图).
func (r *Rules) hanObject(obj string) string {
	if r.tag == nil {
		return obj
	}
	tags := r.tag(obj)
	i := 0
	for i < len(tags)-1 && (functionTag(tags[i].POS) && tags[i].POS != "f" || tags[i].Word == "的") {
		i++
	}
	var b strings.Builder
	for _, t := range tags[i:] {
		b.WriteString(t.Word)
	}
	if b.Len() == 0 {
		return obj
	}
	return b.String()
}

// zhNotNameSuffixes end descriptive words jieba may tag as names: colours (碧绿色) and
// localisers (花园里).
var zhNotNameSuffixes = []string{"色", "里", "上", "中", "下", "内", "外"}

// latinNeighbour reports whether the Latin word tags[i] stands next to another Latin word
// (across spaces and punctuation): part of a title ("Minions: The Rise of Gru"), not a name.
func latinNeighbour(tags []Tagged, i int) bool {
	for _, d := range []int{-1, 1} {
		for j := i + d; j >= 0 && j < len(tags); j += d {
			if tags[j].POS == "eng" {
				return true
			}
			if strings.TrimSpace(tags[j].Word) != "" && !strings.ContainsAny(tags[j].Word, ":：-'\"") {
				break
			}
		}
	}
	return false
}

// hanNameFacts appends the Chinese catch-all facts of an event: the proper names jieba tags
// (nr, ns, nt, nz; two characters or more) that no fact names yet, at most MaxMentions.
func (r *Rules) hanNameFacts(facts []memory.Fact, e memory.Event, tags []Tagged, who, whoKind string, named map[string]bool) []memory.Fact {
	n := 0
	for i, t := range tags {
		// jieba's dictionary tags some two-character words as names (安静 nr, 东西 ns): names
		// of three characters or more, and Latin names, are the reliable ones.
		latin := t.POS == "eng" && isUpperStart(t.Word) && utf8.RuneCountInString(t.Word) >= 2 && !common[strings.ToLower(t.Word)] &&
			!latinNeighbour(tags, i)
		if !latin && (!nameTag(t.POS) || utf8.RuneCountInString(t.Word) < 3 || hasAnySuffix(t.Word, zhNotNameSuffixes)) || named[memory.NameKey(t.Word)] ||
			strings.EqualFold(t.Word, who) {
			continue
		}
		if n >= r.maxMentions {
			break
		}
		named[memory.NameKey(t.Word)] = true
		n++
		kind := nameTagKind(t.POS)
		if latin {
			kind = KindThing
		}
		facts = append(facts, memory.Fact{Subject: who, SubjectKind: whoKind, Predicate: PredicateTalksAbout,
			Object: t.Word, ObjectKind: kind, Sources: []int64{e.ID}})
	}
	return facts
}

// mentionFacts appends to facts the catch-all facts of the names an event mentions (at most
// MaxMentions) that no fact names yet, and adds their names to named.
func (r *Rules) mentionFacts(facts []memory.Fact, e memory.Event, text string, use wordUse, who, whoKind string, named, partners map[string]bool) []memory.Fact {
	n := 0
	for _, s := range sentences(text) {
		for _, m := range mentionsIn(s, use) {
			if n >= r.maxMentions {
				return facts
			}
			k := memory.NameKey(m.name)
			if named[k] || named[memory.NameKey(firstWord(m.name))] {
				continue
			}
			// Not a fact about the speaker: a capitalised run of unknown kind (a title, a
			// heading, a product), the person spoken to ("Thanks, Mel!"), or a name in a
			// sentence that does not speak of the speaker at all (no I, me, my, we…).
			if m.kind == KindThing || addressee(s, m.name, partners) || !firstPerson(s) {
				continue
			}
			named[k] = true
			n++
			facts = append(facts, memory.Fact{
				Subject: who, SubjectKind: whoKind, Predicate: PredicateTalksAbout,
				Object: m.name, ObjectKind: m.kind, Sources: []int64{e.ID},
			})
		}
	}
	return facts
}

// addressee reports whether a name in sentence s is the person spoken to: one of the batch's
// speakers (or a short form of one's name: "Mel" for Melanie), or a name after a greeting or
// before "!" or "," at the start of the sentence ("Hey Jon!", "Thanks, Gina.").
func addressee(s, name string, partners map[string]bool) bool {
	ln := strings.ToLower(name)
	for p := range partners {
		first := strings.ToLower(firstWord(p))
		if ln == p || len(ln) >= 3 && (strings.HasPrefix(first, ln) || strings.HasPrefix(first, ln[:len(ln)-1]) && len(ln) <= len(first)) {
			return true
		}
	}
	i := strings.Index(s, name)
	if i < 0 {
		return false
	}
	before := strings.ToLower(strings.TrimSpace(strings.TrimRight(s[:i], " ,")))
	after := strings.TrimSpace(s[i+len(name):])
	if greetings[lastWord(before)] {
		return true
	}
	return (before == "" || len(strings.Fields(before)) <= 2) && (strings.HasPrefix(after, "!") || strings.HasPrefix(after, ",") && before != "")
}

// greetings before a name make it the person spoken to.
var greetings = set("hey hi hello thanks thank thx congrats congratulations dear bye yo morning night")

// firstPerson reports whether a sentence speaks of its speaker (I, me, my, we, us, our…).
func firstPerson(s string) bool {
	for _, t := range tokens(s) {
		switch strings.ToLower(t.text) {
		case "i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "we've", "us", "our", "ours":
			return true
		}
	}
	return false
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

// consolidate merges equal facts (their sources joined) and gives every name one kind in the
// batch: the first kind other than thing that a fact gives it.
func consolidate(facts []memory.Fact) []memory.Fact {
	kind := map[string]string{}
	for _, f := range facts {
		for _, nk := range [][2]string{{f.Subject, f.SubjectKind}, {f.Object, f.ObjectKind}} {
			k := memory.NameKey(nk[0])
			if cur, ok := kind[k]; !ok || cur == KindThing && nk[1] != KindThing {
				kind[k] = nk[1]
			}
		}
	}
	type key struct {
		s, p, o        string
		replaces, ends bool
	}
	idx := map[key]int{}
	var out []memory.Fact
	for _, f := range facts {
		f.SubjectKind, f.ObjectKind = kind[memory.NameKey(f.Subject)], kind[memory.NameKey(f.Object)]
		k := key{memory.NameKey(f.Subject), f.Predicate, memory.NameKey(f.Object), f.Replaces, f.Ends}
		if i, ok := idx[k]; ok {
			out[i].Sources = append(out[i].Sources, f.Sources...)
			slices.Sort(out[i].Sources)
			out[i].Sources = slices.Compact(out[i].Sources)
			continue
		}
		idx[k] = len(out)
		f.Sources = slices.Clone(f.Sources)
		out = append(out, f)
	}
	return out
}
