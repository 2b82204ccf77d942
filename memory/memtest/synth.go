package memtest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// The synthetic memory generator (memory core issue: the 100,000-event scale benchmark).
//
// Synth builds a store's worth of conversation events that look, to the index, like a long-lived
// agent's memory, without copying any real text:
//
//   - Vocabulary. English-like events draw words from opts.Vocab pseudo-words (default 50,000),
//     each built from 1–4 consonant–vowel syllables and a final k, p, x or z, so the English
//     stemmer and the irregular-form lexicon leave them alone and every word stays one distinct
//     index term. The words are generated from the seed and sorted by length (stable), so the
//     frequent ranks are the short words, as in natural language. Chinese events draw from
//     chineseWords, a list of common two-character Chinese words written below.
//   - Frequencies. Both vocabularies are sampled by a Zipf law (s = 1.07, v = 2, as the sqlite
//     package's benchmark corpus): rank r has weight (v + r)^-s.
//   - Lengths. An event's length in words is drawn from locomoTurnWords, the distribution of
//     turn lengths of the LoCoMo dev split (see the table's comment). A Chinese event has that
//     many Chinese words, written without spaces, with "，" between clauses and "。" at the end; an
//     English event has that many pseudo-words separated by spaces, the first capitalised, with an
//     occasional comma and a final "." or "?".
//   - Language. Each event is Chinese with probability opts.ChineseShare (default 0.3).
//   - Conversations. Events come in bursts of 4–40 turns in one session, between that session's
//     two partners in turn (taken round-robin from opts.Partners), 5–120 s apart; bursts are 10
//     minutes to 2 days apart. Times strictly increase from 2023-01-01 UTC. Every third session
//     is a group session (scope group:<session id>), the others are owner-private.
//   - Queries ([SynthCorpus.Queries]) are fresh combinations of 3–8 distinct words from the same
//     Zipf vocabularies with the same Chinese share, never equal to any event's content.
//
// Everything is deterministic for a seed (math/rand/v2's PCG and Zipf).

// SynthOptions configures [Synth]. Zero values take the documented defaults.
type SynthOptions struct {
	// Events is the number of events to generate.
	Events int
	// Vocab is the number of English pseudo-words (default 50,000).
	Vocab int
	// ChineseShare is the probability that an event (or query) is Chinese (default 0.3; a
	// negative value means none).
	ChineseShare float64
	// Seed makes the corpus reproducible.
	Seed uint64
	// Sessions is the number of sessions (default one per 500 events, at least 1).
	Sessions int
	// Partners are the conversation partners (default eight names).
	Partners []string
}

// SynthCorpus is a generated corpus. Sessions must be created before Events are appended.
type SynthCorpus struct {
	Sessions []memory.Session
	Events   []memory.Event
	// Words is the English pseudo-word vocabulary, most frequent rank first; Chinese is the
	// Chinese word list, most frequent rank first.
	Words   []string
	Chinese []string

	share float64
}

// Zipf parameters shared by events and queries.
const (
	zipfS = 1.07
	zipfV = 2
)

// defaultPartners are the partners when SynthOptions.Partners is empty.
var defaultPartners = []string{"Alice", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hana"}

// Synth generates a corpus; see the generator's description at the top of synth.go. It is
// deterministic for opts and safe to call concurrently.
func Synth(opts SynthOptions) SynthCorpus {
	if opts.Vocab <= 0 {
		opts.Vocab = 50_000
	}
	switch {
	case opts.ChineseShare == 0:
		opts.ChineseShare = 0.3
	case opts.ChineseShare < 0:
		opts.ChineseShare = 0
	}
	if opts.Sessions <= 0 {
		opts.Sessions = max(1, opts.Events/500)
	}
	partners := opts.Partners
	if len(partners) == 0 {
		partners = defaultPartners
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5e1f))
	c := SynthCorpus{Words: pseudoWords(rng, opts.Vocab), Chinese: chineseVocab(), share: opts.ChineseShare}

	type pair struct{ a, b string }
	pairs := make([]pair, opts.Sessions)
	for i := range opts.Sessions {
		id := fmt.Sprintf("synth-%04d", i)
		s := memory.Session{ID: id, Title: "synthetic " + id, Channel: "synth"}
		if i%3 == 2 {
			s.Scope = memory.Scope{Kind: memory.ScopeGroup, Group: id}
		}
		pairs[i] = pair{partners[(2*i)%len(partners)], partners[(2*i+1)%len(partners)]}
		s.Partner = pairs[i].a
		c.Sessions = append(c.Sessions, s)
	}

	g := newTextGen(rng, c.Words, c.Chinese)
	lengths := newLengthTable()
	t := time.Date(2023, 1, 1, 9, 0, 0, 0, time.UTC)
	c.Events = make([]memory.Event, 0, opts.Events)
	for len(c.Events) < opts.Events {
		si := rng.IntN(opts.Sessions)
		s := c.Sessions[si]
		burst := 4 + rng.IntN(37)
		for j := 0; j < burst && len(c.Events) < opts.Events; j++ {
			partner := pairs[si].a
			if j%2 == 1 {
				partner = pairs[si].b
			}
			n := lengths.draw(rng)
			var text string
			if rng.Float64() < opts.ChineseShare {
				text = g.chinese(n)
			} else {
				text = g.english(n)
			}
			c.Events = append(c.Events, memory.Event{Session: s.ID, Time: t, Role: memory.RoleUser, Content: text,
				Channel: s.Channel, Partner: partner, Scope: s.Scope, Tokens: n})
			t = t.Add(time.Duration(5+rng.IntN(116)) * time.Second)
		}
		t = t.Add(10*time.Minute + time.Duration(rng.Int64N(int64(48*time.Hour))))
	}
	return c
}

