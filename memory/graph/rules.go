package graph

import (
	"context"
	"fmt"
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
