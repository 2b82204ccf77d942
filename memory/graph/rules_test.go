package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// render writes a fact as "subject/kind -predicate-> object/kind", with " (replaces)" for a
// correction.
func render(f memory.Fact) string {
	s := fmt.Sprintf("%s/%s -%s-> %s/%s", f.Subject, f.SubjectKind, f.Predicate, f.Object, f.ObjectKind)
	if f.Replaces {
		s += " (replaces)"
	}
	return s
}

func renderAll(fs []memory.Fact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = render(f)
	}
	return out
}

func userEvent(id int64, partner, text string) memory.Event {
	return memory.Event{ID: id, Session: "s", Role: memory.RoleUser, Partner: partner, Content: text}
}

func TestRulesPatterns(t *testing.T) {
	r := NewRules(RulesOptions{NoMentions: true, MaxTopics: -1})
	tests := []struct {
		text string
		want []string
	}{
		// English, one statement each.
		{"I live in Paris.", []string{"Ann/person -lives in-> Paris/place"}},
		{"Last year I moved to Berlin, which is lovely.", []string{"Ann/person -lives in-> Berlin/place (replaces)"}},
		{"I work at Google on the search team.", []string{"Ann/person -works at-> Google/org"}},
		{"I work for the University of Texas.", []string{"Ann/person -works at-> University of Texas/org"}},
		{"I work as a nurse.", []string{"Ann/person -works as-> nurse/concept"}},
		{"I'm a software engineer at a startup.", []string{"Ann/person -works as-> software engineer/concept"}},
		{"I'm a transgender woman.", []string{"Ann/person -is a-> transgender woman/concept"}},
		{"I'm a bit tired today.", nil},
		{"I'm a survivor.", nil},
		{"My sister is Anna.", []string{"Anna/person -sister of-> Ann/person"}},
		{"My sister is a doctor.", []string{"Ann's sister/person -works as-> doctor/concept"}},
		{"My dog is called Rex!", []string{"Rex/animal -pet of-> Ann/person", "Rex/animal -is a-> dog/animal"}},
		{"My mom's name is Linda.", []string{"Linda/person -mother of-> Ann/person"}},
		{"I have a puppy named Max.", []string{"Max/animal -pet of-> Ann/person", "Max/animal -is a-> dog/animal"}},
		{"I went hiking with my friend Mel.", []string{"Mel/person -friend of-> Ann/person", "Ann/person -does-> hiking/concept", "Ann's friend/person -does-> hiking/concept"}},
		{"We went camping last week.", []string{"Ann/person -does-> camping/concept"}},
		{"I went shopping.", []string{"Ann/person -does-> shopping/concept"}},
		{"I just joined a new LGBTQ activist group last Tues.", []string{"Ann/person -joined-> new LGBTQ activist group/org"}},
		{"I volunteered at a homeless shelter.", []string{"Ann/person -volunteers at-> homeless shelter/org"}},
		{"And yup, Oscar, my guinea pig, is great.", []string{"Oscar/animal -pet of-> Ann/person", "Oscar/animal -is a-> guinea pig/animal"}},
		{"Thanks, my friend.", nil},
		{"We adopted another cat named Bailey.", []string{"Bailey/animal -pet of-> Ann/person", "Bailey/animal -is a-> cat/animal"}},
		{"We visited Lisbon in May.", []string{"Ann/person -visited-> Lisbon/place"}},
		{"I really love hiking in the mountains.", []string{"Ann/person -likes-> hiking/concept"}},
		{"I like Italian food and jazz.", []string{"Ann/person -likes-> Italian food/thing"}},
		{"I enjoy long walks on the beach.", []string{"Ann/person -likes-> long walks/thing"}},
		{"I hate traffic.", []string{"Ann/person -dislikes-> traffic/thing"}},
		{"I don't like spicy food.", []string{"Ann/person -dislikes-> spicy food/thing"}},
		{"I can't stand country music.", []string{"Ann/person -dislikes-> country music/thing"}},
		{"I love it!", nil},
		{"I love that you came.", nil},
		{"I'm a big fan of Taylor Swift!", []string{"Ann/person -likes-> Taylor Swift/thing"}},
		{"I went to Japan last spring.", []string{"Ann/person -visited-> Japan/place"}},
		{"I went to see a movie.", nil},
		{"I've been to Rome twice.", []string{"Ann/person -visited-> Rome/place"}},
		{"I visited the Louvre with my kids.", []string{"Ann/person -visited-> Louvre/place", "Ann's children/person -visited-> Louvre/place"}},
		{"I attended a pottery workshop.", []string{"Ann/person -attended-> pottery workshop/event"}},
		{"I'm from Sweden originally.", []string{"Ann/person -is from-> Sweden/place"}},
		{"I grew up in a small town.", []string{"Ann/person -is from-> small town/place"}},
		{"My birthday is on March 3rd.", []string{"Ann/person -birthday-> March 3rd/time"}},
		{"My birthday is tomorrow.", nil},
		{"I'm 32 years old.", []string{"Ann/person -age-> 32 years old/concept"}},
		{"I just turned 40!", []string{"Ann/person -age-> 40 years old/concept"}},
		{"I have a red bicycle.", []string{"Ann/person -owns-> red bicycle/thing"}},
		{"I have a cat.", []string{"Ann/person -owns-> cat/animal"}},
		{"I have a question about this.", nil},
		{"I'm learning to play the guitar.", []string{"Ann/person -studies-> play the guitar/concept"}},
		{"I've been studying Spanish.", []string{"Ann/person -studies-> Spanish/concept"}},
		{"I play the piano every day.", []string{"Ann/person -plays-> piano/thing"}},
		{"I play with my kids.", nil},
		{"Dune is my favourite book.", []string{"Ann/person -favourite book-> Dune/thing"}},
		{"My favorite movie is The Matrix.", []string{"Ann/person -favourite movie-> Matrix/thing"}},
		{"That is my favourite one.", nil},
		// Objects: at most 6 words, cut at clause boundaries.
		{"I love the quiet little old stone house by the lake.", []string{"Ann/person -likes-> quiet little old stone house/thing"}},
		{"I like reading because it relaxes me.", []string{"Ann/person -likes-> reading/concept"}},
		{"I like tea but not coffee.", []string{"Ann/person -likes-> tea/thing"}},
		{"I love painting so much 😍", []string{"Ann/person -likes-> painting/concept"}},
		// Several statements in one sentence, several sentences.
		{"I live in Paris and I work at Renault. My cat is named Mimi.", []string{"Ann/person -lives in-> Paris/place", "Ann/person -works at-> Renault/org", "Mimi/animal -pet of-> Ann/person", "Mimi/animal -is a-> cat/animal"}},
		// Case-insensitive, typographic apostrophes.
		{"i LIVE IN Lyon", []string{"Ann/person -lives in-> Lyon/place"}},
		{"I’m from Oslo", []string{"Ann/person -is from-> Oslo/place"}},
		// Not statements: questions, hypotheticals, other people.
		{"Do you live in Paris?", nil},
		{"If I moved to London I would be happy.", nil},
		{"I wish I lived in Rome.", nil},
		{"She lives in Madrid.", nil},
		// Chinese.
		{"我住在北京。", []string{"Ann/person -lives in-> 北京/place"}},
		{"我搬到上海了。", []string{"Ann/person -lives in-> 上海/place (replaces)"}},
		{"我在腾讯工作，我是程序员。", []string{"Ann/person -works at-> 腾讯/org", "Ann/person -works as-> 程序员/concept"}},
		{"我是北京人。", []string{"Ann/person -is from-> 北京/place"}},
		{"我是学生。", []string{"Ann/person -is a-> 学生/concept"}},
		{"我是说真的。", nil},
		{"我喜欢爬山和游泳。", []string{"Ann/person -likes-> 爬山/thing"}},
		{"我爱你。", nil},
		{"我讨厌下雨。", []string{"Ann/person -dislikes-> 下雨/thing"}},
		{"我不喜欢香菜。", []string{"Ann/person -dislikes-> 香菜/thing"}},
		{"我去了杭州。", []string{"Ann/person -visited-> 杭州/place"}},
		{"我的妹妹叫小美。", []string{"小美/person -sister of-> Ann/person"}},
		{"我的狗叫旺财", []string{"旺财/animal -pet of-> Ann/person", "旺财/animal -is a-> dog/animal"}},
		{"我今年三十二岁。", []string{"Ann/person -age-> 32 years old/concept"}},
		{"我来自成都。", []string{"Ann/person -is from-> 成都/place"}},
		{"我正在学习日语。", []string{"Ann/person -studies-> 日语/concept"}},
		{"我养了一只猫。", []string{"Ann/person -owns-> 猫/animal"}},
		{"我会打篮球。", []string{"Ann/person -plays-> 篮球/thing"}},
		{"我最喜欢的书是红楼梦。", []string{"Ann/person -favourite book-> 红楼梦/thing"}},
		{"三体是我最喜欢的书。", []string{"Ann/person -favourite book-> 三体/thing"}},
		{"如果我搬到上海，我会很开心。", nil},
		{"你住在哪里？", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			ev := userEvent(7, "Ann", tt.text)
			ev.Session = tt.text // each case its own session: no relation named by another
			facts, _, err := r.Extract(context.Background(), []memory.Event{ev})
			if err != nil {
				t.Fatal(err)
			}
			if got := renderAll(facts); !slices.Equal(got, tt.want) {
				t.Errorf("facts of %q:\n got  %q\n want %q", tt.text, got, tt.want)
			}
			for _, f := range facts {
				if !slices.Equal(f.Sources, []int64{7}) {
					t.Errorf("%s: sources %v, want [7]", render(f), f.Sources)
				}
			}
		})
	}
}

