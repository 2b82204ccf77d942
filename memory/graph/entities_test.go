package graph

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// fakeLexicon is a hand-written word-class table standing in for WordNet.
type fakeLexicon map[string]int

func (f fakeLexicon) Classes(w string) int {
	if c, ok := f[w]; ok {
		return c
	}
	if l, ok := f.NounLemma(w); ok {
		return f[l] & ClassNoun
	}
	return 0
}
func (f fakeLexicon) NounLemma(w string) (string, bool) {
	if f[w]&ClassNoun != 0 {
		return w, true
	}
	if b := w[:max(len(w)-1, 0)]; len(w) > 1 && w[len(w)-1] == 's' && f[b]&ClassNoun != 0 {
		return b, true
	}
	return w, false
}

var testLexicon = fakeLexicon{
	"nurse": ClassNoun, "painting": ClassNoun | ClassVerb, "turtle": ClassNoun, "keen": ClassNoun | ClassAdj,
	"live": ClassVerb | ClassAdj, "love": ClassNoun | ClassVerb, "work": ClassNoun | ClassVerb, "play": ClassNoun | ClassVerb,
	"piano": ClassNoun, "beach": ClassNoun, "camping": ClassNoun, "art": ClassNoun, "let": ClassNoun | ClassVerb,
	"lets": ClassVerb, "get": ClassVerb, "sunset": ClassNoun, "pottery": ClassNoun, "class": ClassNoun,
}

func TestRulesEntities(t *testing.T) {
	tests := []struct {
		name string
		evs  []string
		want []string
	}{
		{"a relation is the subject of its facts", []string{"My sister Anna is a nurse."},
			[]string{"Anna/person -sister of-> Ann/person", "Anna/person -works as-> nurse/concept"}},
		{"my X resolved within the session", []string{"My brother is Tom.", "My brother loves painting."},
			[]string{"Tom/person -brother of-> Ann/person", "Tom/person -likes-> painting/concept"}},
		{"an unnamed relation", []string{"My kids love the beach."},
			[]string{"Ann's children/person -likes-> beach/thing"}},
		{"a companion did it too", []string{"My kids and I went to the beach."},
			[]string{"Ann/person -visited-> beach/place", "Ann's children/person -visited-> beach/place"}},
		{"a pet", []string{"I have a turtle named Shelly."},
			[]string{"Shelly/animal -pet of-> Ann/person", "Shelly/animal -is a-> turtle/animal"}},
		{"plural made singular", []string{"I love turtles."}, []string{"Ann/person -likes-> turtle/thing"}},
		{"an adjective is no object", []string{"I love keen."}, nil},
		{"an object cut before its verb", []string{"I love art lets us get calm."}, []string{"Ann/person -likes-> art/thing"}},
		{"a light verb makes nothing", []string{"I made a difference."}, nil},
		{"an infinitive is no object", []string{"I tried to stay calm."}, nil},
		{"the person spoken to is no fact", []string{"Thanks, Mel! I love pottery class."},
			[]string{"Ann/person -likes-> pottery class/thing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRules(RulesOptions{Lexicon: testLexicon})
			var evs []memory.Event
			for i, text := range tt.evs {
				evs = append(evs, userEvent(int64(i+1), "Ann", text))
			}
			facts, _, err := r.Extract(context.Background(), evs)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderAll(facts); !slices.Equal(got, tt.want) {
				t.Errorf("facts of %q:\n got  %q\n want %q", tt.evs, got, tt.want)
			}
			for _, f := range facts {
				if !InVocabulary(f.Predicate) {
					t.Errorf("%s: predicate outside the vocabulary", render(f))
				}
			}
		})
	}
}

// fakeTags tags a few Chinese words as jieba would.
func fakeTags(text string) []Tagged {
	dict := []Tagged{{"同学", "n"}, {"一起", "d"}, {"我", "r"}, {"和", "c"}, {"在", "p"}, {"公园", "n"},
		{"放", "v"}, {"风筝", "n"}, {"书店", "n"}, {"期末考试", "n"}, {"前", "f"}, {"很", "d"}, {"开心", "a"},
		{"Tom", "eng"}, {"Bart", "eng"}, {"，", "x"}, {"。", "x"}, {"上", "f"}}
	var out []Tagged
	for i := 0; i < len(text); {
		found := false
		for _, d := range dict {
			if len(text)-i >= len(d.Word) && text[i:i+len(d.Word)] == d.Word {
				out = append(out, d)
				i += len(d.Word)
				found = true
				break
			}
		}
		if !found {
			out = append(out, Tagged{text[i : i+1], "x"})
			i++
		}
	}
	return out
}

func TestRulesChineseEntities(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"a note about the owner by name, a classmate who was there",
			"Bart和同学Tom一起在公园放风筝，很开心。",
			[]string{"Tom/person -classmate of-> Bart/person", "Bart/person -visited-> 公园/place",
				"Bart/person -does-> 放风筝/concept", "Tom/person -visited-> 公园/place", "Tom/person -does-> 放风筝/concept"}},
		{"a time is not a place", "Bart在期末考试前很开心。", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRules(RulesOptions{Owner: "Bart", Tag: fakeTags})
			facts, _, err := r.Extract(context.Background(), []memory.Event{{ID: 1, Session: "s", Role: memory.RoleUser, Content: tt.text}})
			if err != nil {
				t.Fatal(err)
			}
			if got := renderAll(facts); !slices.Equal(got, tt.want) {
				t.Errorf("facts of %q:\n got  %q\n want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestNamedTime(t *testing.T) {
	at := time.Date(2024, 5, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		text string
		want time.Time
	}{
		{"I went to Paris yesterday.", at.AddDate(0, 0, -1)},
		{"We visited Rome last year.", at.AddDate(-1, 0, 0)},
		{"I started pottery two weeks ago.", at.AddDate(0, 0, -14)},
		{"I moved to Lisbon in 2019.", time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"我昨天去了北京。", at.AddDate(0, 0, -1)},
		{"I love tea.", time.Time{}},
	}
	for _, tt := range tests {
		if got := namedTime(tt.text, at); !got.Equal(tt.want) {
			t.Errorf("namedTime(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	// An event fact is dated with the time its sentence names.
	r := NewRules(RulesOptions{})
	facts, _, err := r.Extract(context.Background(), []memory.Event{{ID: 1, Session: "s", Role: memory.RoleUser, Partner: "Ann",
		Content: "I visited Rome last year.", Time: at}})
	if err != nil {
		t.Fatal(err)
	}
	if len(facts) != 1 || !facts[0].ValidFrom.Equal(at.AddDate(-1, 0, 0)) {
		t.Errorf("facts %q valid from %v, want a year before the event", renderAll(facts), facts)
	}
}

func TestVocabulary(t *testing.T) {
	for _, p := range []string{"lives in", "sister of", "pet of", "favourite book", "favourite tv show", "visited"} {
		if !Typed(p) {
			t.Errorf("Typed(%q) = false", p)
		}
	}
	for _, p := range []string{PredicateTalksAbout, "mentions", "has sister", "favourite"} {
		if Typed(p) {
			t.Errorf("Typed(%q) = true", p)
		}
	}
}
