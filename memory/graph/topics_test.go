package graph

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// topicsOfFacts returns the objects of the "talks about" facts, in order.
func topicsOfFacts(t *testing.T, fs []memory.Fact, subject string) []string {
	t.Helper()
	var out []string
	for _, f := range fs {
		if f.Predicate != PredicateTalksAbout {
			continue
		}
		if f.Subject != subject || f.ObjectKind != KindConcept {
			t.Errorf("topic fact %s: want subject %s and a concept", render(f), subject)
		}
		out = append(out, f.Object)
	}
	return out
}

func TestRulesTopics(t *testing.T) {
	tests := []struct {
		name string
		text string
		opts RulesOptions
		want []string
	}{
		// Ranked by specificity: more words first, then the longer word.
		{"phrases first", "I just signed up for a pottery class yesterday. It's like therapy for me.",
			RulesOptions{MaxTopics: 5}, nil},
		{"longer words first", "We roast marshmallows around the campfire by the lake.",
			RulesOptions{MaxTopics: 5}, []string{"marshmallow", "campfire", "lake"}},
		{"three words at most", "Our big family summer camping trip was fun.",
			RulesOptions{MaxTopics: 5}, []string{"summer camping trip"}},
		// Plural heads made singular: one entity for "kids" and "kid".
		{"plural heads", "The kids saw movies, ate cookies, made boxes and read stories.",
			RulesOptions{MaxTopics: 5}, []string{"cookie", "movie", "story", "kid", "box"}},
		{"irregular plurals", "The children fed the geese.", RulesOptions{MaxTopics: 5}, []string{"child", "goose"}},
		{"not plurals", "The news about chess and physics.", RulesOptions{MaxTopics: 5}, []string{"physics", "chess", "news"}},
		// Not topics: pronouns, numbers, dates, verbs, adverbs, the speaker.
		{"pronouns and verbs", "He said they would come and we could go, honestly.", RulesOptions{MaxTopics: 5}, nil},
		{"numbers and dates", "I bought 3 plants and 12 pots on Monday, May 5th 2023.",
			RulesOptions{MaxTopics: 5}, nil},
		{"speaker name", "Ann loves her garden; ann grows tomatoes.", RulesOptions{MaxTopics: 5}, []string{"garden", "tomato"}},
		{"verb after a pronoun", "We hike often and they paint murals.", RulesOptions{MaxTopics: 5}, []string{"mural"}},
		// Names are mentions; the patterns' objects and predicates are not repeated.
		{"names are mentions", "We visited the Louvre and talked about impressionist paintings.",
			RulesOptions{MaxTopics: 5}, nil},
		{"pattern objects", "I love painting landscapes and I joined a pottery class.", RulesOptions{MaxTopics: 5}, nil},
		{"pattern predicates", "My dog is called Rex and my favourite book is Dune.", RulesOptions{MaxTopics: 5}, nil},
		{"mention words", "I met Pottery Barn people in the barn.", RulesOptions{MaxTopics: 5}, nil},
		{"a verb in -s splits a run", "The pottery workshop sells handmade ceramic bowls.",
			RulesOptions{MaxTopics: 5}, []string{"handmade ceramic bowl", "pottery workshop"}},
		// Bounds.
		{"MaxTopics", "Marshmallows, campfires, tents, lanterns and kayaks.",
			RulesOptions{MaxTopics: 2}, []string{"marshmallow", "campfire"}},
		{"default bound", "Marshmallows, campfires, tents, lanterns, kayaks, paddles and boots.",
			RulesOptions{MaxTopics: 5}, []string{"marshmallow", "campfire", "lantern", "paddle", "kayak"}},
		{"MaxTopics < 0 disables topics", "We roast marshmallows around the campfire.",
			RulesOptions{MaxTopics: -1}, nil},
		{"questions too", "Have you tried pottery?", RulesOptions{MaxTopics: 5}, []string{"pottery"}},
		{"a repeated word counts", "The garden is lovely. Gardening is calm. My garden has roses.",
			RulesOptions{MaxTopics: 1}, []string{"garden"}},
		// Chinese: only through the Keywords hook.
		{"Chinese without Keywords", "这个周末我们去爬山了，还做了陶艺。", RulesOptions{MaxTopics: 5}, nil},
		{"Chinese with Keywords", "这个周末我们去爬山了，还做了陶艺。", RulesOptions{Keywords: fakeKeywords, MaxTopics: 5},
			[]string{"爬山", "陶艺"}},
		{"Chinese keywords filtered", "我和Ann最近在学陶艺，真的很开心。", RulesOptions{Keywords: fakeKeywords, MaxTopics: 5},
			[]string{"陶艺", "开心"}},
		{"Chinese deduplicated", "我最近在学陶艺。我住在北京，北京很大。", RulesOptions{Keywords: fakeKeywords, MaxTopics: 5}, nil},
		{"mixed text", "我喜欢 pottery classes 和爬山。", RulesOptions{Keywords: fakeKeywords, MaxTopics: 5},
			[]string{"爬山", "pottery class"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts, _, err := NewRules(tt.opts).Extract(context.Background(), []memory.Event{userEvent(3, "Ann", tt.text)})
			if err != nil {
				t.Fatal(err)
			}
			if got := topicsOfFacts(t, facts, "Ann"); !slices.Equal(got, tt.want) {
				t.Errorf("topics of %q:\n got  %q\n want %q\n facts %q", tt.text, got, tt.want, renderAll(facts))
			}
		})
	}
}