func TestRulesSpeaker(t *testing.T) {
	const text = "I live in Paris."
	tests := []struct {
		name string
		opts RulesOptions
		ev   memory.Event
		want []string
	}{
		{"partner", RulesOptions{MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleUser, Partner: "Bob", Content: text},
			[]string{"Bob/person -lives in-> Paris/place"}},
		{"owner", RulesOptions{MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleUser, Content: text},
			[]string{"owner/person -lives in-> Paris/place"}},
		{"named owner", RulesOptions{Owner: "Li Lei", MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleUser, Content: text},
			[]string{"Li Lei/person -lives in-> Paris/place"}},
		{"assistant says nothing", RulesOptions{}, memory.Event{ID: 1, Role: memory.RoleAssistant, Content: text}, nil},
		{"tool", RulesOptions{MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleTool, ToolName: "web", Content: text},
			[]string{"tool web/thing -talks about-> Paris/place"}},
		{"assistant without mentions", RulesOptions{NoMentions: true},
			memory.Event{ID: 1, Role: memory.RoleAssistant, Content: text}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts, _, err := NewRules(tt.opts).Extract(context.Background(), []memory.Event{tt.ev})
			if err != nil {
				t.Fatal(err)
			}
			if got := renderAll(facts); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRulesMentions(t *testing.T) {
	tests := []struct {
		text string
		want []string // mentioned names with kinds
	}{
		{"Hey Caroline! I talked to Mel about the Bank of America thing in New York.",
			[]string{"Mel/person", "Bank of America/org", "New York/place"}},
		{"Yesterday we drove from Boston to Portland.", []string{"Boston/place", "Portland/place"}},
		{"Yes. Melanie's painting won a prize.", nil}, // sentence-initial, seen nowhere else
		{"I saw Melanie's painting. Melanie's son won.", []string{"Melanie/person"}},
		{"Art's great. Swimming is fun.", nil},
		{"Jon said the Acme Corp deal is done.", nil},
		{"The Beatles played at Shea Stadium.", nil},
		{"We watched Lord of the Rings on Monday.", nil},
		{"I went to a LGBTQ support group.", nil},
		// Not names: sentence-initial common words, inflected words, calendar words, shouting,
		// the speaker, "I".
		{"Thanks! Swimming is fun. OMG, I LOVE IT. See you on Friday, OK?", nil},
		{"Ann is here. I think so.", nil},
		{"Ann Smith is here.", nil},
	}
	r := NewRules(RulesOptions{})
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			facts, _, err := r.Extract(context.Background(), []memory.Event{userEvent(1, "Ann", tt.text)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range facts {
				if f.Predicate == PredicateTalksAbout {
					if f.Subject != "Ann" {
						t.Errorf("mention subject %q, want Ann", f.Subject)
					}
					got = append(got, f.Object+"/"+f.ObjectKind)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("mentions of %q:\n got  %q\n want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestRulesMentionsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "I talked to Name%c%c today. ", 'A'+i%26, 'a'+i/26)
	}
	tests := []struct {
		name string
		opts RulesOptions
		ev   memory.Event
		want int
	}{
		{"default", RulesOptions{MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleTool, Content: b.String()}, 3},
		{"bounded", RulesOptions{MaxMentions: 2, MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleUser, Content: b.String()}, 2},
		{"tool text cut", RulesOptions{MaxToolText: 45, MaxTopics: -1}, memory.Event{ID: 1, Role: memory.RoleTool, Content: b.String()}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts, _, err := NewRules(tt.opts).Extract(context.Background(), []memory.Event{tt.ev})
			if err != nil {
				t.Fatal(err)
			}
			if len(facts) != tt.want {
				t.Errorf("%d facts, want %d: %q", len(facts), tt.want, renderAll(facts))
			}
		})
	}
}

func TestRulesBatch(t *testing.T) {
	evs := []memory.Event{
		userEvent(1, "Ann", "I like tea."),
		{ID: 2, Session: "s", Role: memory.RoleAssistant, Content: "Tea is great. Do you like Paris?"},
		userEvent(3, "Ann", "Yes, I like tea. And I visited Paris."),
		{ID: 4, Session: "s", Role: memory.RoleUser, Partner: "Ann", Content: "Here is my note from Paris.",
			Blocks: []memory.Block{
				{ID: "b1", Kind: memory.BlockText, Name: "paris", Text: "Paris notes", Holder: memory.BlockHolder{Layer: memory.LayerL2, Event: 4}},
				{ID: "b2", Kind: memory.BlockImage, Name: "Paris", Holder: memory.BlockHolder{Layer: memory.LayerL2, Event: 4}},
				{ID: "b3", Kind: memory.BlockText, Name: "tea", Holder: memory.BlockHolder{Layer: memory.LayerL3, Entity: 9}},
				{ID: "b4", Kind: memory.BlockText, Name: "Rome", Holder: memory.BlockHolder{Layer: memory.LayerL2, Event: 4}},
			}},
	}
	facts, adopt, err := NewRules(RulesOptions{MaxTopics: -1}).Extract(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{
		"Ann/person -likes-> tea/thing":         {1, 3},
		"Ann/person -visited-> Paris/place":     {3},
		"Ann/person -talks about-> Paris/place": {4},
	}
	got := map[string][]int64{}
	for _, f := range facts {
		got[render(f)] = f.Sources
	}
	if len(got) != len(facts) {
		t.Errorf("duplicate facts: %q", renderAll(facts))
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: sources %v, want %v (facts %q)", k, got[k], v, renderAll(facts))
		}
	}
	if len(got) != len(want) {
		t.Errorf("facts %q, want %d", renderAll(facts), len(want))
	}
	// Only the L2 text block named like an entity is adopted (case-insensitive), by that name.
	if wantA := []memory.Adoption{{Block: "b1", Entity: "Paris"}}; !slices.Equal(adopt, wantA) {
		t.Errorf("adoptions %v, want %v", adopt, wantA)
	}
}

func TestRulesKindsUnified(t *testing.T) {
	// "Mel" is a person in one fact and would be a thing as a bare mention: one kind per name.
	evs := []memory.Event{
		userEvent(1, "Ann", "My friend Mel is great."),
		userEvent(2, "Bob", "Mel and Sam came."),
	}
	facts, _, err := NewRules(RulesOptions{}).Extract(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range facts {
		for _, nk := range [][2]string{{f.Subject, f.SubjectKind}, {f.Object, f.ObjectKind}} {
			if k, ok := kinds[nk[0]]; ok && k != nk[1] {
				t.Errorf("%s has kinds %s and %s", nk[0], k, nk[1])
			}
			kinds[nk[0]] = nk[1]
		}
	}
	if kinds["Mel"] != KindPerson {
		t.Errorf("Mel is %q, want person (facts %q)", kinds["Mel"], renderAll(facts))
	}
}

func TestRulesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := NewRules(RulesOptions{}).Extract(ctx, []memory.Event{userEvent(1, "Ann", "I live in Paris.")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"Version 1.5 is out.", []string{"Version 1.5 is out."}},
		{"第一句。第二句！第三句", []string{"第一句。", "第二句！", "第三句"}},
		{"line one\nline two", []string{"line one", "line two"}},
		{"  ", nil},
	}
	for _, tt := range tests {
		if got := sentences(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("sentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestZhNumber(t *testing.T) {
	for in, want := range map[string]string{"32": "32", "三十二": "32", "十八": "18", "两": "2", "一百零五": "一百零五", "九十": "90"} {
		if got := zhNumber(in); got != want {
			t.Errorf("zhNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkRulesExtract measures the rules on one default batch (16 events of chat).
func BenchmarkRulesExtract(b *testing.B) { benchmarkRules(b, RulesOptions{}) }

// BenchmarkRulesExtractNoTopics is the same batch without topics (the extractor before them).
func BenchmarkRulesExtractNoTopics(b *testing.B) { benchmarkRules(b, RulesOptions{MaxTopics: -1}) }

func benchmarkRules(b *testing.B, opts RulesOptions) {
	lines := []string{
		"Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful.",
		"I'm swamped with the kids & work. My daughter's birthday is next week.",
		"I live in Boston now, but I grew up in a small town in Ohio.",
		"I love painting landscapes, and I just joined a pottery class at the Riverside Art Center.",
		"我住在北京，我在腾讯工作。我最喜欢的书是红楼梦。",
		"That sounds great! What did you paint last time?",
		"My dog is called Rex and he loves the beach. We went camping in Maine last summer.",
		"I'm a software engineer at Acme Corp, and I play the guitar on weekends.",
	}
	evs := make([]memory.Event, 16)
	for i := range evs {
		evs[i] = userEvent(int64(i+1), "Ann", lines[i%len(lines)])
	}
	r := NewRules(opts)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.Extract(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(evs))/b.Elapsed().Seconds(), "events/s")
}
