package embed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
)

// TextTokenizer turns text into the input ids of a text model. [WordPiece] (BERT-like models:
// bge-small-zh, Chinese-CLIP's text tower) and [Unigram] (SentencePiece models: multilingual-e5)
// implement it. Implementations are safe for concurrent use once built.
type TextTokenizer interface {
	// Encode returns the ids of text with the model's special tokens (e.g. [CLS] … [SEP]),
	// keeping at most maxLen ids in all: the text's own ids are cut from the right so that the
	// special tokens always fit. maxLen ≤ 0 means no limit.
	Encode(text string, maxLen int) []int64
	// PadID is the id that pads the shorter texts of a batch (masked out by the attention mask).
	PadID() int64
}

// WordPiece is the BERT tokenizer of Hugging Face's tokenizers library: the BertNormalizer
// (control characters dropped, whitespace unified, CJK ideographs split off, optional accent
// stripping and lowercasing), the BertPreTokenizer (split on whitespace and punctuation) and
// the WordPiece model (greedy longest-match-first with a continuation prefix, "##"; a word
// with no match, or longer than the per-word limit, becomes the unknown token). Added tokens
// such as [SEP] in the text are matched before normalisation, as the reference does.
//
// Build one with [LoadWordPiece] (a tokenizer.json) or [LoadWordPieceVocab] (a vocab.txt).
// A WordPiece is immutable and safe for concurrent use.
type WordPiece struct {
	vocab map[string]int32
	// cont holds the continuation pieces without their prefix ("##ing" under "ing"), so the
	// greedy match looks up slices of the word without building strings.
	cont map[string]int32

	unk             int32
	pad             int32
	maxCharsPerWord int

	cleanText, handleCJK, stripAccents, lowercase bool

	// prefix and suffix are the post-processor's special ids around the text.
	prefix, suffix []int64
	added          []addedToken
}

// addedToken is an entry of tokenizer.json's added_tokens, matched in the text as a whole.
type addedToken struct {
	content    string
	id         int32
	singleWord bool
	lstrip     bool
	rstrip     bool
	normalized bool
}

// WordPieceOptions configures [LoadWordPieceVocab], which has no tokenizer.json to read the
// settings from (take them from the model's tokenizer_config.json).
type WordPieceOptions struct {
	// Lowercase lowercases the text (do_lower_case; true for bge-small-zh and BERT uncased).
	Lowercase bool
	// StripAccents removes combining marks after NFD; nil follows Lowercase, as BERT does.
	StripAccents *bool
	// KeepCJKTogether disables the splitting of CJK ideographs into single-character words
	// (tokenize_chinese_chars = false). The default, false, splits them like BERT.
	KeepCJKTogether bool
	// MaxCharsPerWord is the longest word (in characters) that is split into pieces; a longer
	// word becomes [UNK]. 0 means 100, BERT's value.
	MaxCharsPerWord int
}

// tokenizerJSON is the part of a Hugging Face tokenizer.json that the tokenizers here read.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type                    string           `json:"type"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
		Vocab                   map[string]int32 `json:"vocab"`
	} `json:"model"`
}

// LoadWordPiece reads a Hugging Face tokenizer.json whose model is WordPiece (BERT, bge,
// Chinese-CLIP). Normalizer, pre-tokenizer and post-processor must be the BERT ones (or absent);
// anything else is an error naming it, never a silent approximation.
func LoadWordPiece(path string) (*WordPiece, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embed: read tokenizer: %w", err)
	}
	w, err := ParseWordPiece(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return w, nil
}

// ParseWordPiece is [LoadWordPiece] on the file's contents.
func ParseWordPiece(data []byte) (*WordPiece, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("embed: parse tokenizer.json: %w", err)
	}
	if tj.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("embed: tokenizer.json model is %q, want WordPiece", tj.Model.Type)
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, errors.New("embed: tokenizer.json has an empty WordPiece vocabulary")
	}
	prefix := "##"
	if tj.Model.ContinuingSubwordPrefix != nil {
		prefix = *tj.Model.ContinuingSubwordPrefix
	}
	w, err := newWordPiece(tj.Model.Vocab, prefix, tj.Model.UnkToken, tj.Model.MaxInputCharsPerWord)
	if err != nil {
		return nil, err
	}
	if err := w.setNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if err := checkBertPreTokenizer(tj.PreTokenizer); err != nil {
		return nil, err
	}
	if w.prefix, w.suffix, err = parsePostProcessor(tj.PostProcessor, tj.Model.Vocab); err != nil {
		return nil, err
	}
	for _, a := range tj.AddedTokens {
		if a.Content == "" {
			return nil, fmt.Errorf("embed: tokenizer.json: added token %d is empty", a.ID)
		}
		w.added = append(w.added, addedToken{content: a.Content, id: a.ID, singleWord: a.SingleWord,
			lstrip: a.LStrip, rstrip: a.RStrip, normalized: a.Normalized && !a.Special})
	}
	sortAdded(w.added)
	if id, ok := w.vocab["[PAD]"]; ok {
		w.pad = id
	}
	return w, nil
}

