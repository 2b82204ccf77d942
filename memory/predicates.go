package memory

import (
	"strings"
)

// NameKey is the key the graph finds entities by: the name lower-cased, trimmed, with inner
// white space collapsed to single spaces ("  Alice   SMITH " → "alice smith"). Two names with
// the same key (and a compatible kind) are the same entity.
func NameKey(name string) string {
	return strings.Join(strings.Fields(strings.ToLower(name)), " ")
}

// NormalizePredicate is the stored form of a triple's predicate: lower case, trimmed, '_' read
// as a space, inner white space collapsed ("Lives_In " → "lives in"). An empty result is not a
// valid predicate.
func NormalizePredicate(p string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.ToLower(p), "_", " ")), " ")
}

// singleValued are the predicates that hold one value at a time, in normalised form. A new fact
// with one of them supersedes the subject's current triples with the same predicate and
// another object ("Alice lives in Paris" ends "Alice lives in London").
var singleValued = map[string]bool{
	// Where someone lives or is.
	"lives in": true, "lives at": true, "resides in": true, "is located in": true, "located in": true,
	"address": true, "hometown": true,
	// Work.
	"works at": true, "works for": true, "works as": true, "is employed by": true, "employed by": true,
	"job": true, "job title": true, "occupation": true, "profession": true, "employer": true,
	// Personal data.
	"age": true, "is aged": true, "birthday": true, "born on": true, "date of birth": true,
	"name": true, "is called": true, "is named": true, "nickname": true,
	"height": true, "weight": true, "phone": true, "phone number": true, "email": true,
	// Relationships and state.
	"is married to": true, "married to": true, "spouse": true, "husband": true, "wife": true,
	"is dating": true, "status": true, "relationship status": true, "mood": true,
	// Chinese.
	"住在": true, "居住在": true, "居住于": true, "住址": true, "地址": true, "家乡": true,
	"工作于": true, "就职于": true, "任职于": true, "职业": true, "职位": true,
	"年龄": true, "生日": true, "出生于": true, "名字": true, "叫": true, "昵称": true,
	"身高": true, "体重": true, "电话": true, "邮箱": true,
	"配偶": true, "妻子": true, "丈夫": true, "嫁给": true, "娶了": true, "状态": true, "心情": true,
}

// singleValuedPrefixes mark whole families of single-valued predicates ("favourite colour",
// "current job", "最喜欢的水果").
var singleValuedPrefixes = []string{"favourite", "favorite", "current ", "最喜欢", "目前的"}

// SingleValued reports whether a predicate holds one value at a time: where someone lives
// ("lives in", "住在"), works ("works at", "works as", "工作于"), their age, birthday, name,
// spouse ("is married to"), status or job, and every "favourite …"/"favorite …"/"current …"/
// "最喜欢…" predicate. The predicate is normalised first (see [NormalizePredicate]). The list
// is deliberately small: a predicate not on it ("likes", "knows", "visited") accumulates
// objects, and an extractor that knows better sets [Fact.Replaces].
func SingleValued(predicate string) bool {
	p := NormalizePredicate(predicate)
	if singleValued[p] {
		return true
	}
	for _, pre := range singleValuedPrefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}
