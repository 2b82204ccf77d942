package memtest_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
)

func isChinese(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// words is an event's length in words: spaces separate English words; a Chinese event's words
// have two characters each.
func words(s string) int {
	if isChinese(s) {
		n := 0
		for _, r := range s {
			if unicode.Is(unicode.Han, r) {
				n++
			}
		}
		return n / 2
	}
	return len(strings.Fields(s))
}

func TestSynthDeterministic(t *testing.T) {
	t.Parallel()
	a := memtest.Synth(memtest.SynthOptions{Events: 2000, Seed: 7})
	b := memtest.Synth(memtest.SynthOptions{Events: 2000, Seed: 7})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two corpora from the same seed differ")
	}
	if qa, qb := a.Queries(50, 3), b.Queries(50, 3); !reflect.DeepEqual(qa, qb) {
		t.Fatal("queries from the same seed differ")
	}
	c := memtest.Synth(memtest.SynthOptions{Events: 2000, Seed: 8})
	if reflect.DeepEqual(a.Events, c.Events) {
		t.Fatal("different seeds give the same events")
	}
}

func TestSynthCorpus(t *testing.T) {
	t.Parallel()
	c := memtest.Synth(memtest.SynthOptions{Events: 20_000, Seed: 1})
	if len(c.Events) != 20_000 {
		t.Fatalf("%d events, want 20000", len(c.Events))
	}
	sessions := map[string]memory.Session{}
	for _, s := range c.Sessions {
		sessions[s.ID] = s
	}
	if len(sessions) != 40 {
		t.Errorf("%d sessions, want 40 (one per 500 events)", len(sessions))
	}
	zh := 0
	for i, e := range c.Events {
		s, ok := sessions[e.Session]
		if !ok {
			t.Fatalf("event %d: unknown session %q", i, e.Session)
		}
		if e.Scope != s.Scope || e.Partner == "" || e.Content == "" || memory.ValidateEvent(e) != nil {
			t.Fatalf("event %d: %+v", i, e)
		}
		if i > 0 && !e.Time.After(c.Events[i-1].Time) {
			t.Fatalf("event %d: time %v not after %v", i, e.Time, c.Events[i-1].Time)
		}
		if isChinese(e.Content) {
			zh++
		}
	}
	if share := float64(zh) / float64(len(c.Events)); math.Abs(share-0.3) > 0.02 {
		t.Errorf("Chinese share %.3f, want 0.30 ± 0.02", share)
	}
}

func TestSynthVocabulary(t *testing.T) {
	t.Parallel()
	c := memtest.Synth(memtest.SynthOptions{Events: 10, Seed: 2})
	distinct := map[string]bool{}
	for i, w := range c.Words {
		distinct[w] = true
		if i > 0 && len(w) < len(c.Words[i-1]) {
			t.Fatalf("word %d %q shorter than the one before", i, w)
		}
		if !strings.ContainsAny(w[len(w)-1:], "kpxz") {
			t.Fatalf("word %q does not end in k, p, x or z", w)
		}
	}
	if len(distinct) != 50_000 || len(c.Words) != 50_000 {
		t.Errorf("%d distinct of %d words, want 50000", len(distinct), len(c.Words))
	}
	zh := map[string]bool{}
	for _, w := range c.Chinese {
		if utf8.RuneCountInString(w) != 2 || !isChinese(w) {
			t.Errorf("Chinese word %q is not two Han characters", w)
		}
		zh[w] = true
	}
	if len(zh) < 300 || len(zh) != len(c.Chinese) {
		t.Errorf("%d distinct of %d Chinese words, want ≥ 300 distinct", len(zh), len(c.Chinese))
	}
	if got := len(memtest.Synth(memtest.SynthOptions{Events: 1, Vocab: 1234}).Words); got != 1234 {
		t.Errorf("Vocab 1234: %d words", got)
	}
}

func TestSynthQueries(t *testing.T) {
	t.Parallel()
	// A small vocabulary makes collisions with stored events likely if they were not excluded.
	c := memtest.Synth(memtest.SynthOptions{Events: 5000, Vocab: 40, Seed: 3})
	stored := map[string]bool{}
	for _, e := range c.Events {
		stored[e.Content] = true
	}
	qs := c.Queries(1000, 9)
	zh := 0
	for _, q := range qs {
		if stored[q] {
			t.Fatalf("query %q is an event's content", q)
		}
		n := words(strings.TrimRight(q, "?？"))
		if n < 3 || n > 8 {
			t.Errorf("query %q has %d words, want 3–8", q, n)
		}
		if isChinese(q) {
			zh++
		}
	}
	if share := float64(zh) / float64(len(qs)); math.Abs(share-0.3) > 0.05 {
		t.Errorf("Chinese query share %.3f, want 0.30 ± 0.05", share)
	}
}

func TestSynthLengths(t *testing.T) {
	t.Parallel()
	c := memtest.Synth(memtest.SynthOptions{Events: 20_000, Seed: 4})
	var ls []int
	sum := 0
	for _, e := range c.Events {
		n := words(e.Content)
		if n < 1 || n > 80 {
			t.Fatalf("event of %d words outside the table's 1–80: %q", n, e.Content)
		}
		ls = append(ls, n)
		sum += n
	}
	// The dev split's turns: mean 23.9 words, median 22, 90th percentile 41.
	mean := float64(sum) / float64(len(ls))
	below := func(x int) float64 {
		k := 0
		for _, n := range ls {
			if n <= x {
				k++
			}
		}
		return float64(k) / float64(len(ls))
	}
	if math.Abs(mean-23.9) > 1 {
		t.Errorf("mean length %.1f words, want 23.9 ± 1", mean)
	}
	if f := below(22); f < 0.47 || f > 0.56 {
		t.Errorf("%.2f of events have ≤ 22 words, want about half", f)
	}
	if f := below(41); f < 0.87 || f > 0.93 {
		t.Errorf("%.2f of events have ≤ 41 words, want about 0.9", f)
	}
}
