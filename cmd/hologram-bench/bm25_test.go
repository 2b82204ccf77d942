package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonBaseline is the script the Go port reproduces (the project's shared tools, beside the
// repository).
const pythonBaseline = "../../../shared/tools/bm25_locomo.py"

func TestBM25Tokens(t *testing.T) {
	cases := []struct{ in, want string }{
		{"The cat sat on the mat", "cat sat mat"},
		{"I'm 25, it's May!", "m 25"},
		{"我喜欢猫", "我喜 喜欢 欢猫"},
		{"猫 and 狗狗", "猫 狗狗"},
		{"Ünïcode WORDS", "n code words"},
	}
	for _, tc := range cases {
		if got := strings.Join(bm25Tokens(tc.in), " "); got != tc.want {
			t.Errorf("bm25Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBM25MatchesPython runs ../shared/tools/bm25_locomo.py and the Go port on the same small
// LoCoMo-format file and compares every figure the script prints.
func TestBM25MatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if _, serr := os.Stat(pythonBaseline); err != nil || serr != nil {
		if os.Getenv("HOLOGRAM_CI") != "" {
			t.Fatalf("python3 (%v) or %s (%v) missing", err, pythonBaseline, serr)
		}
		t.Skipf("python3 (%v) or %s (%v) missing", err, pythonBaseline, serr)
	}
	file := filepath.Join(t.TempDir(), "tiny.json")
	writeTinyLocomo(t, file)
	out, err := exec.Command(py, pythonBaseline, file).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	want := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.HasPrefix(f[2], "n=") {
			want[f[0]] = line
		}
	}
	if len(want) < 3 {
		t.Fatalf("the script printed too few rows:\n%s", out)
	}
	set, err := loadLocomo(file)
	if err != nil {
		t.Fatal(err)
	}
	r := newSetResult(set)
	for _, c := range set.Corpora {
		base := newBM25()
		for _, d := range c.Steps[0].Docs {
			base.add(d[0], d[1])
		}
		for _, q := range c.Steps[1].Queries {
			var rel []string
			for _, u := range q.Relevant {
				if strings.Contains(" "+strings.Join(base.units, " ")+" ", " "+u+" ") {
					rel = append(rel, u)
				}
			}
			if len(rel) == 0 {
				continue
			}
			for _, cat := range q.Cats {
				r.n[cat]++
			}
			var units []string
			for _, i := range base.rank(q.Text) {
				units = append(units, base.units[i])
			}
			score(r.baseAny, r.baseAll, q.Cats, distinct(rel), units)
		}
	}
	names := map[string]string{"1": "1 multi-hop", "2": "2 temporal", "3": "3 open-domain", "4": "4 single-hop", "5": "5 adversarial", "1-4": "cats 1-4"}
	for cat, name := range names {
		n := r.n[cat]
		if n == 0 {
			continue
		}
		line := fmt.Sprintf("%-14s n=%4d ", name, n)
		var parts []string
		for _, k := range benchKs {
			parts = append(parts, fmt.Sprintf("any@%d=%5.1f all@%d=%5.1f", k, 100*float64(r.baseAny[cat][k])/float64(n), k, 100*float64(r.baseAll[cat][k])/float64(n)))
		}
		line += strings.Join(parts, " ")
		if w := want[strings.Fields(name)[0]]; w != line {
			t.Errorf("category %s:\n go     %q\n python %q", cat, line, w)
		}
		delete(want, strings.Fields(name)[0])
	}
	if len(want) > 0 {
		t.Errorf("rows only the script printed: %v", want)
	}
}

// writeTinyLocomo writes two conversations whose questions share words with several turns, so
// that ranks, ties and the k cut-offs all matter.
func writeTinyLocomo(t *testing.T, file string) {
	t.Helper()
	words := strings.Fields("dog cat paint garden hiking camping guitar piano cooking bread river mountain library museum concert festival 猫咪 花园 音乐 旅行")
	type turn struct {
		Speaker, DiaID, Text string
		Caption              string `json:"blip_caption,omitempty"`
	}
	var samples []map[string]any
	for c := 0; c < 2; c++ {
		conv := map[string]any{"speaker_a": "Ann", "speaker_b": "Bo"}
		var qa []map[string]any
		for s := 1; s <= 3; s++ {
			conv[fmt.Sprintf("session_%d_date_time", s)] = fmt.Sprintf("1:56 pm on %d May, 2023", s+c)
			var turns []map[string]any
			for j := 1; j <= 25; j++ {
				w1, w2 := words[(s*7+j*3+c)%len(words)], words[(j*j+s+c)%len(words)]
				tr := map[string]any{"speaker": []string{"Ann", "Bo"}[j%2], "dia_id": fmt.Sprintf("D%d:%d", s, j),
					"text": fmt.Sprintf("I went to the %s and saw a %s with the %s", w1, w2, w1)}
				if j%9 == 0 {
					tr["blip_caption"] = "a photo of a " + w2
				}
				turns = append(turns, tr)
			}
			conv[fmt.Sprintf("session_%d", s)] = turns
		}
		for i := 0; i < 30; i++ {
			w1, w2 := words[(i*5+c)%len(words)], words[(i*11+3)%len(words)]
			ev := []string{fmt.Sprintf("D%d:%d", 1+i%3, 1+(i*7)%25)}
			if i%3 == 0 {
				ev = append(ev, fmt.Sprintf("D%d:%d", 1+(i+1)%3, 1+(i*5)%25), "D:9:99")
			}
			qa = append(qa, map[string]any{"question": fmt.Sprintf("When did Ann see the %s near the %s?", w1, w2), "evidence": ev, "category": 1 + i%5})
		}
		samples = append(samples, map[string]any{"sample_id": fmt.Sprintf("conv-%d", c), "conversation": conv, "qa": qa})
	}
	b, err := json.Marshal(samples)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
