package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unigramCase is one reference encoding in testdata/unigram/cases.json (gen.py writes it with
// SentencePiece itself, from the models it trains there).
type unigramCase struct {
	Model      string   `json:"model"`
	Text       string   `json:"text"`
	IDs        []int64  `json:"ids"`
	Pieces     []string `json:"pieces"`
	BosEosIDs  []int64  `json:"bos_eos_ids"`
	FairseqIDs []int64  `json:"fairseq_ids"`
}

func loadUnigramCases(t testing.TB) []unigramCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "unigram", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []unigramCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 30 {
		t.Fatalf("cases.json holds %d cases, want the generated set", len(f.Cases))
	}
	return f.Cases
}

func loadTestUnigram(t testing.TB, model string, opts SentencePieceOptions) *Unigram {
	t.Helper()
	u, err := LoadSentencePiece(filepath.Join("testdata", "unigram", model+".model"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestUnigramReference checks every reference encoding of the three trained models (nmt_nfkc
// with byte fallback; case folding with unknown runs, user-defined symbols and no dummy prefix
// or whitespace cleanup; identity), over English, Chinese, mixed text, emoji, full-width and
// compatibility characters, control characters and whitespace.
func TestUnigramReference(t *testing.T) {
	models := map[string][3]*Unigram{}
	for _, name := range []string{"nfkc", "cf", "identity"} {
		models[name] = [3]*Unigram{
			loadTestUnigram(t, name, SentencePieceOptions{}),
			loadTestUnigram(t, name, SentencePieceOptions{AddBOS: true, AddEOS: true}),
			loadTestUnigram(t, name, SentencePieceOptions{Fairseq: true}),
		}
	}
	for _, c := range loadUnigramCases(t) {
		m, ok := models[c.Model]
		if !ok {
			t.Fatalf("case for unknown model %q", c.Model)
		}
		if got := m[0].Encode(c.Text, 0); !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("%s: Encode(%q)\n got %v\nwant %v", c.Model, c.Text, got, c.IDs)
		}
		if got := m[0].Pieces(c.Text); !slices.Equal(got, c.Pieces) {
			t.Errorf("%s: Pieces(%q)\n got %q\nwant %q", c.Model, c.Text, got, c.Pieces)
		}
		if got := m[1].Encode(c.Text, 0); !slices.Equal(got, c.BosEosIDs) {
			t.Errorf("%s: Encode(%q) with <s> </s>\n got %v\nwant %v", c.Model, c.Text, got, c.BosEosIDs)
		}
		if c.FairseqIDs != nil {
			want := append(append([]int64{0}, c.FairseqIDs...), 2)
			if got := m[2].Encode(c.Text, 0); !slices.Equal(got, want) {
				t.Errorf("%s: fairseq Encode(%q)\n got %v\nwant %v", c.Model, c.Text, got, want)
			}
		}
	}
}

// TestUnigramTruncation checks that a truncated encoding is the start of the full one with the
// special tokens kept, for every reference text and several limits.
func TestUnigramTruncation(t *testing.T) {
	u := loadTestUnigram(t, "nfkc", SentencePieceOptions{Fairseq: true})
	if !u.chunked {
		t.Fatal("the nfkc model should allow chunked encoding")
	}
	for _, c := range loadUnigramCases(t) {
		if c.Model != "nfkc" {
			continue
		}
		full := u.Encode(c.Text, 0)
		for _, maxLen := range []int{1, 2, 3, 5, 16, 512} {
			got := u.Encode(c.Text, maxLen)
			n := min(max(maxLen-2, 0), len(full)-2)
			want := append(append([]int64{0}, full[1:1+n]...), 2)
			if !slices.Equal(got, want) {
				t.Errorf("Encode(%q, %d)\n got %v\nwant %v", c.Text, maxLen, got, want)
			}
		}
	}
	long := strings.Repeat("长文本 long input ", 1<<16)
	if ids := u.Encode(long, 512); len(ids) != 512 || ids[511] != 2 {
		t.Errorf("long input: %d ids, last %d", len(ids), ids[len(ids)-1])
	}
	if got := u.PadID(); got != 1 {
		t.Errorf("fairseq PadID = %d, want 1", got)
	}
}

func TestUnigramNormalizer(t *testing.T) {
	u := loadTestUnigram(t, "nfkc", SentencePieceOptions{})
	tests := []struct{ in, want string }{
		{"", ""},
		{"  a  b  ", "▁a▁b"},
		{"ＡＢＣ１２３", "▁ABC123"},
		{"ﬁ ① ㍿", "▁fi▁1▁株式会社"},
		{"a\tb\nc", "▁a▁b▁c"},
		{"bad\xffbyte", "▁bad\uFFFDbyte"},
	}
	for _, tt := range tests {
		if got := u.norm.normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A malformed byte is one unknown character: byte fallback spells U+FFFD's bytes.
	ids := u.Encode("\xff", 0)
	want := []int64{int64(u.pieces["▁"]), int64(u.bytePieces[0xEF]), int64(u.bytePieces[0xBF]), int64(u.bytePieces[0xBD])}
	if !slices.Equal(ids, want) {
		t.Errorf("Encode(0xff) = %v, want %v", ids, want)
	}
}

func TestUnigramBadInput(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "unigram", "nfkc.model"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		opts SentencePieceOptions
		want string
	}{
		{"empty", nil, SentencePieceOptions{}, "no pieces"},
		{"not protobuf", []byte("\xff\xff\xff"), SentencePieceOptions{}, "not a sentencepiece model"},
		{"json", []byte(`{"model":{"type":"Unigram"}}`), SentencePieceOptions{}, "not a sentencepiece model"},
		{"truncated", good[:len(good)/2], SentencePieceOptions{}, "not a sentencepiece model"},
		{"bpe", append(slices.Clone(good), 0x12, 0x02, 0x18, 0x02), SentencePieceOptions{}, "BPE"},
		{"fairseq and bos", good, SentencePieceOptions{Fairseq: true, AddBOS: true}, "AddBOS/AddEOS with Fairseq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSentencePiece(tt.data, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseSentencePiece = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// A model without <s>: AddBOS is an error naming it.
	noBOS := append(slices.Clone(good), 0x12, 0x03, 0xc8, 0x02, 0x7f) // trainer_spec.bos_id = 127 (a normal piece)
	if _, err := ParseSentencePiece(noBOS, SentencePieceOptions{AddBOS: true}); err == nil || !strings.Contains(err.Error(), "AddBOS") {
		t.Errorf("AddBOS without <s>: %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.model")
	if err := os.WriteFile(path, []byte("\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSentencePiece(path, SentencePieceOptions{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadSentencePiece(bad) = %v, want an error naming the file", err)
	}
}

func BenchmarkUnigramEncode(b *testing.B) {
	u := loadTestUnigram(b, "nfkc", SentencePieceOptions{Fairseq: true})
	var texts []string
	var n int64
	for _, c := range loadUnigramCases(b) {
		if c.Model == "nfkc" {
			texts = append(texts, c.Text)
			n += int64(len(c.Text))
		}
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			u.Encode(s, 512)
		}
	}
}
