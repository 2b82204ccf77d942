package graph

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Word classes a [Lexicon] reports, as bits (the same values as memory/embed's Lexicon).
const (
	ClassNoun = 1 << iota
	ClassVerb
	ClassAdj
	ClassAdv
)

// Lexicon is the English word knowledge the rules use to tell nouns from other words; the
// kernel passes WordNet's (memory/embed.Lexicon, from the index files of wordnet-base). It
// must be safe for concurrent use.
type Lexicon interface {
	// Classes returns the word classes of a lower-case word as Class* bits (0: unknown).
	Classes(word string) int
	// NounLemma returns the noun lemma of a word ("turtles" → "turtle") and whether it is a
	// known noun.
	NounLemma(word string) (string, bool)
}

// Tagged is a Chinese word with its jieba part-of-speech tag (n noun, nr person, ns place, nt
// organisation, nz other proper noun, v verb, a adjective, d adverb, r pronoun, p
// preposition, c conjunction, u particle, m numeral, eng Latin text…).
type Tagged struct {
	Word, POS string
}

// nounTag reports whether a jieba tag may name an entity: nouns and names (n, nr, nrt, ns, nt,
// nz, ng, nrfg…), noun-verbs (vn), abbreviations (j) and Latin text (eng).
func nounTag(pos string) bool {
	return strings.HasPrefix(pos, "n") || pos == "vn" || pos == "j" || pos == "eng"
}

// nameTag reports whether a jieba tag is a proper name (person, place, organisation, other).
func nameTag(pos string) bool {
	switch pos {
	case "nr", "nrt", "nrfg", "ns", "nt", "nz":
		return true
	}
	return false
}

// nameTagKind is the entity kind of a proper-name tag.
func nameTagKind(pos string) string {
	switch pos {
	case "ns":
		return KindPlace
	case "nt":
		return KindOrg
	case "nz":
		return KindThing
	}
	return KindPerson
}

// functionTag reports whether a jieba tag is a word that can never be an entity: adverbs,
// adjectives, pronouns, prepositions, conjunctions, particles, numerals, measure words,
// modal particles, interjections, onomatopoeia, locality and time words, punctuation.
func functionTag(pos string) bool {
	switch pos {
	case "d", "a", "ad", "an", "r", "p", "c", "u", "uj", "ul", "uz", "ug", "uv", "ud", "m", "q", "mq",
		"y", "e", "o", "f", "t", "tg", "x", "zg", "b", "z", "dg", "ag", "rg", "rr", "rz", "k", "h":
		return true
	}
	return false
}

// sessionRefs remembers, per session, the names of the speaker's relations ("my sister" →
// Anna) so that a later "my sister" in the same session is Anna. It keeps at most
// maxSessionRefs sessions (a new one beyond that evicts an arbitrary other).
type sessionRefs struct {
	mu sync.Mutex
	m  map[string]map[string]string // session → "speaker\x00relation" → name
}

const maxSessionRefs = 512

func (s *sessionRefs) get(session, speaker, rel string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[session][speaker+"\x00"+rel]
}

func (s *sessionRefs) set(session, speaker, rel, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]map[string]string{}
	}
	m := s.m[session]
	if m == nil {
		if len(s.m) >= maxSessionRefs {
			for k := range s.m {
				delete(s.m, k)
				break
			}
		}
		m = map[string]string{}
		s.m[session] = m
	}
	m[speaker+"\x00"+rel] = name
}

// clause is a part of a sentence with its subject: the speaker's own ("I …") or another
// entity's, rewritten in the first person so that the same patterns read it ("my sister Anna
// is a nurse" → subject Anna, "I am a nurse").
type clause struct {
	subj, kind string
	text       string
	// events: only the clause's event facts count (a companion's: "I went to Rome with my
	// sister" says where the sister went, not what she likes).
	events bool
}

var (
	andI   = regexp.MustCompile(`(?i)\b(?:my|our)\s+(` + relationAlt + `)(s)?\s+and\s+I\b`)
	withMy = regexp.MustCompile(`(?i)\bwith\s+(?:my|our)\s+(` + relationAlt + `)(s)?\b`)
)

// relName names the speaker's relation: the name said before in the session, else
// "<speaker>'s <relation>" ("Melanie's children" for several).
func (r *Rules) relName(session, speaker, rel string, plural bool) string {
	if n := r.refs.get(session, speaker, rel); n != "" && !plural {
		return n
	}
	name := speaker + "'s " + rel
	if plural {
		name += "s"
		if rel == "child" {
			name = speaker + "'s children"
		}
	}
	return name
}