// Queries returns n recall queries, deterministic for seed: each is 3–8 distinct words drawn
// from the corpus's vocabularies by the same Zipf law, Chinese with the corpus's Chinese share,
// and never equal to the content of any of the corpus's events.
func (c SynthCorpus) Queries(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x9e77))
	g := newTextGen(rng, c.Words, c.Chinese)
	stored := make(map[string]bool, len(c.Events))
	for _, e := range c.Events {
		stored[e.Content] = true
	}
	out := make([]string, 0, n)
	for len(out) < n {
		k := 3 + rng.IntN(6)
		var q string
		if rng.Float64() < c.share {
			q = strings.Join(g.distinct(g.zh, k), "") + "？"
		} else {
			q = strings.Join(g.distinct(g.en, k), " ") + "?"
		}
		if !stored[q] {
			out = append(out, q)
		}
	}
	return out
}

// textGen draws words by the Zipf law.
type textGen struct {
	rng    *rand.Rand
	en, zh vocab
}

type vocab struct {
	words []string
	zipf  *rand.Zipf
}

func (v vocab) word() string { return v.words[v.zipf.Uint64()] }

func newTextGen(rng *rand.Rand, words, chinese []string) *textGen {
	return &textGen{rng: rng,
		en: vocab{words, rand.NewZipf(rng, zipfS, zipfV, uint64(len(words)-1))},
		zh: vocab{chinese, rand.NewZipf(rng, zipfS, zipfV, uint64(len(chinese)-1))}}
}

