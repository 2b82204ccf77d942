package graph

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chinese relations ("我的妹妹叫小美" → has sister), canonical names in English like the
// English patterns'.
var zhRelations = map[string]string{
	"好朋友": "best friend", "男朋友": "boyfriend", "女朋友": "girlfriend", "朋友": "friend",
	"妹妹": "sister", "姐姐": "sister", "哥哥": "brother", "弟弟": "brother",
	"妈妈": "mother", "母亲": "mother", "爸爸": "father", "父亲": "father",
	"老婆": "wife", "妻子": "wife", "太太": "wife", "老公": "husband", "丈夫": "husband",
	"儿子": "son", "女儿": "daughter", "老板": "boss", "同事": "colleague", "室友": "roommate",
	"爷爷": "grandfather", "奶奶": "grandmother", "外公": "grandfather", "外婆": "grandmother",
	"老师": "teacher", "同学": "classmate", "同桌": "classmate", "表哥": "cousin", "表姐": "cousin",
	"表妹": "cousin", "表弟": "cousin", "叔叔": "uncle", "阿姨": "aunt", "舅舅": "uncle", "姑姑": "aunt",
	"邻居": "neighbour", "队友": "teammate", "教练": "coach", "小狗": "dog", "狗": "dog", "小猫": "cat", "猫": "cat", "宠物": "pet",
}

const zhRelationAlt = `好朋友|男朋友|女朋友|朋友|妹妹|姐姐|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|妻子|` +
	`太太|老公|丈夫|儿子|女儿|老板|同事|室友|爷爷|奶奶|外公|外婆|老师|同学|同桌|表哥|表姐|表妹|表弟|叔叔|` +
	`阿姨|舅舅|姑姑|邻居|队友|教练|小狗|狗|小猫|猫|宠物`

var zhLikeVerbs = map[string]string{"喜欢": "likes", "热爱": "likes", "爱": "likes", "享受": "likes"}

// zhCategories names the categories of "我最喜欢的<Y>是X" in English.
var zhCategories = map[string]string{
	"书": "book", "电影": "movie", "歌": "song", "歌曲": "song", "食物": "food", "菜": "dish",
	"运动": "sport", "颜色": "colour", "城市": "city", "歌手": "singer", "乐队": "band",
	"游戏": "game", "动物": "animal", "季节": "season", "作家": "writer", "演员": "actor",
	"水果": "fruit", "饮料": "drink", "国家": "country", "地方": "place",
}

// hanCategory names a Chinese favourite's category in English when it can.
func hanCategory(w string) string {
	if c, ok := zhCategories[w]; ok {
		return c
	}
	return w
}

var hanAnimals = set("狗 小狗 猫 小猫 鱼 金鱼 鸟 兔子 马 仓鼠 乌龟 鹦鹉")

func zh(re, pred, kind string, mode objMode) pattern {
	return pattern{re: regexp.MustCompile(re), pred: pred, kind: kind, mode: mode}
}

// hanStop is a run of characters a Chinese object cannot contain.
const hanStop = `[^，。！？、；：,.!?;:\s]`

