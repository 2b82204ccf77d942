package window

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

var testVocab = NewVocab()

func ev(id int64, role memory.Role, content string, tokens int) Candidate {
	return Candidate{Event: memory.Event{ID: id, Role: role, Content: content, Tokens: tokens}, Terms: testVocab.Intern(strings.Fields(content))}
}

func compute(cands []Candidate, query []string, cfg Config, recalled map[int64]bool) Result {
	return Compute(cands, testVocab.Lookup(query), testVocab.Size(), cfg, recalled)
}

func ids(cands []Candidate, items []Item) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, cands[it.Index].Event.ID)
	}
	return out
}

func TestComputePinsScoresAndSinks(t *testing.T) {
	cands := []Candidate{
		ev(1, memory.RoleUser, "my dog is called rex", 10),
		ev(2, memory.RoleAssistant, "nice name", 10),
		ev(3, memory.RoleUser, "the weather is grey", 10),
		ev(4, memory.RoleAssistant, "sorry to hear", 10),
		ev(5, memory.RoleUser, "paris trip next week", 10),
		ev(6, memory.RoleAssistant, "sounds fun", 10),
	}
	// 5 and 6 pinned, 1 relevant, then 4 (the newest left) fills the last 10 tokens.
	res := compute(cands, []string{"dog", "rex"}, Config{Budget: 40, Recent: 2}, nil)
	kept := ids(cands, res.Items)
	if fmt.Sprint(kept) != "[1 4 5 6]" || res.Pinned != 2 || res.Filled != 1 || res.Used != 40 {
		t.Fatalf("kept %v pinned %d filled %d used %d", kept, res.Pinned, res.Filled, res.Used)
	}
	if res.Items[0].Source != SourceScored || res.Items[0].Score <= 0 || res.Items[0].Reason == "" || res.Items[2].Source != SourcePinned {
		t.Fatalf("items %+v", res.Items)
	}
	if it := res.Items[1]; it.Source != SourcePinned || it.Reason != "earlier in the conversation" {
		t.Fatalf("filled item %+v", it)
	}
	var sunk []int64
	for _, i := range res.Sunk {
		sunk = append(sunk, cands[i].Event.ID)
	}
	if fmt.Sprint(sunk) != "[2 3]" {
		t.Fatalf("sunk %v", sunk)
	}
}

// chosen is ids for the items kept as recent or relevant, not those filling the budget.
func chosen(cands []Candidate, items []Item) []int64 {
	var out []int64
	for _, it := range items {
		if it.Reason != "earlier in the conversation" {
			out = append(out, cands[it.Index].Event.ID)
		}
	}
	return out
}

// TestWindowFillsItsBudget: once the recent and the relevant turns are in, the turns before
// them fill what the budget holds, newest first, passing over one too large to fit, within
// MaxItems; an input that matches nothing still gets the conversation it continues.
func TestWindowFillsItsBudget(t *testing.T) {
	var cands []Candidate
	for i := int64(1); i <= 40; i++ {
		tok := 10
		if i == 30 {
			tok = 500 // a pasted document
		}
		cands = append(cands, ev(i, memory.RoleUser, fmt.Sprintf("turn%d words", i), tok))
	}
	for _, tc := range []struct {
		name        string
		cfg         Config
		input       []string
		kept, sunk  int
		used        int
		hasID, noID int64
	}{
		// 39 × 10 + 500 tokens fit 8,000: nothing sinks.
		{"everything fits", Config{Budget: 8000, Recent: 12}, []string{"nothing"}, 40, 0, 890, 1, 0},
		// The 39 turns of 10 tokens take the whole 390; turn 30 (500) is passed over.
		{"a large turn is passed over", Config{Budget: 390, Recent: 5}, []string{"nothing"}, 39, 1, 390, 1, 30},
		{"the budget stops the fill, newest first", Config{Budget: 100, Recent: 5}, []string{"nothing"}, 10, 30, 100, 31, 29},
		{"MaxItems caps it", Config{Budget: 8000, Recent: 5, MaxItems: 8}, []string{"nothing"}, 8, 32, 80, 33, 32},
		{"a relevant old turn comes before the fill", Config{Budget: 100, Recent: 5}, []string{"turn2"}, 10, 30, 100, 2, 31},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(cands, tc.input, tc.cfg, nil)
			got := map[int64]bool{}
			for _, id := range ids(cands, res.Items) {
				got[id] = true
			}
			if len(res.Items) != tc.kept || len(res.Sunk) != tc.sunk || res.Used != tc.used || !got[tc.hasID] || got[tc.noID] {
				t.Fatalf("kept %d sunk %d used %d (want %d/%d/%d), ids %v", len(res.Items), len(res.Sunk), res.Used, tc.kept, tc.sunk, tc.used, ids(cands, res.Items))
			}
		})
	}
}

