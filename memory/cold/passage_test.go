package cold

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/memtest"
)

func TestSplitSentences(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three?", []string{"One.", " Two!", " Three?"}},
		{"v1.2 is out. Yes", []string{"v1.2 is out.", " Yes"}},
		{"line one\nline two\n\n", []string{"line one\n", "line two\n\n"}},
		{"我喜欢猫。你呢？好的", []string{"我喜欢猫。", "你呢？", "好的"}},
		{"no punctuation at all", []string{"no punctuation at all"}},
		{"", []string{""}},
	}
	for _, tc := range cases {
		var got []string
		for _, sp := range splitSentences(tc.in) {
			got = append(got, tc.in[sp[0]:sp[1]])
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("splitSentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPassages: a long event is recalled as the run of sentences holding the query's terms,
// within the bound; a short one whole.
func TestPassages(t *testing.T) {
	filler := strings.Repeat("The weather was mild and the meeting ran long as usual. ", 30)
	long := filler + "My sister Maya adopted a grey kitten named Pixel. " + filler
	turns := [][2]string{{"Ann", long}, {"Bob", "Maya loves the kitten"}}
	m, _ := fixture(t, turns)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		bound int
	}{{"default bound", DefaultParams().PassageTokens}, {"tight bound", 20}} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			p.PassageTokens = tc.bound
			r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Params: &p})
			if err != nil {
				t.Fatal(err)
			}
			hits, err := r.Recall(ctx, Query{Text: "Maya kitten Pixel", Viewer: memory.Viewer{Owner: true}, K: 5})
			if err != nil || len(hits) != 2 {
				t.Fatalf("hits %v, %v", contents(hits), err)
			}
			for _, h := range hits {
				switch h.Event.Content {
				case long:
					if !strings.Contains(h.Passage, "adopted a grey kitten named Pixel") || !strings.HasPrefix(h.Passage, "… ") || !strings.HasSuffix(h.Passage, " …") {
						t.Errorf("passage %q", h.Passage)
					}
					if h.PassageTokens > tc.bound || h.Tokens() != h.PassageTokens || h.Text() != h.Passage || h.PassageTokens >= eventTokens(h.Event.Tokens, long)/4 {
						t.Errorf("passage tokens %d (bound %d, event %d)", h.PassageTokens, tc.bound, eventTokens(h.Event.Tokens, long))
					}
				default:
					if h.Passage != "" || h.Text() != h.Event.Content {
						t.Errorf("a short event got a passage %q", h.Passage)
					}
				}
			}
		})
	}
	p := DefaultParams()
	p.PassageTokens = 0
	r, _ := New(Options{Index: m, Tokens: memory.DefaultTokenize, Params: &p})
	hits, err := r.Recall(ctx, Query{Text: "Pixel", Viewer: memory.Viewer{Owner: true}})
	if err != nil || len(hits) == 0 || hits[0].Passage != "" || hits[0].Text() != long {
		t.Errorf("passage_tokens 0 must recall whole events: %v %v", hits, err)
	}
}

// TestCoherence: an episode that covers more of the question's terms outranks a single turn
// that repeats two of them, and only with coherence on.
func TestCoherence(t *testing.T) {
	ctx := context.Background()
	m := memtest.NewMem(nil)
	if _, err := m.CreateSession(ctx, memory.Session{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var evs []memory.Event
	add := func(at time.Time, text string) {
		evs = append(evs, memory.Event{Session: "chat", Role: memory.RoleUser, Content: text, Time: at})
	}
	// Episode one (a day): a turn repeating "garden" and "roses".
	add(day, "garden roses garden roses in the garden with roses")
	add(day.Add(time.Minute), "nothing else that day")
	// Episode two (a week later): the garden, the roses, the fence and the budget, one a turn.
	wk := day.Add(7 * 24 * time.Hour)
	add(wk, "we planned the garden")
	add(wk.Add(time.Minute), "roses along the fence")
	add(wk.Add(2*time.Minute), "the fence needs paint")
	add(wk.Add(3*time.Minute), "a budget for paint")
	// Unrelated filler, so the question's words are rare.
	for i := 0; i < 20; i++ {
		add(day.Add(time.Duration(48+i)*time.Hour), "the weather report for today")
	}
	if _, err := m.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	q := Query{Text: "garden roses fence budget paint", Viewer: memory.Viewer{Owner: true}, K: 10}
	// ratio is the score of the covering episode's "roses along the fence" over the repeating
	// turn's, with coherence set to coh.
	ratio := func(coh float64) (float64, []Hit) {
		p := DefaultParams()
		p.Coherence = coh
		r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Params: &p})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := r.Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var rep, cov float64
		for _, h := range hits {
			switch h.Event.Content {
			case evs[0].Content:
				rep = h.Score
			case "roses along the fence":
				cov = h.Score
			}
		}
		if rep == 0 || cov == 0 {
			t.Fatalf("fixture: both turns should be recalled: %v", contents(hits))
		}
		return cov / rep, hits
	}
	off, _ := ratio(0)
	on, hits := ratio(DefaultParams().Coherence)
	if on <= off*1.2 {
		t.Errorf("coherence should favour the covering episode: ratio %.3f with it, %.3f without", on, off)
	}
	for _, h := range hits {
		if !strings.Contains(h.Reason, "episode covers") {
			t.Errorf("%q: reason %q names no coverage", h.Event.Content, h.Reason)
		}
	}
}

