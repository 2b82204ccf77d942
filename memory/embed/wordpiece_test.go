package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// wordPieceCase is one reference encoding in testdata/wordpiece/cases.json (gen.js writes it
// with Hugging Face's tokenizers).
type wordPieceCase struct {
	Text   string   `json:"text"`
	MaxLen int      `json:"max_len"`
	IDs    []int64  `json:"ids"`
	Tokens []string `json:"tokens"`
}

func loadWordPieceCases(t testing.TB) []wordPieceCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "wordpiece", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []wordPieceCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 50 {
		t.Fatalf("cases.json holds %d cases, want the generated set", len(f.Cases))
	}
	return f.Cases
}

func testWordPiece(t testing.TB) *WordPiece {
	t.Helper()
	w, err := LoadWordPiece(filepath.Join("testdata", "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWordPieceReference checks every reference encoding: the ids of Hugging Face's tokenizers
// for a real BERT vocabulary, over English, accents, Chinese, Japanese, Korean, emoji,
// control characters, added tokens in the text, long words and truncation.
func TestWordPieceReference(t *testing.T) {
	w := testWordPiece(t)
	for _, c := range loadWordPieceCases(t) {
		got := w.Encode(c.Text, c.MaxLen)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q, %d)\n got %v\nwant %v (%v)", c.Text, c.MaxLen, got, c.IDs, c.Tokens)
		}
	}
}

// TestWordPieceVocabTxt builds the same tokenizer from a vocab.txt (the ids in line order,
// written from tokenizer.json) and checks it against the same references.
func TestWordPieceVocabTxt(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		t.Fatal(err)
	}
	toks := make([]string, len(tj.Model.Vocab))
	for tok, id := range tj.Model.Vocab {
		toks[id] = tok
	}
	path := filepath.Join(t.TempDir(), "vocab.txt")
	if err := os.WriteFile(path, []byte(strings.Join(toks, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWordPieceVocab(path, WordPieceOptions{Lowercase: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loadWordPieceCases(t) {
		if got := w.Encode(c.Text, c.MaxLen); !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q, %d)\n got %v\nwant %v", c.Text, c.MaxLen, got, c.IDs)
		}
	}
}

func TestWordPieceTokens(t *testing.T) {
	w := testWordPiece(t)
	tests := []struct {
		text string
		want []string
	}{
		{"unaffable", []string{"una", "##ffa", "##ble"}},
		{"Héllo, 北京!", []string{"hello", ",", "北", "京", "!"}},
		{"x [SEP] y", []string{"x", "[SEP]", "y"}},
		{strings.Repeat("a", 101), []string{"[UNK]"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := w.Tokens(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestWordPieceOptions covers the normaliser settings a vocab.txt model can choose.
func TestWordPieceOptions(t *testing.T) {
	dir := t.TempDir()
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "café", "cafe", "Cafe", "中文", "中", "文", "##s"}
	path := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(path, []byte(strings.Join(vocab, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	no := false
	tests := []struct {
		name string
		opts WordPieceOptions
		text string
		want []int64
	}{
		{"lowercase strips accents", WordPieceOptions{Lowercase: true}, "Café", []int64{2, 6, 3}},
		{"lowercase keeps accents", WordPieceOptions{Lowercase: true, StripAccents: &no}, "Café", []int64{2, 5, 3}},
		{"cased", WordPieceOptions{}, "Cafe", []int64{2, 7, 3}},
		{"cased unknown", WordPieceOptions{}, "CAFE", []int64{2, 1, 3}},
		{"CJK split", WordPieceOptions{}, "中文", []int64{2, 9, 10, 3}},
		{"CJK together", WordPieceOptions{KeepCJKTogether: true}, "中文", []int64{2, 8, 3}},
		{"continuation", WordPieceOptions{Lowercase: true}, "cafes", []int64{2, 6, 11, 3}},
		{"max chars", WordPieceOptions{MaxCharsPerWord: 3}, "cafe", []int64{2, 1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := LoadWordPieceVocab(path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Encode(tt.text, 0); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestWordPieceTruncationKeepsSpecials(t *testing.T) {
	w := testWordPiece(t)
	for _, maxLen := range []int{1, 2, 3} {
		got := w.Encode("hello world again", maxLen)
		want := []int64{101, 7592, 2088, 2153, 102}
		want = append(want[:max(maxLen-2, 0)+1:max(maxLen-2, 0)+1], 102)
		if !slices.Equal(got, want) {
			t.Errorf("Encode(_, %d) = %v, want %v", maxLen, got, want)
		}
	}
	if got := w.PadID(); got != 0 {
		t.Errorf("PadID = %d, want 0 ([PAD])", got)
	}
}

func TestWordPieceBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := os.ReadFile(filepath.Join("testdata", "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	swap := func(old, new string) string {
		if !strings.Contains(string(good), old) {
			t.Fatalf("tokenizer.json lacks %q", old)
		}
		return strings.Replace(string(good), old, new, 1)
	}
	tests := []struct {
		name, content, want string
	}{
		{"not json", "{", "parse tokenizer.json"},
		{"unigram", `{"model":{"type":"Unigram"}}`, `model is "Unigram", want WordPiece`},
		{"empty vocab", `{"model":{"type":"WordPiece","vocab":{}}}`, "empty WordPiece vocabulary"},
		{"no unk", `{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"a":0}}}`, `no unknown token "[UNK]"`},
		{"normalizer", swap(`"type": "BertNormalizer"`, `"type": "NFKC"`), `normalizer "NFKC" is not supported`},
		{"pre-tokenizer", swap(`"type": "BertPreTokenizer"`, `"type": "Metaspace"`), `pre_tokenizer "Metaspace" is not supported`},
		{"post-processor", swap(`"type": "TemplateProcessing"`, `"type": "ByteLevel"`), `post_processor "ByteLevel" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(strings.ReplaceAll(tt.name, " ", "_")+".json", tt.content)
			_, err := LoadWordPiece(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadWordPiece = %v, want an error containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	if _, err := LoadWordPiece(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("LoadWordPiece(missing) succeeded")
	}
	if _, err := LoadWordPieceVocab(write("empty.txt", ""), WordPieceOptions{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty vocab: %v", err)
	}
	if _, err := LoadWordPieceVocab(write("nocls.txt", "[UNK]\n[SEP]\na\n"), WordPieceOptions{}); err == nil || !strings.Contains(err.Error(), "no [CLS]") {
		t.Errorf("vocab without [CLS]: %v", err)
	}
}

// TestWordPieceLargeInput checks that truncation stops the work early: a 4 MB text encodes to
// 512 ids without tokenizing all of it.
func TestWordPieceLargeInput(t *testing.T) {
	w := testWordPiece(t)
	text := strings.Repeat("memory recall 记忆 ", 1<<18)
	ids := w.Encode(text, 512)
	if len(ids) != 512 || ids[0] != 101 || ids[511] != 102 {
		t.Fatalf("len %d, first %d, last %d", len(ids), ids[0], ids[len(ids)-1])
	}
	// The work stops at the limit: normalising the whole text would allocate over 4 MB.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w.Encode(text, 512)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("Encode of a 4 MB text to 512 ids allocated %d bytes: it tokenized past the limit", n)
	}
}

func BenchmarkWordPieceEncode(b *testing.B) {
	w := testWordPiece(b)
	var texts []string
	for _, c := range loadWordPieceCases(b) {
		if c.MaxLen == 0 {
			texts = append(texts, c.Text)
		}
	}
	sort.Strings(texts)
	var bytes int64
	for _, s := range texts {
		bytes += int64(len(s))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			w.Encode(s, 512)
		}
	}
}
