package embed

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// shared is one loaded Tokenizer for the whole test binary (a jieba load costs ≈ 1 s and
// ≈ 130 MB, so tests share it unless they test loading itself).
var shared struct {
	once sync.Once
	tk   *Tokenizer
	err  error
}

// sharedTokenizer returns the shared Tokenizer, loaded through the default resolution. A
// missing dictionary fails the test (CI forbids skips).
func sharedTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	shared.once.Do(func() {
		shared.tk = NewTokenizer(TokenizerOptions{}) // outlives t: no test logger
		shared.err = shared.tk.Load(context.Background())
	})
	if shared.err != nil {
		t.Fatalf("jieba dictionaries are needed by this test and could not be loaded "+
			"(set %s to a copy of them, or run `make jieba-dict` in the checkout): %v", JiebaDirEnv, shared.err)
	}
	return shared.tk
}

func TestTokens(t *testing.T) {
	tk := sharedTokenizer(t)
	tests := []struct {
		name     string
		in       string
		want     []string // exact, when not nil
		contains []string
		excludes []string
	}{
		{name: "empty", in: "", want: []string{}},
		{name: "only separators", in: " \t\n.,;!? -- ", want: []string{}},
		{name: "stemming", in: "running runs ran", want: []string{"run", "run", "ran"}},
		{name: "possessive and acronym", in: "Caroline's LGBTQ support group",
			want: []string{"carolin", "lgbtq", "support", "group"}},
		{name: "stop words and question words",
			in:   "What is the time when you're happy? Where, why, how and which of them did it?",
			want: []string{"time", "happi"}},
		{name: "contraction fragments dropped", in: "I don't know, she'll see, we've won",
			want: []string{"know", "see", "won"}},
		{name: "numbers kept", in: "Meet at 13010 in 2023 with 7 people",
			want: []string{"meet", "13010", "2023", "7", "peopl"}},
		{name: "ids split into parts", in: "see D1:3 and session-42/b7",
			want: []string{"see", "d1", "3", "session", "42", "b7"}},
		{name: "decimals split", in: "pi is 3.14", want: []string{"pi", "3", "14"}},
		{name: "single letters dropped", in: "x y z plan b", want: []string{"plan"}},
		{name: "alphanumerics not stemmed", in: "mp3 covid19 Win10s", want: []string{"mp3", "covid19", "win10s"}},
		{name: "unicode lowercase and diacritics", in: "ÉCOLE Straße naïve Café",
			want: []string{"école", "straße", "naïv", "café"}},
		{name: "fullwidth ascii folded", in: "ＡＢＣ１２３ Ｈｅｌｌｏ", want: []string{"abc123", "hello"}},
		{name: "cyrillic and greek unstemmed", in: "Привет мир ΚΑΛΗΜΕΡΑ", want: []string{"привет", "мир", "καλημερα"}},
		{name: "emoji and symbols dropped", in: "great 😀👍🏽 job ❤️ ©®™ $100 → ok ✓",
			want: []string{"great", "job", "100", "ok"}},
		{name: "controls and NUL separate", in: "abc\x00def\x07ghi\tjkl\u200bmno",
			want: []string{"abc", "def", "ghi", "jkl", "mno"}},
		{name: "invalid utf-8 separates", in: "abc\xffdef\xc3(ghi\xe4\xb8",
			want: []string{"abc", "def", "ghi"}},
		{name: "invalid utf-8 inside Han", in: "北京\xff大学", want: []string{"北京", "大学"}},
		{name: "chinese search mode", in: "我昨天去了北京大学",
			contains: []string{"北京", "大学", "昨天"}, excludes: []string{"了", "我"}},
		{name: "chinese punctuation separates", in: "你好，世界。「北京」！",
			contains: []string{"你好", "世界", "北京"}, excludes: []string{"，", "。", "「", "」", "！"}},
		{name: "mixed han and latin", in: "我在Shanghai见了Tom", want: []string{"shanghai", "见", "tom"}},
		{name: "han with digits", in: "2023年3月5日", want: []string{"2023", "年", "3", "月", "5", "日"}},
		{name: "japanese kana runs", in: "東京に行きます", want: []string{"東京", "行", "きます"}},
		{name: "katakana with prolonged mark", in: "コーヒーを", want: []string{"コーヒーを"}},
		{name: "korean hangul runs", in: "안녕하세요 세계 2024년", want: []string{"안녕하세요", "세계", "2024"}},
		{name: "duplicates kept in order", in: "Tom met Tom, 北京 北京",
			want: []string{"tom", "met", "tom", "北京", "北京"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tk.Tokens(tt.in)
			if err != nil {
				t.Fatalf("Tokens(%q): %v", tt.in, err)
			}
			if tt.want != nil && !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, w := range tt.contains {
				if !slices.Contains(got, w) {
					t.Errorf("Tokens(%q) = %q, want it to contain %q", tt.in, got, w)
				}
			}
			for _, w := range tt.excludes {
				if slices.Contains(got, w) {
					t.Errorf("Tokens(%q) = %q, want no %q", tt.in, got, w)
				}
			}
			checkTokens(t, got)
		})
	}
}