// TestEpisodes: the episode-document step lifts the turns of the stretch of conversation that
// holds most of a long query, weighs by the query's length, and is off at 0.
func TestEpisodes(t *testing.T) {
	ctx := context.Background()
	m := memtest.NewMem(nil)
	if _, err := m.CreateSession(ctx, memory.Session{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var evs []memory.Event
	add := func(at time.Time, text string) {
		evs = append(evs, memory.Event{Session: "chat", Role: memory.RoleUser, Content: text, Time: at})
	}
	add(day, "garden roses garden roses in the garden with roses")
	add(day.Add(time.Minute), "nothing else that day")
	wk := day.Add(7 * 24 * time.Hour)
	add(wk, "we planned the garden")
	add(wk.Add(time.Minute), "roses along the fence")
	add(wk.Add(2*time.Minute), "the fence needs paint")
	add(wk.Add(3*time.Minute), "a budget for paint")
	for i := 0; i < 20; i++ {
		add(day.Add(time.Duration(48+i)*time.Hour), "the weather report for today")
	}
	if _, err := m.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	q := Query{Text: "garden roses fence budget paint", Viewer: memory.Viewer{Owner: true}, K: 10}
	run := func(weight float64, terms int) map[string]Hit {
		p := DefaultParams()
		p.Coherence = 0
		p.Episode, p.EpisodeTerms = weight, terms
		r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Params: &p})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := r.Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Hit{}
		for _, h := range hits {
			out[h.Event.Content] = h
		}
		return out
	}
	ratio := func(hs map[string]Hit) float64 {
		rep, cov := hs[evs[0].Content], hs["roses along the fence"]
		if rep.Score == 0 || cov.Score == 0 {
			t.Fatalf("fixture: both turns should be recalled: %v", hs)
		}
		return cov.Score / rep.Score
	}
	off := run(0, 1)
	for _, h := range off {
		if strings.Contains(h.Reason, "episode ") {
			t.Errorf("episode 0: %q has reason %q", h.Event.Content, h.Reason)
		}
	}
	long, short := run(2, 1), run(2, 50) // 5 query terms: the whole weight, or a tenth of it
	if !(ratio(long) > ratio(short) && ratio(short) > ratio(off)) {
		t.Errorf("episode weight should grow with the query's length: ratios off %.3f, short %.3f, long %.3f", ratio(off), ratio(short), ratio(long))
	}
	if !strings.Contains(long["roses along the fence"].Reason, "episode ") {
		t.Errorf("reason %q names no episode", long["roses along the fence"].Reason)
	}
}

// TestRecency: with the same words, the more recent conversation ranks first when recency is
// on; off, the two tie and the older (lower id) comes first.
func TestRecency(t *testing.T) {
	ctx := context.Background()
	m := memtest.NewMem(nil)
	if _, err := m.CreateSession(ctx, memory.Session{ID: "chat"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC)
	var evs []memory.Event
	for _, ago := range []int{60, 2} {
		at := now.Add(-time.Duration(ago) * 24 * time.Hour)
		evs = append(evs,
			memory.Event{Session: "chat", Role: memory.RoleUser, Content: fmt.Sprintf("violin lesson plan with my teacher (%d)", ago), Time: at},
			memory.Event{Session: "chat", Role: memory.RoleAssistant, Content: "practise scales daily", Time: at.Add(time.Minute)})
	}
	if _, err := m.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		recency float64
		first   string
	}{{0, "violin lesson plan with my teacher (60)"}, {1, "violin lesson plan with my teacher (2)"}} {
		p := DefaultParams()
		p.Recency = tt.recency
		r, err := New(Options{Index: m, Tokens: memory.DefaultTokenize, Params: &p})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := r.Recall(ctx, Query{Text: "my violin lesson plan with the teacher", Viewer: memory.OwnerViewer, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].Event.Content != tt.first {
			t.Errorf("recency %g: hits %q, want %q first", tt.recency, contents(hits), tt.first)
		}
	}
}
