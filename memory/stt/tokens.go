package stt

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Tokens is the part of Whisper's byte-level BPE tokenizer (a Hugging Face tokenizer.json)
// that transcription needs: ids to text, and the special tokens that steer the decoder. Text
// is never encoded: the decoder's prompt is special tokens only.
type Tokens struct {
	pieces []string // id → token as written in the vocabulary (bytes mapped to runes, GPT-2 style)
	// special marks the added tokens (<|…|>): never part of a transcript.
	special []bool

	EndOfText, StartOfTranscript, Transcribe, NoTimestamps int
	// Languages maps a language code ("en", "zh"…) to its token, in the vocabulary's order.
	Languages map[string]int
	langIDs   []int
}

// languageToken matches Whisper's language tokens, <|en|>, <|zh|>, <|haw|>, <|yue|>.
var languageToken = regexp.MustCompile(`^<\|([a-z]{2,3})\|>$`)

// maxVocab bounds the vocabulary read (Whisper's is 51,865 or 51,866 tokens).
const maxVocab = 1 << 18

// LoadTokens reads a Whisper tokenizer.json.
func LoadTokens(path string) (*Tokens, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stt: tokenizer: %w", err)
	}
	return ParseTokens(data)
}

// ParseTokens reads the contents of a Whisper tokenizer.json.
func ParseTokens(data []byte) (*Tokens, error) {
	var f struct {
		Model struct {
			Type  string         `json:"type"`
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("stt: tokenizer: %w", err)
	}
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("stt: tokenizer: model type %q, want Whisper's byte-level BPE", f.Model.Type)
	}
	n := 0
	check := func(id int, tok string) error {
		if id < 0 || id >= maxVocab {
			return fmt.Errorf("stt: tokenizer: token %q has id %d, outside [0, %d)", tok, id, maxVocab)
		}
		n = max(n, id+1)
		return nil
	}
	for tok, id := range f.Model.Vocab {
		if err := check(id, tok); err != nil {
			return nil, err
		}
	}
	for _, a := range f.Added {
		if err := check(a.ID, a.Content); err != nil {
			return nil, err
		}
	}
	t := &Tokens{pieces: make([]string, n), special: make([]bool, n), Languages: map[string]int{},
		EndOfText: -1, StartOfTranscript: -1, Transcribe: -1, NoTimestamps: -1}
	for tok, id := range f.Model.Vocab {
		t.pieces[id] = tok
	}
	for _, a := range f.Added {
		t.pieces[a.ID], t.special[a.ID] = a.Content, true
		switch a.Content {
		case "<|endoftext|>":
			t.EndOfText = a.ID
		case "<|startoftranscript|>":
			t.StartOfTranscript = a.ID
		case "<|transcribe|>":
			t.Transcribe = a.ID
		case "<|notimestamps|>":
			t.NoTimestamps = a.ID
		default:
			if m := languageToken.FindStringSubmatch(a.Content); m != nil {
				t.Languages[m[1]] = a.ID
				t.langIDs = append(t.langIDs, a.ID)
			}
		}
	}
	var missing []string
	for name, id := range map[string]int{"<|endoftext|>": t.EndOfText, "<|startoftranscript|>": t.StartOfTranscript,
		"<|transcribe|>": t.Transcribe, "<|notimestamps|>": t.NoTimestamps} {
		if id < 0 {
			missing = append(missing, name)
		}
	}
	if len(t.Languages) == 0 {
		missing = append(missing, "language tokens (<|en|>…)")
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("stt: tokenizer: not a Whisper tokenizer: no %s", strings.Join(missing, ", "))
	}
	sort.Ints(t.langIDs)
	return t, nil
}

// Len is the vocabulary size: ids are below it.
func (t *Tokens) Len() int { return len(t.pieces) }

// Special says whether id is an added token (<|…|>) or outside the vocabulary.
func (t *Tokens) Special(id int) bool { return id < 0 || id >= len(t.pieces) || t.special[id] }

// Language returns the code of a language token ("" if id is none).
func (t *Tokens) Language(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	if m := languageToken.FindStringSubmatch(t.pieces[id]); m != nil && t.special[id] {
		return m[1]
	}
	return ""
}

// Text decodes ids to text, leaving out special tokens: the runes of each token are mapped
// back to the bytes they stand for (GPT-2's byte-to-unicode table) and the bytes read as
// UTF-8 (a character cut between tokens is whole again once joined; invalid bytes become U+FFFD).
func (t *Tokens) Text(ids []int) string {
	var b []byte
	for _, id := range ids {
		if t.Special(id) {
			continue
		}
		for _, r := range t.pieces[id] {
			if c, ok := runeByte[r]; ok {
				b = append(b, c)
			} else {
				b = append(b, string(r)...) // not a byte-level token: kept as written
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// runeByte inverts GPT-2's bytes_to_unicode: the printable bytes ('!'…'~', '¡'…'¬', '®'…'ÿ')
// stand for themselves, the other 68 for U+0100 onwards in byte order.
var runeByte = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	next := rune(256)
	for c := range 256 {
		if (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF) {
			m[rune(c)] = byte(c)
			continue
		}
		m[next] = byte(c)
		next++
	}
	return m
}()
