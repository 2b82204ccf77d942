package graph

import (
	"slices"
	"strings"

	"github.com/hologramagent/hologram/memory"
)

// Predicate is one entry of the closed predicate vocabulary (docs/memory-graph.md, "Predicate
// vocabulary"): the stored English form, the Chinese phrasings the rules read it from, and
// what its object is.
type Predicate struct {
	Name   string // stored form ("lives in")
	Zh     string // Chinese phrasings, for the documentation and the LLM prompt
	Object string // the object's kind (an entity kind, or "value")
}

// Vocabulary is the closed set of predicates both extractors use. Families close over a
// fixed list: "<relation> of" over [Relations] ("sister of", "friend of", "pet of") and
// "favourite <category>" over a one-word category. [PredicateTalksAbout] is the one catch-all
// and is not in this list.
var Vocabulary = []Predicate{
	{"lives in", "住在 / 搬到", KindPlace},
	{"is from", "来自 / 是…人", KindPlace},
	{"works at", "在…工作 / 在…上班", KindOrg},
	{"works as", "是(一名)…(师/员/家…)", KindConcept},
	{"is a", "是…(学生…)", KindConcept},
	{"studies", "学习 / 在学", KindConcept},
	{"likes", "喜欢 / 爱 / 热爱", KindThing},
	{"dislikes", "讨厌 / 不喜欢", KindThing},
	{"prefers", "更喜欢 / 宁愿", KindThing},
	{"owns", "有 / 买了(一辆…)", KindThing},
	{"bought", "买了", KindThing},
	{"made", "做了 / 画了 / 写了", KindThing},
	{"plays", "打…球 / 弹 / 玩", KindThing},
	{"does", "(activity) 跳舞 / 放风筝", KindConcept},
	{"visited", "去过 / 去了 / 到过 / 在…(地方)", KindPlace},
	{"plans to visit", "打算去 / 计划去 / 想去", KindPlace},
	{"attended", "参加了 / 在…(活动)上", KindEvent},
	{"joined", "加入了 / 报名了", KindOrg},
	{"volunteers at", "在…做志愿者", KindOrg},
	{"started", "开始(学/做)…", KindThing},
	{"finished", "完成了 / 读完了", KindThing},
	{"won", "获得了 / 赢得了", KindThing},
	{"received", "收到了", KindThing},
	{"tried", "尝试了 / 试了", KindThing},
	{"is allergic to", "对…过敏", KindThing},
	{"wants to be", "想成为 / 想当", KindConcept},
	{"met", "见了 / 认识了", KindPerson},
	{"watched", "看了 / 观看了", KindThing},
	{"uses", "用 / 使用", KindThing},
	{"works on", "在做(项目)", KindThing},
	{"age", "…岁", "value"},
	{"birthday", "生日是", KindTime},
	{"favourite <category>", "最喜欢的<类>是", KindThing},
	{"<relation> of", "我的<关系>叫… (sister of, friend of, pet of…)", KindPerson},
}

// Relations are the relation names of the "<relation> of" predicates, canonical English (the
// rules map mom → mother, 妹妹 → sister…).
var Relations = func() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{relations, zhRelations} {
		for _, v := range m {
			if pets[v] || v == "guinea pig" {
				v = "pet"
			}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return out
}()

var typedNames = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range Vocabulary {
		if !strings.Contains(p.Name, "<") {
			m[p.Name] = true
		}
	}
	for _, r := range Relations {
		m[r+" of"] = true
	}
	return m
}()

// Typed reports whether a predicate is in the closed vocabulary (the catch-all
// [PredicateTalksAbout] is not).
func Typed(pred string) bool {
	p := memory.NormalizePredicate(pred)
	if typedNames[p] {
		return true
	}
	cat, ok := strings.CutPrefix(p, "favourite ")
	return ok && cat != "" && strings.Count(cat, " ") <= 1
}

// InVocabulary reports whether a predicate is typed or the catch-all.
func InVocabulary(pred string) bool {
	return Typed(pred) || memory.NormalizePredicate(pred) == PredicateTalksAbout
}