func TestPinnedCountFollowsBudgetOverMeanTokens(t *testing.T) {
	var cands []Candidate
	for i := int64(1); i <= 10; i++ {
		cands = append(cands, ev(i, memory.RoleUser, "x", 100))
	}
	// N = min(configured 8, budget 300 / mean 100 = 3).
	if res := compute(cands, nil, Config{Budget: 300, Recent: 8}, nil); res.Pinned != 3 || len(res.Sunk) != 7 {
		t.Fatalf("pinned %d sunk %d", res.Pinned, len(res.Sunk))
	}
}

func TestToolCallsStayWithTheirResults(t *testing.T) {
	call := Candidate{Event: memory.Event{ID: 2, Role: memory.RoleAssistant, Tokens: 10,
		ToolCalls: []memory.ToolCall{{ID: "a", Name: "t"}, {ID: "b", Name: "t"}}}}
	cands := []Candidate{
		ev(1, memory.RoleUser, "alpha question", 10),
		call,
		{Event: memory.Event{ID: 3, Role: memory.RoleTool, ToolCallID: "a", Content: "alpha result", Tokens: 10}, Terms: testVocab.Intern([]string{"alpha", "result"})},
		{Event: memory.Event{ID: 4, Role: memory.RoleTool, ToolCallID: "b", Content: "beta", Tokens: 10}, Terms: testVocab.Intern([]string{"beta"})},
		ev(5, memory.RoleAssistant, "done", 10),
		ev(6, memory.RoleUser, "unrelated", 10),
	}
	for _, budget := range []int{20, 30, 40, 50, 60} {
		res := compute(cands, []string{"alpha"}, Config{Budget: budget, Recent: 1}, nil)
		in := map[int64]bool{}
		for _, id := range ids(cands, res.Items) {
			in[id] = true
		}
		if in[2] != in[3] || in[3] != in[4] {
			t.Fatalf("budget %d split the tool unit: %v", budget, in)
		}
		if res.Used > budget {
			t.Fatalf("budget %d exceeded: %d", budget, res.Used)
		}
	}
}

func TestRecalledSource(t *testing.T) {
	cands := []Candidate{ev(1, memory.RoleUser, "rex the dog", 10), ev(2, memory.RoleUser, "later", 10)}
	res := compute(cands, []string{"rex"}, Config{Budget: 100, Recent: 1}, map[int64]bool{1: true})
	if res.Items[0].Source != SourceRecalled {
		t.Fatalf("%+v", res.Items[0])
	}
}

// BenchmarkScore10k: the target is L1 scoring of 10,000 candidates ≤ 2 ms.
func BenchmarkScore10k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 50000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	v := NewVocab()
	vocab := v.Intern(words)
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))
	cands := make([]Candidate, 10000)
	for i := range cands {
		n := 8 + rng.IntN(32)
		terms := make([]uint32, n)
		for j := range terms {
			terms[j] = vocab[zipf.Uint64()]
		}
		cands[i] = Candidate{Event: memory.Event{ID: int64(i + 1), Tokens: n}, Terms: terms}
	}
	query := []uint32{vocab[5], vocab[50], vocab[500], vocab[5000], vocab[20000], vocab[3]}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Compute(cands, query, v.Size(), Config{Budget: 8000, Recent: 12}, nil)
	}
}

func TestMaxItemsCapsTheWindow(t *testing.T) {
	var cands []Candidate
	for i := int64(1); i <= 50; i++ {
		cands = append(cands, ev(i, memory.RoleUser, "same words here", 1))
	}
	res := compute(cands, []string{"same"}, Config{Budget: 10000, Recent: 3, MaxItems: 10}, nil)
	if len(res.Items) != 10 || res.Pinned != 3 || len(res.Sunk) != 40 {
		t.Fatalf("items %d pinned %d sunk %d", len(res.Items), res.Pinned, len(res.Sunk))
	}
	if res := compute(cands, []string{"same"}, Config{Budget: 10000, Recent: 3}, nil); len(res.Items) != 50 {
		t.Fatalf("no cap: %d items", len(res.Items))
	}
}