// fakeKeywords stands in for jieba's keyword extraction: the words of a fixed dictionary found
// in the text, in text order, with the pronouns, particles and numbers a real extractor may
// return.
func fakeKeywords(text string) []string {
	dict := []string{"我", "Ann", "最近", "陶艺", "周末", "爬山", "北京", "很", "开心", "3", "喜欢", "pottery", "小美"}
	type hit struct {
		at int
		w  string
	}
	var hits []hit
	for _, w := range dict {
		if i := strings.Index(text, w); i >= 0 {
			hits = append(hits, hit{i, w})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return a.at - b.at })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.w
	}
	return out
}

func TestRulesTopicsRoles(t *testing.T) {
	const text = "The pottery workshop sells handmade ceramic bowls."
	tests := []struct {
		name string
		ev   memory.Event
		want []string // rendered topic facts
	}{
		{"user", memory.Event{ID: 1, Role: memory.RoleUser, Partner: "Bob", Content: text},
			[]string{"Bob/person -talks about-> handmade ceramic bowl/concept", "Bob/person -talks about-> pottery workshop/concept"}},
		{"owner", memory.Event{ID: 1, Role: memory.RoleUser, Content: text},
			[]string{"owner/person -talks about-> handmade ceramic bowl/concept", "owner/person -talks about-> pottery workshop/concept"}},
		{"tool", memory.Event{ID: 1, Role: memory.RoleTool, ToolName: "web", Content: text},
			[]string{"tool web/thing -talks about-> handmade ceramic bowl/concept", "tool web/thing -talks about-> pottery workshop/concept"}},
		{"assistant", memory.Event{ID: 1, Role: memory.RoleAssistant, Content: text}, nil},
		{"Chinese speaker", memory.Event{ID: 1, Role: memory.RoleUser, Partner: "小美", Content: "小美周末做了陶艺。"},
			[]string{"小美/person -talks about-> 陶艺/concept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts, _, err := NewRules(RulesOptions{Keywords: fakeKeywords, MaxTopics: 5}).Extract(context.Background(), []memory.Event{tt.ev})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range facts {
				if f.Predicate == PredicateTalksAbout {
					got = append(got, render(f))
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRulesTopicsBatch(t *testing.T) {
	// The same topic in two events is one fact with both sources; "kids" and "kid" are one.
	evs := []memory.Event{
		userEvent(1, "Ann", "The kids built a sandcastle."),
		userEvent(2, "Ann", "Every kid loves a sandcastle."),
	}
	facts, _, err := NewRules(RulesOptions{MaxTopics: 5}).Extract(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, f := range facts {
		got[render(f)] = f.Sources
	}
	want := map[string][]int64{
		"Ann/person -talks about-> sandcastle/concept": {1, 2},
		"Ann/person -talks about-> kid/concept":        {1, 2},
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: sources %v, want %v (facts %q)", k, got[k], v, renderAll(facts))
		}
	}
	if len(facts) != len(want) {
		t.Errorf("facts %q, want %d", renderAll(facts), len(want))
	}
}

func TestSingular(t *testing.T) {
	tests := map[string]string{
		"kids": "kid", "kid": "kid", "stories": "story", "movies": "movie", "classes": "class",
		"boxes": "box", "churches": "church", "dishes": "dish", "class": "class", "bus": "bus",
		"tennis": "tennis", "news": "news", "physics": "physics", "children": "child",
		"women": "woman", "potatoes": "potato", "knives": "knife", "toys": "toy", "gas": "gas",
		"art": "art",
	}
	for in, want := range tests {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}
