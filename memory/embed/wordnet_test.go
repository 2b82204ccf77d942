package embed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// testLexicon uses the machine's WordNet (Debian's wordnet-base, installed by make deps).
func testLexicon(t *testing.T) *Lexicon {
	t.Helper()
	l := NewLexicon(LexiconOptions{})
	if err := l.Load(context.Background()); err != nil {
		t.Fatalf("WordNet is needed for these tests (apt-get install wordnet-base, or make deps): %v", err)
	}
	return l
}

func TestLexiconLemmaAndHypernyms(t *testing.T) {
	l := testLexicon(t)
	for _, tc := range []struct{ in, want string }{{"went", "go"}, {"children", "child"}, {"mice", "mouse"}, {"better", "good"}, {"walked", "walked"}} {
		if got := l.Lemma(tc.in); got != tc.want {
			t.Errorf("Lemma(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		word string
		want string
	}{{"taekwondo", "martial_art"}, {"spain", "european_country"}, {"guitar", "musical_instrument"}, {"guitars", "musical_instrument"}} {
		if got := l.Hypernyms(tc.word); !slices.Contains(got, tc.want) {
			t.Errorf("Hypernyms(%q) = %v, want %q among them", tc.word, got, tc.want)
		}
	}
	if got := l.Hypernyms("xqzzyv"); got != nil {
		t.Errorf("unknown word expanded: %v", got)
	}
	exp := l.Expand("I'm off to do some taekwondo in Spain!")
	for _, want := range []string{"martial", "art", "european", "countri"} {
		if !slices.Contains(exp, want) {
			t.Errorf("Expand lacks %q: %v", want, exp)
		}
	}
}

func TestWordNetMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := ResolveWordNetDir(dir, os.Getenv, ""); !errors.Is(err, ErrWordNetNotFound) {
		t.Fatalf("explicit empty dir: %v", err)
	}
	for _, f := range WordNetFiles {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	if got, err := ResolveWordNetDir("", func(k string) string {
		if k == WordNetDirEnv {
			return dir
		}
		return ""
	}, ""); err != nil || got != dir {
		t.Fatalf("env dir: %q %v", got, err)
	}
	l := NewLexicon(LexiconOptions{Dir: filepath.Join(dir, "nope")})
	if err := l.Load(context.Background()); !errors.Is(err, ErrWordNetNotFound) {
		t.Fatalf("Load: %v", err)
	}
	// A missing lexicon degrades to no knowledge, never a panic.
	if l.Lemma("went") != "went" || l.Hypernyms("spain") != nil || l.Expand("spain") != nil {
		t.Fatal("a failed lexicon still answered")
	}
}