var chinesePatterns = []pattern{
	zh(`我(?:现在|目前|一直)?住在`, "lives in", KindPlace, objHan),
	func() pattern {
		p := zh(`我(?:已经|刚|刚刚|最近|去年)?搬(?:家)?(?:到|去)了?`, "lives in", KindPlace, objHan)
		p.replaces = true
		return p
	}(),
	zh(`我(?:现在|目前)?在(`+hanStop+`{1,12}?)(?:工作|上班)`, "works at", KindOrg, objGroup),
	zh(`我(?:现在)?是(?:一名|一个|一位|个)?`, "", KindConcept, objHanJob),
	{re: regexp.MustCompile(`我(?:很|非常|特别|最|真的|也|还|一直|超级|超)*(喜欢|热爱|爱|享受)`),
		pred: "%s", kind: KindThing, mode: objHan, canon: zhLikeVerbs},
	zh(`我(?:很|非常|特别|真的|也|还|最)*(?:讨厌|不喜欢|厌恶|恨)`, "dislikes", KindThing, objHan),
	zh(`我(?:昨天|前天|上周|上个月|去年|最近|刚|刚刚|也|曾经|还)*(?:去了|去过|参观了|游览了|到过)`, "visited", KindPlace, objHan),
	{re: regexp.MustCompile(`我的(` + zhRelationAlt + `)(?:是|叫|名叫|叫做)`), pred: "has %s", mode: objHanName, canon: zhRelations},
	zh(`我(?:今年|已经|快)?(\d{1,3}|[一二三四五六七八九十两百]{1,4})岁`, "age", KindConcept, objGroup),
	zh(`我(?:来自|是从)`, "is from", KindPlace, objHan),
	zh(`我(?:正在|在|最近在|一直在)?学习|我(?:正在|最近在)学`, "studies", KindConcept, objHan),
	zh(`我(?:有|养了|养着)(?:一|两|三|几)?(?:只|条|个|位|辆|台|匹)`, "owns", KindThing, objHan),
	zh(`我养(?:了|着)?`, "owns", KindThing, objHan),
	zh(`我(?:会|经常|每周|常常|喜欢)?(?:打|踢)(`+hanStop+`{1,4}球)`, "plays", KindThing, objGroup),
	zh(`我(?:会|经常|每周|常常|喜欢)?弹`, "plays", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:昨天|前天|上周|周末|今天)?(?:参加了|参加|参与了|参与)`, "attended", KindEvent, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:在`+hanStop+`{1,12}?)?(?:获得了|获得|赢得了|赢得|赢了|得了|荣获)`, "won", KindThing, objHan),
	zh(`我(?:在`+hanStop+`{1,12}?)?(?:收到了|收到|得到了|得到)`, "received", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:在`+hanStop+`{1,12}?)?(?:尝试了|尝试|试了|尝了|品尝了)`, "tried", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:在`+hanStop+`{1,12}?)?(?:制作了|制作|做了|画了|写了|搭了|拼了|种了)`, "made", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:在`+hanStop+`{1,12}?)?(?:买了|购买了|买到了)`, "bought", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:在`+hanStop+`{1,12}?)?(?:观看了|看了|观看)`, "watched", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:开始学|开始学习|学会了|学会)`, "started", KindThing, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:打算去|计划去|准备去|想去)`, "plans to visit", KindPlace, objHan),
	zh(`我(?:和`+hanStop+`{1,8}?)?(?:一起)?(?:加入了|报名了|报名参加了)`, "joined", KindOrg, objHan),
	zh(`我对(`+hanStop+`{1,8}?)过敏`, "is allergic to", KindThing, objGroup),
	zh(`喜欢的(`+hanStop+`{2,10})`, "likes", KindThing, objGroup),
	zh(`我(?:更|比较)喜欢`, "prefers", KindThing, objHan),
	zh(`我(?:想|希望|梦想)(?:成为|当)(?:一名|一个|一位)?`, "wants to be", KindConcept, objHan),
	{re: regexp.MustCompile(`我最喜欢的(\p{Han}{1,4}?)是`), pred: "favourite %s", kind: KindThing, mode: objHan},
	{re: regexp.MustCompile(`是我最喜欢的(\p{Han}{1,4})`), pred: "favourite %s", kind: KindThing, mode: objBefore},
}

// zhHypothetical words before 我 make a clause not a statement (如果我搬到…).
var zhHypothetical = []string{"如果", "要是", "假如", "希望", "也许", "可能", "是不是", "以为", "想", "你"}

// chineseStatements finds the Chinese first-person statements of a sentence.
func chineseStatements(s string) []statement {
	if !strings.Contains(s, "我") {
		return nil
	}
	var out []statement
	for _, p := range chinesePatterns {
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			if hasAnySuffix(s[:m[0]], zhHypothetical) || p.mode == objGroup && p.pred == "likes" && strings.HasSuffix(s[:m[0]], "最") {
				continue
			}
			if st, ok := p.statement(s, m, true); ok {
				out = append(out, st)
			}
		}
	}
	return out
}