// myRel finds "my <relation> [Name]" followed by a verb.
var myRel = regexp.MustCompile(`\b(?i:my|our)\s+(?i:little\s+|younger\s+|older\s+|big\s+|baby\s+|eldest\s+|oldest\s+|youngest\s+)?(?i:(` +
	relationAlt + `)(s)?)(?:,?\s+(\p{Lu}\p{Ll}+)(?:,)?)?\s+`)

// leadName finds a capitalised name followed by a word, at the start of a clause.
var leadName = regexp.MustCompile(`(?:^|[,;]\s+(?:and|but|so)\s+|[,;]\s+|\b(?:and|but|so)\s+)(\p{Lu}\p{Ll}+)\s+`)

// thirdPerson maps a third-person verb form to the first person the patterns read.
var thirdPerson = map[string]string{
	"is": "am", "has": "have", "does": "do", "doesn't": "don't", "isn't": "am not", "was": "was",
	"hasn't": "haven't",
}

// clauseAdverbs may stand between a subject and its verb ("Anna also lives in Rome").
var clauseAdverbs = set("also just still now really currently recently finally already always " +
	"never often usually actually even definitely totally")

// toFirstPerson rewrites the verb at the start of rest (after adverbs) in the first person and
// prefixes "I": "is a nurse" → "I am a nurse", "loves painting" → "I love painting". ok is
// false when rest does not start with a verb.
func (r *Rules) toFirstPerson(rest string) (string, bool) {
	words := strings.Fields(rest)
	i := 0
	for i < len(words) && clauseAdverbs[strings.ToLower(words[i])] {
		i++
	}
	if i >= len(words) {
		return "", false
	}
	w := strings.ToLower(words[i])
	if v, ok := thirdPerson[w]; ok {
		words[i] = v
	} else if base, ok := r.verbBase(w); ok {
		words[i] = base
	} else if !(strings.HasSuffix(w, "ed") || irregularPast[w] || r.isVerb(w) || w == "are" || w == "were") {
		return "", false
	} else if w == "are" {
		words[i] = "am" // "my kids are into chess"
	}
	return "I " + strings.Join(words, " "), true
}

// irregularPast are past forms the patterns read after a subject.
var irregularPast = set("went came got bought made took saw met ate drove flew ran won began " +
	"wrote read grew moved")

// verbBase returns the base form of a third-person verb ("lives" → "live", "studies" →
// "study"), checked against the lexicon when there is one.
func (r *Rules) verbBase(w string) (string, bool) {
	if len(w) < 3 || !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "'s") {
		return "", false
	}
	var cands []string
	switch {
	case strings.HasSuffix(w, "ies"):
		cands = []string{w[:len(w)-3] + "y"}
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "sses"):
		cands = []string{w[:len(w)-2]}
	default:
		cands = []string{w[:len(w)-1]}
	}
	for _, c := range cands {
		if r.lex == nil {
			if patternVerbs[c] {
				return c, true
			}
			continue
		}
		if r.lex.Classes(c)&ClassVerb != 0 {
			return c, true
		}
	}
	return "", false
}

// isVerb reports whether a base form is a verb (a plural subject's: "my kids love …").
func (r *Rules) isVerb(w string) bool {
	if r.lex == nil {
		return patternVerbs[w]
	}
	return r.lex.Classes(w)&ClassVerb != 0
}

// patternVerbs are the verbs of the English patterns, for [Rules.verbBase] without a lexicon.
var patternVerbs = set("live work like love enjoy hate adore dislike play study learn own visit " +
	"volunteer come prefer want plan need attend join")