// LoadWordPieceVocab reads a BERT vocab.txt (one token per line, the line number is the id)
// and builds the BERT tokenizer around it: [CLS] text [SEP], [UNK] for unknown words, and
// [CLS], [SEP], [PAD], [MASK] and [UNK] matched as whole tokens in the text.
func LoadWordPieceVocab(path string, opts WordPieceOptions) (*WordPiece, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("embed: read vocab: %w", err)
	}
	defer f.Close()
	vocab := make(map[string]int32)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var n int32
	for sc.Scan() {
		tok := strings.TrimRight(sc.Text(), "\r")
		if _, dup := vocab[tok]; !dup { // the first id wins, as in transformers' load_vocab
			vocab[tok] = n
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: read vocab %s: %w", path, err)
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("embed: vocab %s is empty", path)
	}
	w, err := newWordPiece(vocab, "##", "[UNK]", opts.MaxCharsPerWord)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	w.cleanText, w.handleCJK, w.lowercase = true, !opts.KeepCJKTogether, opts.Lowercase
	w.stripAccents = opts.Lowercase
	if opts.StripAccents != nil {
		w.stripAccents = *opts.StripAccents
	}
	for _, special := range []string{"[CLS]", "[SEP]"} {
		if _, ok := vocab[special]; !ok {
			return nil, fmt.Errorf("embed: vocab %s has no %s token", path, special)
		}
	}
	w.prefix, w.suffix = []int64{int64(vocab["[CLS]"])}, []int64{int64(vocab["[SEP]"])}
	for _, special := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		if id, ok := vocab[special]; ok {
			w.added = append(w.added, addedToken{content: special, id: id})
		}
	}
	sortAdded(w.added)
	if id, ok := vocab["[PAD]"]; ok {
		w.pad = id
	}
	return w, nil
}

func newWordPiece(vocab map[string]int32, prefix, unk string, maxChars int) (*WordPiece, error) {
	if unk == "" {
		unk = "[UNK]"
	}
	unkID, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("embed: WordPiece vocabulary has no unknown token %q", unk)
	}
	if maxChars <= 0 {
		maxChars = 100
	}
	w := &WordPiece{vocab: vocab, cont: make(map[string]int32), unk: unkID, maxCharsPerWord: maxChars}
	if prefix != "" {
		for tok, id := range vocab {
			if rest, ok := strings.CutPrefix(tok, prefix); ok && rest != "" {
				w.cont[rest] = id
			}
		}
	} else {
		w.cont = vocab
	}
	return w, nil
}

// sortAdded orders added tokens longest first, so the match at a position is the longest.
func sortAdded(a []addedToken) {
	sort.SliceStable(a, func(i, j int) bool { return len(a[i].content) > len(a[j].content) })
}

func (w *WordPiece) setNormalizer(raw json.RawMessage) error {
	if isJSONNull(raw) {
		return nil
	}
	var n struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("embed: tokenizer.json normalizer: %w", err)
	}
	if n.Type != "BertNormalizer" {
		return fmt.Errorf("embed: tokenizer.json normalizer %q is not supported (want BertNormalizer)", n.Type)
	}
	orTrue := func(b *bool) bool { return b == nil || *b }
	w.cleanText, w.handleCJK, w.lowercase = orTrue(n.CleanText), orTrue(n.HandleChineseChars), orTrue(n.Lowercase)
	w.stripAccents = w.lowercase
	if n.StripAccents != nil {
		w.stripAccents = *n.StripAccents
	}
	return nil
}

func checkBertPreTokenizer(raw json.RawMessage) error {
	if isJSONNull(raw) {
		return errors.New("embed: tokenizer.json has no pre_tokenizer (want BertPreTokenizer)")
	}
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("embed: tokenizer.json pre_tokenizer: %w", err)
	}
	if p.Type != "BertPreTokenizer" {
		return fmt.Errorf("embed: tokenizer.json pre_tokenizer %q is not supported (want BertPreTokenizer)", p.Type)
	}
	return nil
}

