package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// TestCorrectionsSupersede runs each correction phrasing through a real SQLite store: the
// statement is distilled, then the correction (a later event, its own distillation); the old
// fact must end and the new one (when the phrasing states one) be current.
func TestCorrectionsSupersede(t *testing.T) {
	tests := []struct {
		before, correction string
		old                string // "predicate object" that must end
		new                string // "predicate object" that must be current ("" for a plain negation)
	}{
		// English: moves and single-valued predicates.
		{"I live in Paris.", "Actually I moved to Lisbon.", "lives in Paris", "lives in Lisbon"},
		{"I live in Paris.", "Actually, I live in Lisbon now.", "lives in Paris", "lives in Lisbon"},
		{"I live in Paris.", "I moved from Paris to Lisbon.", "lives in Paris", "lives in Lisbon"},
		{"I live in Paris.", "I don't live in Paris anymore.", "lives in Paris", ""},
		{"I live in Paris.", "I no longer live in Paris.", "lives in Paris", ""},
		{"I work at Google.", "I work at Apple now.", "works at Google", "works at Apple"},
		{"I work at Google.", "I no longer work at Google.", "works at Google", ""},
		{"I work at Google.", "I quit my job at Google.", "works at Google", ""},
		{"I work at Google.", "I left my job at Google last month.", "works at Google", ""},
		{"I'm a nurse.", "Actually I'm a teacher.", "works as nurse", "works as teacher"},
		// English: switches keep the old predicate.
		{"I play cello.", "I switched from cello to viola.", "plays cello", "plays viola"},
		{"I play cello.", "This year I switched from cello to viola.", "plays cello", "plays viola"},
		{"I play cello.", "I've changed from cello to viola.", "plays cello", "plays viola"},
		{"I play tennis.", "I switched from tennis to squash.", "plays tennis", "plays squash"},
		{"I'm learning Spanish.", "I switched from Spanish to Italian.", "studies Spanish", "studies Italian"},
		// English: negations.
		{"I play cello.", "I no longer play cello.", "plays cello", ""},
		{"I play cello.", "I don't play cello anymore.", "plays cello", ""},
		{"I play cello.", "I stopped playing cello.", "plays cello", ""},
		{"I play cello.", "I quit playing cello last year.", "plays cello", ""},
		{"I like sushi.", "I don't like sushi anymore.", "likes sushi", ""},
		{"I like jazz.", "I no longer like jazz.", "likes jazz", ""},
		{"I like coffee.", "I gave up coffee.", "likes coffee", ""},
		{"I'm a vegetarian.", "I'm not a vegetarian anymore.", "is a vegetarian", ""},
		{"I'm a vegetarian.", "I'm no longer a vegetarian.", "is a vegetarian", ""},
		{"I have a car.", "I sold my car.", "owns car", ""},
		// Chinese.
		{"我住在北京。", "我搬到上海了。", "lives in 北京", "lives in 上海"},
		{"我住在北京。", "我从北京搬到了上海。", "lives in 北京", "lives in 上海"},
		{"我住在北京。", "我现在不住在北京了。", "lives in 北京", ""},
		{"我在腾讯工作。", "我已经不在腾讯工作了。", "works at 腾讯", ""},
		{"我喜欢咖啡。", "我现在不喜欢咖啡了。", "likes 咖啡", ""},
		{"我会弹钢琴。", "我不再弹钢琴了。", "plays 钢琴", ""},
		{"我会打篮球。", "我现在不打篮球了。", "plays 篮球", ""},
		{"我会弹大提琴。", "我从大提琴改成中提琴了。", "plays 大提琴", "plays 中提琴"},
		{"我会弹大提琴。", "我把大提琴换成中提琴了。", "plays 大提琴", "plays 中提琴"},
		{"我养了一只狗。", "我不再养狗了。", "owns 狗", ""},
		{"我在学习日语。", "我从日语改成法语了。", "studies 日语", "studies 法语"},
	}
	if len(tests) < 30 {
		t.Fatalf("%d phrasings, want at least 30", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.correction, func(t *testing.T) {
			f := newFixture(t)
			f.session("chat", private)
			d := f.distiller(Options{Idle: time.Hour})
			f.cold(memory.Event{Session: "chat", Time: t0, Content: tt.before})
			f.clock.set(t0.Add(2 * time.Hour))
			if _, err := d.Run(f.ctx, 0); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(f.current(), "owner "+tt.old) {
				t.Fatalf("before the correction: %q lacks owner %s", f.current(), tt.old)
			}
			f.cold(memory.Event{Session: "chat", Time: t0.Add(3 * time.Hour), Content: tt.correction})
			f.clock.set(t0.Add(5 * time.Hour))
			if _, err := d.Run(f.ctx, 0); err != nil {
				t.Fatal(err)
			}
			cur := f.current()
			if slices.Contains(cur, "owner "+tt.old) {
				t.Errorf("after %q: owner %s is still current (%q)", tt.correction, tt.old, cur)
			}
			if tt.new != "" && !slices.Contains(cur, "owner "+tt.new) {
				t.Errorf("after %q: owner %s is not current (%q)", tt.correction, tt.new, cur)
			}
			if !slices.ContainsFunc(f.triples(), func(s string) bool {
				return strings.HasPrefix(s, "owner -"+strings.Replace(tt.old, " ", "-> ", 1)+" ") ||
					strings.HasPrefix(s, "owner -"+predOf(tt.old)+"-> "+objOf(tt.old)+" ")
			}) {
				t.Errorf("the old fact left no history: %q", f.triples())
			}
		})
	}
}

// current renders the current triples as "subject predicate object".
func (f *fixture) current() []string {
	f.t.Helper()
	ts, err := f.s.Triples(f.ctx, memory.TripleQuery{Viewer: memory.OwnerViewer, Limit: 10000})
	if err != nil {
		f.t.Fatalf("triples: %v", err)
	}
	var out []string
	for _, tr := range ts {
		if tr.Current() {
			out = append(out, fmt.Sprintf("%s %s %s", tr.SubjectName, tr.Predicate, tr.ObjectName))
		}
	}
	return out
}

// predOf and objOf split "predicate object" at its last space-separated object (predicates
// have up to three words; the objects of the table have one).
func predOf(po string) string { return po[:strings.LastIndexByte(po, ' ')] }
func objOf(po string) string  { return po[strings.LastIndexByte(po, ' ')+1:] }
