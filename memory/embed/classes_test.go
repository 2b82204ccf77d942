package embed

import (
	"testing"
)

// TestLexiconClasses: the word classes of WordNet's four index files, through inflections.
func TestLexiconClasses(t *testing.T) {
	l := testLexicon(t)
	for _, tc := range []struct {
		word      string
		has, lack int
	}{
		{"nurse", ClassNoun, 0},
		{"turtles", ClassNoun, 0},
		{"painting", ClassNoun | ClassVerb, 0},
		{"lives", ClassVerb, 0},
		{"studies", ClassVerb | ClassNoun, 0},
		{"stopped", ClassVerb, 0},
		{"surreal", ClassAdj, ClassNoun},
		{"quickly", ClassAdv, ClassNoun | ClassVerb},
		{"ice cream", ClassNoun, 0},
		{"xqzzyv", 0, ClassNoun | ClassVerb | ClassAdj | ClassAdv},
	} {
		c := l.Classes(tc.word)
		if c&tc.has != tc.has || c&tc.lack != 0 {
			t.Errorf("Classes(%q) = %b, want %b set and %b clear", tc.word, c, tc.has, tc.lack)
		}
	}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{{"turtles", "turtle", true}, {"mice", "mouse", true}, {"nurse", "nurse", true}, {"xqzzyv", "xqzzyv", false}} {
		if got, ok := l.NounLemma(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("NounLemma(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	var nilLex *Lexicon
	if nilLex.Classes("nurse") != 0 {
		t.Error("a nil lexicon knows words")
	}
}

// TestTokenizerTag: jieba's parts of speech; text without Han characters is not tagged.
func TestTokenizerTag(t *testing.T) {
	tok := NewTokenizer(TokenizerOptions{})
	t.Cleanup(tok.Close)
	tags, err := tok.Tag("我在书店发现了小说")
	if err != nil {
		t.Fatalf("jieba is needed for this test (make jieba-dict): %v", err)
	}
	want := map[string]string{"我": "r", "在": "p", "书店": "n", "小说": "n"}
	got := map[string]string{}
	for _, tg := range tags {
		got[tg.Word] = tg.POS
	}
	for w, pos := range want {
		if got[w] != pos {
			t.Errorf("Tag: %q tagged %q, want %q (all: %v)", w, got[w], pos, tags)
		}
	}
	if tags, err := tok.Tag("no Han here"); err != nil || tags != nil {
		t.Errorf("Tag of Latin text = %v, %v; want nil", tags, err)
	}
}