// hasAnySuffix reports whether s ends with one of the suffixes.
func hasAnySuffix(s string, suffixes []string) bool {
	for _, suf := range suffixes {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}

// hanBreaks end a Chinese object: conjunctions, particles and clause words.
var hanBreaks = []string{"和", "跟", "但", "因为", "所以", "然后", "而且", "的时候", "了", "呢", "吧",
	"啊", "呀", "哦", "啦", "嘛", "来的", "去", "工作", "上班", "一起", "的话"}

// hanRejectFirst are characters that cannot begin a Chinese object (pronouns, adverbs,
// particles).
var hanRejectFirst = []string{"你", "他", "她", "它", "我", "这", "那", "什么", "怎么", "的", "说", "不",
	"在", "要", "想", "觉得", "真", "很", "太", "也", "都", "还", "就", "才", "个", "会", "能", "是"}

// hanPhrase reads the Chinese (or Latin) phrase at the start of rest, cut at punctuation, white
// space and hanBreaks; "" when it is empty, longer than max runes, or starts with a pronoun or
// a function word.
func hanPhrase(rest string, max int) string {
	end := len(rest)
	if i := strings.IndexFunc(rest, func(r rune) bool { return isClausePunct(r) || r == ' ' || r == '\t' }); i >= 0 {
		end = i
	}
	obj := rest[:end]
	for _, b := range hanBreaks {
		if i := strings.Index(obj, b); i > 0 {
			obj = obj[:i]
		}
	}
	obj = strings.TrimSpace(obj)
	n := utf8.RuneCountInString(obj)
	if n == 0 || n > max {
		return ""
	}
	for _, r := range hanRejectFirst {
		if strings.HasPrefix(obj, r) {
			return ""
		}
	}
	return obj
}

// hanBefore reads the Chinese phrase that ends before (after its last punctuation).
func hanBefore(before string) string {
	if i := strings.LastIndexFunc(before, func(r rune) bool { return isClausePunct(r) || r == ' ' }); i >= 0 {
		_, size := utf8.DecodeRuneInString(before[i:])
		before = before[i+size:]
	}
	return hanPhrase(before, 12)
}

// hanJobSuffixes end Chinese job names (老师, 程序员, 医生, 作家 …).
var hanJobSuffixes = []string{"师", "员", "医生", "家", "手", "工", "者", "长", "官", "士", "匠",
	"警", "司机", "老板", "经理", "总监", "主管", "记者", "律师", "会计", "秘书", "厨师", "编辑"}

// hanStudents are identities, not jobs.
var hanStudents = set("学生 大学生 研究生 中学生 小学生 高中生 博士生 留学生")

// hanJob reads "我是X": X人 (a place of origin) is from; a student is a; a job works as.
func hanJob(obj string) (statement, bool) {
	switch {
	case obj == "":
		return statement{}, false
	case hanStudents[obj]:
		return statement{pred: "is a", obj: obj, kind: KindConcept}, true
	case strings.HasSuffix(obj, "人") && utf8.RuneCountInString(obj) >= 3:
		return statement{pred: "is from", obj: strings.TrimSuffix(obj, "人"), kind: KindPlace}, true
	}
	for _, suf := range hanJobSuffixes {
		if strings.HasSuffix(obj, suf) {
			return statement{pred: "works as", obj: obj, kind: KindConcept}, true
		}
	}
	return statement{}, false
}

// zhNumber turns a Chinese numeral (三十二, 两, 十八) into digits; other text is returned as is.
func zhNumber(s string) string {
	if _, err := strconv.Atoi(s); err == nil {
		return s
	}
	digits := map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	total, cur := 0, 0
	for _, r := range s {
		switch {
		case digits[r] > 0:
			cur = digits[r]
		case r == '十':
			if cur == 0 {
				cur = 1
			}
			total += cur * 10
			cur = 0
		case r == '百':
			total += cur * 100
			cur = 0
		default:
			return s
		}
	}
	return strconv.Itoa(total + cur)
}

// zhClauses is clauses for Chinese: the sentence as the speaker's; a sentence that starts
// with the speaker's own name (memory notes written in the third person: "Bart在海边放风筝")
// as the speaker's in the first person; a clause after "我的<relation>[name]" as that
// relation's.
func (r *Rules) zhClauses(s, session, speaker string, tags []Tagged) []clause {
	out := []clause{{subj: speaker, kind: KindPerson, text: s}}
	if speaker == "" || !hasHan(s) {
		return out
	}
	if rest, ok := strings.CutPrefix(s, speaker); ok && rest != "" && !strings.HasPrefix(rest, "的") {
		out[0].text = "我" + rest
	}
	// "(我)和爷爷一起制作小风车": the companion did it too.
	for _, m := range zhWith.FindAllStringSubmatchIndex(out[0].text, -1) {
		t := out[0].text
		who := t[m[2]:m[3]]
		name := ""
		if rel, ok := zhRelations[who]; ok {
			name = r.relName(session, speaker, rel, false)
		} else if zhNameOK(who, tags) {
			name = who
		} else {
			continue
		}
		out = append(out, clause{subj: name, kind: KindPerson, text: "我" + t[m[1]:], events: true})
	}
	for _, m := range zhMyRel.FindAllStringSubmatchIndex(s, -1) {
		rel := zhRelations[s[m[2]:m[3]]]
		rest := s[m[1]:]
		name := ""
		if m[4] >= 0 {
			cand := s[m[4]:m[5]]
			if zhNameOK(cand, tags) {
				name = cand
			} else {
				rest = s[m[4]:]
			}
		}
		if name == "" {
			if n := r.refs.get(session, speaker, rel); n != "" {
				name = n
			} else {
				name = speaker + "'s " + rel
			}
		}
		rest = strings.TrimPrefix(rest, "，")
		if rest == "" || strings.HasPrefix(rest, "是") || strings.HasPrefix(rest, "叫") {
			continue // "我的妹妹是小美": the relation pattern's
		}
		kind := KindPerson
		if pets[rel] {
			kind = KindAnimal
		}
		out = append(out, clause{subj: name, kind: kind, text: "我" + rest})
	}
	return out
}

// zhNameOK reports whether a candidate Chinese name after a relation is tagged a person name
// (or, without tags, is Latin).
func zhNameOK(cand string, tags []Tagged) bool {
	if !hasHan(cand) {
		return true
	}
	for _, t := range tags {
		if t.Word == cand {
			return t.POS == "nr" || t.POS == "nrt" || t.POS == "nrfg"
		}
	}
	return false
}

// zhPlaceStatements reads, with jieba's tags, "我(和…)(一起)在<place>(上|里)<verb><noun>": the
// place visited (an event attended when its last word names one: 晚会, 比赛…) and the activity
// done there ("does 放风筝"). tags are the clause's words.
func zhPlaceStatements(tags []Tagged) []statement {
	if len(tags) == 0 || tags[0].Word != "我" {
		return nil
	}
	i := 1
	// 和<someone>一起
	if i < len(tags) && (tags[i].Word == "和" || tags[i].Word == "跟" || tags[i].Word == "与") {
		j := i + 1
		for j < len(tags) && j < i+5 && tags[j].Word != "一起" && tags[j].Word != "在" {
			j++
		}
		if j < len(tags) && tags[j].Word == "一起" {
			j++
		}
		i = j
	}
	for i < len(tags) && (tags[i].POS == "t" || tags[i].POS == "d") {
		i++ // 昨天, 也
	}
	if i >= len(tags) || tags[i].Word != "在" {
		return nil
	}
	i++
	// The place: a run of nouns (joined by 的) cut after its last place-like word (书店,
	// 学校操场, 家里); a run with none (期末考试) is not a place.
	start, end := i, -1
	for i < len(tags) && (nounTag(tags[i].POS) && tags[i].POS != "vn" || tags[i].POS == "s" || tags[i].POS == "uj" && i > start) {
		if placeLike(tags[i]) {
			end = i + 1
		}
		i++
	}
	if end < 0 {
		return nil
	}
	var place strings.Builder
	for _, t := range tags[start:end] {
		place.WriteString(t.Word)
	}
	i = end
	var out []statement
	p := place.String()
	pred, kind := "visited", KindPlace
	if hasAnySuffix(p, zhEventSuffixes) {
		pred, kind = "attended", KindEvent
	}
	out = append(out, statement{pred: pred, obj: p, kind: kind})
	if i < len(tags) && tags[i].POS == "f" {
		i++ // 上, 里
	}
	// The activity there: a verb and its noun (放风筝, 玩捉迷藏), or one word jieba knows as
	// such a compound (踢足球).
	switch {
	case i+1 < len(tags) && tags[i].POS == "v" && !zhPatternVerbs[tags[i].Word] && nounTag(tags[i+1].POS) && tags[i+1].POS != "vn":
		out = append(out, statement{pred: "does", obj: tags[i].Word + tags[i+1].Word, kind: KindConcept})
	case i < len(tags) && tags[i].POS == "n" && hanRunes(tags[i].Word) >= 3 && zhActivityVerbs[string([]rune(tags[i].Word)[:1])]:
		out = append(out, statement{pred: "does", obj: tags[i].Word, kind: KindConcept})
	}
	return out
}

// placeLike reports whether a tagged word names a place: a place name (ns), a place word (s:
// 家里) or a noun ending like a place (书店, 公园, 操场, 学校…).
func placeLike(t Tagged) bool {
	return t.POS == "ns" || t.POS == "s" || nounTag(t.POS) && (hasAnySuffix(t.Word, zhPlaceSuffixes) || hasAnySuffix(t.Word, zhEventSuffixes))
}

// zhRelNames reads the relations named in a Chinese sentence; Han names must be tagged person
// names, Latin ones must not be common English words.
func zhRelNames(s string, tags []Tagged) []statement {
	var out []statement
	for _, m := range zhRelName.FindAllStringSubmatchIndex(s, -1) {
		if m[0] >= len("我的") && s[m[0]-len("我的"):m[0]] == "我的" {
			continue // the 我的 patterns read it
		}
		rel, name := zhRelations[s[m[2]:m[3]]], s[m[4]:m[5]]
		if !hasHan(name) && common[strings.ToLower(name)] || hasHan(name) && !zhNameOK(name, tags) {
			continue
		}
		out = append(out, statement{rel: rel, obj: name, pred: rel + " of", kind: KindPerson})
	}
	return out
}