// checkTokens checks the invariants every token satisfies.
func checkTokens(t *testing.T, toks []string) {
	t.Helper()
	for _, tok := range toks {
		if tok == "" || !utf8.ValidString(tok) || strings.ContainsAny(tok, " \x00\t\n") {
			t.Fatalf("bad token %q", tok)
		}
		if strings.ToLower(tok) != tok {
			t.Fatalf("token %q is not lowercase", tok)
		}
	}
}

func TestTokensLargeInput(t *testing.T) {
	tk := sharedTokenizer(t)
	const size = 1 << 20
	repeat := func(unit string) string { return strings.Repeat(unit, size/len(unit)+1) }
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, got []string)
	}{
		{name: "mixed text 1 MB", in: repeat("Caroline went to 北京大学 in 2023 😀, met Tom。 "),
			check: func(t *testing.T, got []string) {
				unit, err := tk.Tokens("Caroline went to 北京大学 in 2023 😀, met Tom。 ")
				if err != nil {
					t.Fatal(err)
				}
				n := size/len("Caroline went to 北京大学 in 2023 😀, met Tom。 ") + 1
				if len(got) != n*len(unit) {
					t.Fatalf("got %d tokens, want %d × %d", len(got), n, len(unit))
				}
				for i := range n {
					if !slices.Equal(got[i*len(unit):(i+1)*len(unit)], unit) {
						t.Fatalf("repeat %d = %q, want %q", i, got[i*len(unit):(i+1)*len(unit)], unit)
					}
				}
			}},
		{name: "one Han run of 1 MB is cut at rune boundaries", in: repeat("我们今天在北京大学见面"),
			check: func(t *testing.T, got []string) {
				if n := strings.Count(strings.Join(got, ""), "北京"); n < size/len("我们今天在北京大学见面")/2 {
					t.Fatalf("only %d 北京 in %d tokens", n, len(got))
				}
			}},
		{name: "one Latin word of 1 MB", in: strings.Repeat("a", size),
			check: func(t *testing.T, got []string) {
				if len(got) != 1 || len(got[0]) != size {
					t.Fatalf("got %d tokens, want one of %d bytes", len(got), size)
				}
			}},
		{name: "random bytes 1 MB", in: randomBytes(size),
			check: func(t *testing.T, got []string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tk.Tokens(tt.in)
			if err != nil {
				t.Fatalf("Tokens: %v", err)
			}
			checkTokens(t, got)
			tt.check(t, got)
		})
	}
}

// randomBytes returns n reproducible pseudo-random bytes, biased towards UTF-8 lead and
// continuation bytes of Han characters so that valid and broken runes both occur.
func randomBytes(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = 0xe4 + byte(r.IntN(6))
		case 1:
			b[i] = 0x80 + byte(r.IntN(64))
		default:
			b[i] = byte(r.IntN(256))
		}
	}
	return string(b)
}

func TestSplitHanRunCutsAtRuneBoundaries(t *testing.T) {
	tk := sharedTokenizer(t)
	tk.mu.RLock()
	seg := tk.seg
	tk.mu.RUnlock()
	// 3-byte runes that do not divide maxHanRun: the cut must back up to a rune start.
	run := strings.Repeat("北", maxHanRun/3+10)
	got := seg.appendTokens(nil, run)
	if n := utf8.RuneCountInString(strings.Join(got, "")); n != utf8.RuneCountInString(run) {
		t.Fatalf("jieba returned %d runes for %d", n, utf8.RuneCountInString(run))
	}
	checkTokens(t, got)
}