// clauses splits a sentence into clauses by subject: the whole sentence as the speaker's, plus
// each "my <relation> [Name] <verb> …" and "<Name> <verb> …" clause as that entity's. refs
// resolves "my sister" to a name said before in the session.
func (r *Rules) clauses(s, session, speaker string, known map[string]string) []clause {
	out := []clause{{subj: speaker, kind: KindPerson, text: s}}
	if speaker == "" {
		return nil
	}
	for _, m := range myRel.FindAllStringSubmatchIndex(s, -1) {
		rel, ok := relations[strings.ToLower(s[m[2]:m[3]])]
		if !ok {
			continue
		}
		name := ""
		if m[6] >= 0 {
			name = s[m[6]:m[7]]
			if common[strings.ToLower(name)] {
				continue
			}
		} else {
			name = r.relName(session, speaker, rel, m[4] >= 0)
		}
		text, ok := r.toFirstPerson(cutClause(s[m[1]:]))
		if !ok {
			continue
		}
		kind := KindPerson
		if pets[rel] || rel == "guinea pig" {
			kind = KindAnimal
		}
		out = append(out, clause{subj: name, kind: kind, text: text})
	}
	// "My kids and I made pizza", "I went camping with my family": the relation did it too.
	for _, re := range []*regexp.Regexp{andI, withMy} {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			rel, ok := relations[strings.ToLower(s[m[2]:m[3]])]
			if !ok {
				continue
			}
			name := r.relName(session, speaker, rel, m[4] >= 0)
			text := s
			if re == andI {
				text = s[:m[0]] + "I" + s[m[1]:]
			}
			kind := KindPerson
			if pets[rel] {
				kind = KindAnimal
			}
			out = append(out, clause{subj: name, kind: kind, text: text, events: true})
		}
	}
	for _, m := range leadName.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[2]:m[3]]
		kind, ok := known[strings.ToLower(name)]
		if !ok || strings.EqualFold(name, speaker) {
			continue
		}
		text, ok := r.toFirstPerson(cutClause(s[m[1]:]))
		if !ok {
			continue
		}
		out = append(out, clause{subj: name, kind: kind, text: text})
	}
	return out
}

// cutClause ends a clause at the next clause boundary: a comma or semicolon followed by a
// conjunction or a subject pronoun ("…, and I …", "…, but she …").
var clauseEnd = regexp.MustCompile(`(?i)(?:[,;]\s*|\s+)(?:and|but|so|because|while|when|who|which)?\s*\b(?:I|we|he|she|they|you|my|his|her)\b`)

func cutClause(s string) string {
	if m := clauseEnd.FindStringIndex(s); m != nil && m[0] > 0 {
		return s[:m[0]]
	}
	return s
}

// Chinese subjects: "我的妹妹(小美)…" and a name at the start of a sentence.
var zhWith = regexp.MustCompile(`^我(?:和|跟|与)(?:` + zhRelationAlt + `)?([A-Z][a-z]+|` + zhRelationAlt + `|\p{Han}{2,3}?)一起`)

var zhMyRel = regexp.MustCompile(`我的(` + zhRelationAlt + `)(?:叫|名叫)?(\p{Han}{2,3}|[A-Z][a-z]+)?`)

// eventPredicates are the predicates of things that happen at a time: their facts are dated
// (valid from the time the message names, or the event's).
var eventPredicates = set("visited attended bought made started finished won received tried met joined")

// namedTime returns the time a sentence names for what it tells, relative to the event's time
// at ("yesterday", "last week", "two years ago", "in 2019", 昨天, 去年); zero when it names none.
func namedTime(s string, at time.Time) time.Time {
	if at.IsZero() {
		return time.Time{}
	}
	l := strings.ToLower(s)
	day := func(d int) time.Time { return at.AddDate(0, 0, d) }
	for _, rt := range []struct {
		word string
		t    func() time.Time
	}{
		{"the day before yesterday", func() time.Time { return day(-2) }},
		{"yesterday", func() time.Time { return day(-1) }},
		{"last night", func() time.Time { return day(-1) }},
		{"last weekend", func() time.Time { return day(-int(at.Weekday()) - 1) }},
		{"last week", func() time.Time { return day(-7) }},
		{"last month", func() time.Time { return at.AddDate(0, -1, 0) }},
		{"last year", func() time.Time { return at.AddDate(-1, 0, 0) }},
		{"前天", func() time.Time { return day(-2) }},
		{"昨天", func() time.Time { return day(-1) }},
		{"昨晚", func() time.Time { return day(-1) }},
		{"上周", func() time.Time { return day(-7) }},
		{"上个月", func() time.Time { return at.AddDate(0, -1, 0) }},
		{"前年", func() time.Time { return at.AddDate(-2, 0, 0) }},
		{"去年", func() time.Time { return at.AddDate(-1, 0, 0) }},
	} {
		if strings.Contains(l, rt.word) {
			return rt.t()
		}
	}
	if m := agoRe.FindStringSubmatch(l); m != nil {
		n := numberWord(m[1])
		if n > 0 {
			switch {
			case strings.HasPrefix(m[2], "day"):
				return day(-n)
			case strings.HasPrefix(m[2], "week"):
				return day(-7 * n)
			case strings.HasPrefix(m[2], "month"):
				return at.AddDate(0, -n, 0)
			case strings.HasPrefix(m[2], "year"):
				return at.AddDate(-n, 0, 0)
			}
		}
	}
	if m := yearRe.FindStringSubmatch(l); m != nil {
		if y, err := strconv.Atoi(m[1]); err == nil && y <= at.Year() && y > at.Year()-100 {
			return time.Date(y, 1, 1, 0, 0, 0, 0, at.Location())
		}
	}
	return time.Time{}
}