// distinct draws k different words (fewer if the vocabulary is smaller).
func (g *textGen) distinct(v vocab, k int) []string {
	k = min(k, len(v.words))
	seen := make(map[string]bool, k)
	out := make([]string, 0, k)
	for len(out) < k {
		if w := v.word(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// english is n pseudo-words as a sentence.
func (g *textGen) english(n int) string {
	var b strings.Builder
	for i := range n {
		w := g.en.word()
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if i < n-1 && g.rng.IntN(10) == 0 {
			b.WriteByte(',')
		}
	}
	if g.rng.IntN(5) == 0 {
		b.WriteByte('?')
	} else {
		b.WriteByte('.')
	}
	return b.String()
}

// chinese is n Chinese words as clauses of 3–8 words.
func (g *textGen) chinese(n int) string {
	var b strings.Builder
	clause := 3 + g.rng.IntN(6)
	for i := range n {
		if i > 0 && i%clause == 0 {
			b.WriteString("，")
		}
		b.WriteString(g.zh.word())
	}
	b.WriteString("。")
	return b.String()
}

// pseudoWords generates n distinct pseudo-words (consonant–vowel syllables and a final k, p, x
// or z), sorted by length, shorter first, keeping generation order among equal lengths.
func pseudoWords(rng *rand.Rand, n int) []string {
	const (
		onsets = "bdfghjlmnrstvw"
		vowels = "aiou"
		finals = "kpxz"
	)
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteByte(onsets[rng.IntN(len(onsets))])
			b.WriteByte(vowels[rng.IntN(len(vowels))])
		}
		b.WriteByte(finals[rng.IntN(len(finals))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) < len(out[j]) })
	return out
}

// chineseVocab is chineseWords as a list, in the order written (the Zipf rank).
func chineseVocab() []string { return strings.Fields(chineseWords) }

// chineseWords are common two-character Chinese words, written for this generator, roughly most
// frequent first.
const chineseWords = `
时间 工作 问题 朋友 今天 明天 昨天 现在 已经 可能 知道 觉得 喜欢 希望 需要 应该 开始 结束 学习 学校
老师 学生 孩子 家人 父母 妈妈 爸爸 哥哥 姐姐 弟弟 妹妹 周末 晚上 早上 中午 下午 上午 电影 音乐 唱歌
跳舞 旅游 旅行 城市 地方 国家 世界 中国 北京 上海 公司 同事 老板 项目 会议 计划 安排 决定 准备 帮助
支持 参加 活动 比赛 运动 跑步 游泳 篮球 足球 健身 身体 健康 医生 医院 生病 感冒 休息 睡觉 吃饭 早饭
午饭 晚饭 餐厅 咖啡 茶叶 水果 蔬菜 米饭 面条 饺子 味道 好吃 厨房 做饭 房子 房间 搬家 邻居 社区 公园
散步 天气 下雨 阳光 春天 夏天 秋天 冬天 季节 生日 礼物 蛋糕 聚会 婚礼 节日 春节 假期 放假 机场 飞机
火车 汽车 开车 地铁 公交 路上 附近 超市 商店 购物 衣服 鞋子 价格 便宜 手机 电脑 网络 游戏 视频 照片
相机 画画 艺术 作品 书法 小说 故事 历史 文化 语言 英语 中文 考试 成绩 作业 课程 大学 专业 毕业 研究
科学 技术 经济 市场 发展 社会 政府 新闻 消息 信息 文章 杂志 报纸 电视 节目 网站 软件 程序 数据 系统
设计 方法 办法 经验 能力 机会 条件 环境 压力 心情 高兴 开心 难过 担心 紧张 害怕 生气 感谢 谢谢 抱歉
没有 什么 怎么 因为 所以 但是 虽然 如果 而且 或者 然后 最后 其实 当然 一起 一直 经常 有时 总是 非常
特别 比较 真的 确实 一定 也许 大概 终于 突然 马上 刚才 以前 以后 之前 之后 最近 将来 未来 过去 小时
分钟 星期 月份 年纪 年轻 漂亮 可爱 聪明 认真 努力 成功 失败 进步 目标 梦想 理想 兴趣 爱好 宠物 小狗
小猫 动物 植物 花园 大海 海边 山上 森林 河流 风景 自然 空气 污染 保护 安全 危险 事情 东西 办公 邮件
电话 短信 聊天 见面 约会 恋爱 结婚 家庭 生活 日子 习惯 饮食 早点 晚点 水平 质量 数量 速度 方向 位置
距离 左边 右边 前面 后面 外面 里面 中间 周围 楼上 楼下 门口 窗户 桌子 椅子 沙发 床铺 钥匙 钱包 银行
工资 收入 花钱 存钱 投资 股票 保险 租房 房租 交通 堵车 停车 自行 骑车 步行 出门 回家 到达 出发 离开
记得 忘记 相信 理解 明白 发现 注意 关心 照顾 陪伴 鼓励 批评 表扬 建议 意见 看法 想法 感觉 印象 回忆
记忆 经历 青春 童年 老人 青年 中年 学期 暑假 寒假 同学 班级 宿舍 食堂 图书 阅读 写作 翻译 练习 复习 预习 考虑 讨论 交流
`

// locomoTurnWords is the turn-length distribution of the LoCoMo dev split as {words, turns}
// pairs. It was computed once from /work/shared/data/locomo/locomo-dev.json: for every turn of
// every session_N list of its three conversations, the number of whitespace-separated words of
// the turn's "text" field (image captions not counted); 1,451 turns, 1 to 80 words, mean 23.9,
// median 22, p90 41. Only these counts are kept here, no text of the dataset.
var locomoTurnWords = [][2]int{
	{1, 4}, {3, 4}, {4, 4}, {5, 12}, {6, 18}, {7, 15}, {8, 29}, {9, 26}, {10, 40}, {11, 39},
	{12, 48}, {13, 65}, {14, 38}, {15, 72}, {16, 65}, {17, 51}, {18, 43}, {19, 50}, {20, 47}, {21, 45},
	{22, 53}, {23, 49}, {24, 49}, {25, 40}, {26, 38}, {27, 43}, {28, 37}, {29, 39}, {30, 27}, {31, 29},
	{32, 22}, {33, 27}, {34, 22}, {35, 25}, {36, 21}, {37, 17}, {38, 15}, {39, 19}, {40, 18}, {41, 12},
	{42, 15}, {43, 15}, {44, 10}, {45, 3}, {46, 6}, {47, 13}, {48, 6}, {49, 9}, {50, 1}, {51, 5},
	{52, 2}, {53, 4}, {54, 1}, {55, 5}, {56, 3}, {57, 4}, {58, 7}, {59, 6}, {60, 2}, {61, 2},
	{62, 1}, {63, 2}, {64, 1}, {65, 2}, {66, 2}, {68, 1}, {69, 1}, {70, 1}, {73, 1}, {77, 1},
	{78, 1}, {80, 1},
}

// lengthTable draws event lengths (in words) with the frequencies of locomoTurnWords.
type lengthTable struct {
	cum   []int // cumulative turn counts
	words []int
}

func newLengthTable() lengthTable {
	var t lengthTable
	total := 0
	for _, p := range locomoTurnWords {
		total += p[1]
		t.cum = append(t.cum, total)
		t.words = append(t.words, p[0])
	}
	return t
}

func (t lengthTable) draw(rng *rand.Rand) int {
	x := rng.IntN(t.cum[len(t.cum)-1])
	return t.words[sort.SearchInts(t.cum, x+1)]
}