func TestStemCache(t *testing.T) {
	// More distinct words than the cache holds: every result must still be the plain stem.
	for i := range 3 * stemShardCap * len(stems.shards) / 2 {
		w := "running" + strconv.Itoa(i%5000) + "groups"[:i%6]
		w = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'a' + r - '0'
			}
			return r
		}, w)
		if got, want := stems.stem([]byte(w)), Stem(w); got != want {
			t.Fatalf("cached stem of %q = %q, want %q", w, got, want)
		}
	}
	for i := range stems.shards {
		sh := &stems.shards[i]
		sh.mu.RLock()
		n := len(sh.m)
		sh.mu.RUnlock()
		if n > stemShardCap {
			t.Fatalf("shard %d holds %d words, cap %d", i, n, stemShardCap)
		}
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		"running": "run", "runs": "run", "ran": "ran", "groups": "group", "grouped": "group",
		"happily": "happili", "generously": "generous", "supporting": "support", "ox": "ox", "": "",
		// Pinned from the former stemmer (github.com/kljensen/snowball, english.Stem(w, true)):
		// stop words stemmed, the Porter2 exception words, non-ASCII letters, case and spaces.
		"was": "was", "this": "this", "having": "have", "news": "news", "skies": "sky",
		"dying": "die", "communism": "communism", "succeeded": "succeed", "herrings": "herring",
		"idly": "idl", "cafés": "café", "naïvely": "naïv", "caresses": "caress", "ponies": "poni",
		"hopeful": "hope", "relational": "relat", "Running": "run", " running ": "run",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := Stem(in); got != want {
				t.Errorf("Stem(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestTokenizerMissingDictionaries(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		opts TokenizerOptions
		// env configures the default resolution when opts.JiebaDir is "".
		env map[string]string
	}{
		{name: "explicit dir without files", opts: TokenizerOptions{JiebaDir: dir}},
		{name: "explicit dir that does not exist", opts: TokenizerOptions{JiebaDir: dir + "/nope"}},
		{name: "nothing found by resolution", env: map[string]string{"HOME": dir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withResolvePlaces(t, dir+"/system", dir)
			tt.opts.Logger = testLogger(t)
			tk := NewTokenizer(tt.opts)
			tk.getenv = func(k string) string { return tt.env[k] }
			tk.executable = func() (string, error) { return "", errors.New("no executable") }
			defer tk.Close()

			got, err := tk.Tokens("Latin text still works")
			if err != nil || !slices.Equal(got, []string{"latin", "text", "still", "work"}) {
				t.Fatalf("Tokens(latin) = %q, %v", got, err)
			}
			if err := tk.Load(canceledContext()); !errors.Is(err, context.Canceled) {
				t.Fatalf("Load(canceled) = %v, want context.Canceled", err)
			}
			_, err1 := tk.Tokens("我在Shanghai见了Tom")
			_, err2 := tk.Tokens("北京")
			err3 := tk.Load(context.Background())
			for i, err := range []error{err1, err2, err3} {
				if !errors.Is(err, ErrJiebaDictNotFound) {
					t.Fatalf("call %d: err = %v, want ErrJiebaDictNotFound", i, err)
				}
				for _, want := range []string{"jieba unavailable", JiebaDirEnv, "make jieba-dict"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("call %d: error %q lacks %q", i, err, want)
					}
				}
			}
			if err1 != err2 || err2 != err3 {
				t.Errorf("the load failure is not remembered: %v / %v / %v", err1, err2, err3)
			}
			if tk.Loaded() {
				t.Error("Loaded() = true after a failed load")
			}
		})
	}
}