// parsePostProcessor reads the special tokens a post-processor puts around a single text:
// TemplateProcessing's "single" template, BertProcessing (cls, sep) or RobertaProcessing.
func parsePostProcessor(raw json.RawMessage, vocab map[string]int32) (prefix, suffix []int64, err error) {
	if isJSONNull(raw) {
		return nil, nil, nil
	}
	var p struct {
		Type   string `json:"type"`
		Single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int64 `json:"ids"`
		} `json:"special_tokens"`
		Cls []json.RawMessage `json:"cls"`
		Sep []json.RawMessage `json:"sep"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, nil, fmt.Errorf("embed: tokenizer.json post_processor: %w", err)
	}
	switch p.Type {
	case "TemplateProcessing":
		seen := false
		for _, piece := range p.Single {
			switch {
			case piece.Sequence != nil:
				if seen {
					return nil, nil, errors.New("embed: tokenizer.json post_processor: the single template has two sequences")
				}
				seen = true
			case piece.SpecialToken != nil:
				st, ok := p.SpecialTokens[piece.SpecialToken.ID]
				if !ok || len(st.IDs) == 0 {
					return nil, nil, fmt.Errorf("embed: tokenizer.json post_processor: special token %q has no ids", piece.SpecialToken.ID)
				}
				if seen {
					suffix = append(suffix, st.IDs...)
				} else {
					prefix = append(prefix, st.IDs...)
				}
			}
		}
		if !seen {
			return nil, nil, errors.New("embed: tokenizer.json post_processor: the single template has no sequence")
		}
		return prefix, suffix, nil
	case "BertProcessing", "RobertaProcessing":
		cls, err := tokenPair(p.Cls)
		if err != nil {
			return nil, nil, fmt.Errorf("embed: tokenizer.json post_processor cls: %w", err)
		}
		sep, err := tokenPair(p.Sep)
		if err != nil {
			return nil, nil, fmt.Errorf("embed: tokenizer.json post_processor sep: %w", err)
		}
		return []int64{cls}, []int64{sep}, nil
	default:
		return nil, nil, fmt.Errorf("embed: tokenizer.json post_processor %q is not supported", p.Type)
	}
}

// tokenPair reads a ["[CLS]", 101] pair.
func tokenPair(pair []json.RawMessage) (int64, error) {
	if len(pair) != 2 {
		return 0, errors.New("want a [token, id] pair")
	}
	var id int64
	if err := json.Unmarshal(pair[1], &id); err != nil {
		return 0, fmt.Errorf("id: %w", err)
	}
	return id, nil
}

func isJSONNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// PadID implements [TextTokenizer]: the id of [PAD] (0 when the vocabulary has none).
func (w *WordPiece) PadID() int64 { return int64(w.pad) }

// Encode implements [TextTokenizer].
func (w *WordPiece) Encode(text string, maxLen int) []int64 {
	budget := -1
	if maxLen > 0 {
		budget = max(maxLen-len(w.prefix)-len(w.suffix), 0)
	}
	ids := make([]int64, 0, min(len(text)/2+len(w.prefix)+len(w.suffix)+4, 1024))
	ids = append(ids, w.prefix...)
	content := w.appendIDs(ids, text, budget)
	return append(content, w.suffix...)
}

// Tokens returns the word pieces of text, without special tokens and truncation: the
// tokenizer's view of the text, for tests and explanations.
func (w *WordPiece) Tokens(text string) []string {
	inv := make(map[int32]string, len(w.vocab))
	for tok, id := range w.vocab {
		inv[id] = tok
	}
	for _, a := range w.added {
		inv[a.id] = a.content
	}
	var out []string
	for _, id := range w.appendIDs(nil, text, -1) {
		out = append(out, inv[int32(id)])
	}
	return out
}

// appendIDs appends the ids of text (no special tokens) to dst, stopping once budget ids are
// added (budget < 0: no limit).
func (w *WordPiece) appendIDs(dst []int64, text string, budget int) []int64 {
	start := len(dst)
	full := func() bool { return budget >= 0 && len(dst)-start >= budget }
	splitAdded(text, w.added, false, func(seg string, id int32, isAdded bool) bool {
		if full() {
			return false
		}
		if isAdded {
			dst = append(dst, int64(id))
			return true
		}
		normalized := w.normalize(seg)
		splitAdded(normalized, w.added, true, func(seg string, id int32, isAdded bool) bool {
			if full() {
				return false
			}
			if isAdded {
				dst = append(dst, int64(id))
				return true
			}
			eachBertWord(seg, func(word string) bool {
				dst = w.appendWord(dst, word)
				return !full()
			})
			return !full()
		})
		return !full()
	})
	if budget >= 0 && len(dst)-start > budget {
		dst = dst[:start+budget]
	}
	return dst
}

// appendWord appends the word pieces of one pre-tokenized word.
func (w *WordPiece) appendWord(dst []int64, word string) []int64 {
	if utf8.RuneCountInString(word) > w.maxCharsPerWord {
		return append(dst, int64(w.unk))
	}
	mark := len(dst)
	table := w.vocab
	for rest := word; rest != ""; table = w.cont {
		end := len(rest)
		for end > 0 {
			if id, ok := table[rest[:end]]; ok {
				dst = append(dst, int64(id))
				break
			}
			_, size := utf8.DecodeLastRuneInString(rest[:end])
			end -= size
		}
		if end == 0 {
			return append(dst[:mark], int64(w.unk))
		}
		rest = rest[end:]
	}
	return dst
}