var (
	agoRe  = regexp.MustCompile(`\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2})\s+(days?|weeks?|months?|years?)\s+ago\b`)
	yearRe = regexp.MustCompile(`\b(?:in|since|back in)\s+((?:19|20)\d\d)\b`)
)

// numberWord reads a small number written in digits or words.
func numberWord(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
		"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}[s]
}

// objectOK reports whether an object names an entity, by its parts of speech: an English
// object that is one lower-case word must be a noun (WordNet's noun index), a longer one must
// end in a noun; a Chinese object's last word must not be a function word (jieba's d, a, r, p,
// c, u, m… tags), and a single Chinese word must be a noun or a name (the "does" activities
// may end in a verb: 跳舞). Capitalised words (names) and values (age) pass. Without a lexicon
// (English) or tags (Chinese) everything passes.
func (r *Rules) objectOK(pred, obj string) bool {
	if pred == "age" || pred == "birthday" || obj == "" {
		return obj != ""
	}
	if hasHan(obj) {
		if r.tag == nil {
			return true
		}
		tags := r.tag(obj)
		var words []Tagged
		for _, t := range tags {
			if strings.TrimSpace(t.Word) != "" && t.POS != "x" {
				words = append(words, t)
			}
		}
		if len(words) == 0 {
			return false
		}
		last := words[len(words)-1]
		if pred == "does" {
			return !functionTag(last.POS) && !functionTag(words[0].POS)
		}
		if pred == "won" && strings.HasSuffix(obj, "名") {
			return true // a place in a ranking: 第一名
		}
		if len(words) == 1 {
			return nounTag(last.POS)
		}
		return !functionTag(last.POS) && !strings.HasPrefix(last.POS, "v") || nounTag(last.POS)
	}
	if r.lex == nil {
		return true
	}
	words := strings.Fields(obj)
	head := words[len(words)-1]
	if isUpperStart(head) || isNumber(head) && len(words) > 1 {
		return true
	}
	lh := strings.ToLower(strings.Trim(head, ".,!?'\""))
	c := r.lex.Classes(lh)
	if c&ClassNoun == 0 {
		return false
	}
	if len(words) == 1 && pred != "does" && c&(ClassAdj|ClassAdv) != 0 && c&ClassVerb == 0 && !nounFirst[lh] {
		// "keen", "surreal", "common": an adjective WordNet also lists as a rare noun.
		return false
	}
	return true
}

// nounFirst are words WordNet lists as adjectives too that are mostly said as nouns.
var nounFirst = set("art fun music love dance chocolate coffee pink blue red green yellow black white " +
	"gold silver french spanish german italian english chinese japanese korean comic classic " +
	"vegan vegetarian")

// hanRunes counts the runes of s.
func hanRunes(s string) int { return utf8.RuneCountInString(s) }

// zhPlaceSuffixes end the names of places.
var zhPlaceSuffixes = []string{"园", "店", "馆", "场", "校", "家", "院", "室", "厅", "边", "区", "城", "村", "山",
	"湖", "海", "街", "路", "站", "楼", "宫", "寺", "中心", "厂", "房", "滩", "岛", "河", "江", "公司", "市",
	"省", "县", "镇", "部", "堂", "所", "屋", "台", "基地", "营", "间", "地", "国", "廊", "桥", "坪"}

// zhActivityVerbs begin one-word activities (踢足球, 打篮球, 放风筝).
var zhActivityVerbs = set("踢 打 放 玩 跳 下 弹 拉 骑 滑 爬 钓 划 堆 荡 跑 游 画 唱")

// zhEventSuffixes end the names of events (attended, not visited).
var zhEventSuffixes = []string{"晚会", "会", "节", "比赛", "赛", "派对", "聚会", "典礼", "演出", "活动", "课", "展", "仪式", "婚礼"}

// zhPatternVerbs are verbs the Chinese patterns read themselves.
var zhPatternVerbs = set("获得 赢得 收到 得到 尝试 制作 买 购买 看 观看 参加 参与 学习 学会 画 写 做 感到 感觉 觉得 " +
	"听见 听到 看见 看到 发现 遇到 想到")

// zhRelName finds a relation followed by a name ("同学Tom", "好朋友小张"): in first-person text
// the speaker's classmate, friend…
var zhRelName = regexp.MustCompile(`(` + zhRelationAlt + `)([A-Z][a-z]+|\p{Han}{2,3})`)