func TestTokenizerLazyLoadAndClose(t *testing.T) {
	sharedTokenizer(t) // fails clearly first if the dictionaries are missing
	tk := NewTokenizer(TokenizerOptions{Logger: testLogger(t)})
	defer tk.Close()
	steps := []struct {
		name       string
		do         func() error
		wantLoaded bool
		wantErr    error
	}{
		{name: "new", do: func() error { return nil }},
		{name: "latin text does not load", do: tokens(tk, "hello world 2023")},
		{name: "kana and hangul do not load", do: tokens(tk, "きます 안녕하세요")},
		{name: "han text loads", do: tokens(tk, "北京"), wantLoaded: true},
		{name: "load is idempotent", do: func() error { return tk.Load(context.Background()) }, wantLoaded: true},
		{name: "close", do: func() error { tk.Close(); return nil }},
		{name: "close is idempotent", do: func() error { tk.Close(); return nil }},
		{name: "latin after close", do: tokens(tk, "hello")},
		{name: "han after close", do: tokens(tk, "北京"), wantErr: ErrTokenizerClosed},
		{name: "load after close", do: func() error { return tk.Load(context.Background()) }, wantErr: ErrTokenizerClosed},
	}
	for _, s := range steps {
		if err := s.do(); !errors.Is(err, s.wantErr) || (err == nil) != (s.wantErr == nil) {
			t.Fatalf("%s: err = %v, want %v", s.name, err, s.wantErr)
		}
		if got := tk.Loaded(); got != s.wantLoaded {
			t.Fatalf("%s: Loaded() = %v, want %v", s.name, got, s.wantLoaded)
		}
	}
}

func tokens(tk *Tokenizer, s string) func() error {
	return func() error { _, err := tk.Tokens(s); return err }
}

func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestTokensConcurrent races many goroutines on a fresh Tokenizer, so the lazy load itself
// is raced too, and compares every result with the shared Tokenizer's.
func TestTokensConcurrent(t *testing.T) {
	ref := sharedTokenizer(t)
	inputs := []string{
		"Caroline's LGBTQ support group met on 2023-05-07",
		"我在Shanghai见了Tom，然后去了北京大学",
		"東京に行きます 안녕하세요 😀 running runs ran",
		"北京\xff大学 abc\x00def",
		strings.Repeat("今天天气很好 the weather is fine ", 50),
	}
	want := make([][]string, len(inputs))
	for i, in := range inputs {
		var err error
		if want[i], err = ref.Tokens(in); err != nil {
			t.Fatal(err)
		}
	}
	tk := NewTokenizer(TokenizerOptions{Logger: testLogger(t)})
	defer tk.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				k := (g + i) % len(inputs)
				got, err := tk.Tokens(inputs[k])
				if err != nil {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				if !slices.Equal(got, want[k]) {
					t.Errorf("goroutine %d: Tokens(%q) = %q, want %q", g, inputs[k], got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzTokens checks the token invariants on arbitrary input. The seeds run as a normal test.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "Caroline's group", "我昨天去了北京大学", "北\xe4\xb8", "ＡＢＣ😀\x00", "コーヒー안녕"} {
		f.Add(s)
	}
	tk := sharedTokenizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := tk.Tokens(s)
		if err != nil {
			t.Fatal(err)
		}
		checkTokens(t, got)
	})
}

const benchEnglish = `Caroline said she went to the LGBTQ support group on Tuesday, and it was the most
moving thing she had done in years. Melanie asked what they talked about; Caroline told her about
the transgender stories, the people who were running the meeting, and how accepted she felt.
On 7 May 2023 they planned a camping trip with the kids, painting sunsets and reading books. `

const benchChinese = `我昨天去了北京大学，和老同学在未名湖边散步，聊起这些年的工作和生活。
他说自己去年换了工作，现在在上海做软件开发，每天加班到很晚，但是觉得很充实。
我们约好明年春天一起去杭州看西湖，顺便拜访大学时候的老师。晚上在学校附近的小餐馆吃了饭，
点了北京烤鸭和几个家常菜，一直聊到餐馆关门才回家。`

// BenchmarkTokensEnglish runs without jieba (English never loads it).
func BenchmarkTokensEnglish(b *testing.B) {
	benchmarkTokens(b, NewTokenizer(TokenizerOptions{}), strings.Repeat(benchEnglish, 16))
}

func BenchmarkTokensChinese(b *testing.B) {
	benchmarkTokens(b, sharedTokenizer(b), strings.Repeat(benchChinese, 16))
}

func benchmarkTokens(b *testing.B, tk *Tokenizer, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tk.Tokens(text); err != nil {
			b.Fatal(err)
		}
	}
}
