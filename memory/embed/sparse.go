package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// ErrTokenizerClosed is returned by [Tokenizer.Tokens] (for Han text) and [Tokenizer.Load]
// after [Tokenizer.Close].
var ErrTokenizerClosed = errors.New("embed: tokenizer closed")

// TokenizerOptions configures [NewTokenizer].
type TokenizerOptions struct {
	// JiebaDir is an explicit jieba dictionary directory. "" resolves one with
	// [ResolveJiebaDir] (environment, system, executable-relative, checkout and module cache
	// locations). An explicit directory is authoritative: if it lacks a dictionary file,
	// loading fails instead of falling back to another copy.
	JiebaDir string
	// Logger receives the jieba load and its failure. nil discards.
	Logger *slog.Logger
}

// Tokenizer produces the sparse (BM25) terms of memory text. See [Tokenizer.Tokens] for the
// rules.
//
// A Tokenizer is safe for concurrent use. [NewTokenizer] is cheap; the jieba dictionaries
// load on the first Han text or on [Tokenizer.Load], once. A failed load is remembered and
// returned by every later call that needs jieba; create a new Tokenizer to retry.
// [Tokenizer.Close] frees jieba's C memory; calls already inside jieba finish first.
type Tokenizer struct {
	opts TokenizerOptions
	log  *slog.Logger

	// getenv and executable feed [ResolveJiebaDir] when JiebaDir is "".
	getenv     func(string) string
	executable func() (string, error)

	loaded atomic.Bool

	// mu guards the fields below: readers hold it while they call into jieba, Load and
	// Close take it exclusively.
	mu      sync.RWMutex
	seg     *jiebaSegmenter
	loadErr error
	closed  bool
}

// NewTokenizer returns a Tokenizer. It loads nothing.
func NewTokenizer(opts TokenizerOptions) *Tokenizer {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tokenizer{
		opts:       opts,
		log:        log,
		getenv:     osGetenv,
		executable: osExecutable,
	}
}

// Loaded reports whether the jieba dictionaries are loaded and usable.
func (t *Tokenizer) Loaded() bool { return t.loaded.Load() }

// Load loads the jieba dictionaries now (the kernel runs it as a warm-up facility). It is
// idempotent: after a success it returns nil at once, after a failure the same error. ctx is
// checked before the load starts (a cancelled ctx is not remembered as a failure); the load
// itself, ≈ 1 s inside C++, is not interruptible.
func (t *Tokenizer) Load(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embed: load jieba: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loadLocked()
}

// loadLocked loads jieba once; t.mu must be held exclusively.
func (t *Tokenizer) loadLocked() error {
	switch {
	case t.closed:
		return ErrTokenizerClosed
	case t.seg != nil:
		return nil
	case t.loadErr != nil:
		return t.loadErr
	}
	seg, err := t.newSegmenter()
	if err != nil {
		t.loadErr = fmt.Errorf("embed: jieba unavailable, Chinese text cannot be tokenised: %w", err)
		t.log.Error("jieba load failed", "err", err)
		return t.loadErr
	}
	t.seg = seg
	t.loaded.Store(true)
	return nil
}

// newSegmenter resolves the dictionary directory and loads jieba from it.
func (t *Tokenizer) newSegmenter() (*jiebaSegmenter, error) {
	dir := t.opts.JiebaDir
	if dir == "" {
		exe, _ := t.executable() // "" skips the executable-relative places
		var err error
		if dir, err = ResolveJiebaDir("", t.getenv, exe); err != nil {
			return nil, err
		}
	}
	return loadJieba(t.log, dir)
}

// Close frees jieba's C memory. It waits for calls inside jieba to return; afterwards Han
// text gives [ErrTokenizerClosed] while other text still tokenises. Close is idempotent.
func (t *Tokenizer) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	t.loaded.Store(false)
	if t.seg != nil {
		t.seg.free()
		t.seg = nil
	}
}

// acquire returns the loaded segmenter with t.mu read-locked (the caller must RUnlock), loading
// it first if needed.
func (t *Tokenizer) acquire() (*jiebaSegmenter, error) {
	for {
		t.mu.RLock()
		if t.seg != nil {
			return t.seg, nil
		}
		t.mu.RUnlock()
		t.mu.Lock()
		err := t.loadLocked()
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// Tokens returns the index and query terms of text, in order of appearance, duplicates kept
// (callers count term frequency). The rules:
//
//   - Invalid UTF-8, NUL, control characters, punctuation, symbols and emoji separate terms
//     and are dropped. Fullwidth ASCII (ＡＢＣ１２３) is folded to ASCII. Input of any size
//     works; Han runs longer than 64 KiB are cut into pieces at rune boundaries.
//   - Letters are lowercased (Unicode). Letters and digits of non-Han scripts form words;
//     everything else splits them: "D1:3" → "d1", "3"; "3.14" → "3", "14"; "don't" → "don",
//     "t" (both dropped: "don" is a stop word, "t" a single letter). Digits are kept
//     ("2023", "13010"), also as single digits. Combining marks stay in their word.
//   - Latin-script words that are English stop words (≈ 170: articles, pronouns, auxiliaries,
//     prepositions, conjunctions, what/when/where/who/which/how/why, contraction fragments)
//     are dropped; the others are stemmed with Snowball English ([Stem]); words longer than
//     48 bytes are kept unstemmed. Words of other scripts are kept as they are.
//   - Single-rune words (other than digits) outside Han are dropped.
//   - Each maximal run of Han characters goes to jieba CutForSearch(hmm=true); terms in
//     jieba's stop_words.utf8 are dropped, other single Han characters are kept (names).
//     "我在Shanghai见了Tom" gives the Han runs to jieba and the Latin runs to the word path.
//   - Japanese kana and Korean hangul are not segmented: each run of one script is a word
//     (a kana run, a hangul run), like a Latin word without stemming. Kanji are Han.
//     Thai, Lao, Khmer and other unspaced scripts also come out as whole runs.
//
// The error is non-nil only when text contains Han characters and jieba cannot be loaded
// (or the Tokenizer is closed); text without Han characters never loads jieba.
func (t *Tokenizer) Tokens(text string) ([]string, error) {
	out := make([]string, 0, len(text)/8+1)
	var (
		seg     *jiebaSegmenter
		word    []byte // current lowercased word
		wclass  runeClass
		wRunes  int
		wLatin  bool // only Latin-script letters so far
		hanFrom = -1 // start of the current Han run, or -1
	)
	defer func() {
		if seg != nil {
			t.mu.RUnlock()
		}
	}()

	flushWord := func() {
		if wRunes == 0 {
			return
		}
		if tok, ok := finishWord(word, wclass, wRunes, wLatin); ok {
			out = append(out, tok)
		}
		word, wRunes = word[:0], 0
	}
	flushHan := func(end int) error {
		if hanFrom < 0 {
			return nil
		}
		run := text[hanFrom:end]
		hanFrom = -1
		if seg == nil {
			var err error
			if seg, err = t.acquire(); err != nil {
				return err
			}
		}
		out = seg.appendTokens(out, run)
		return nil
	}

	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r >= 0xFF01 && r <= 0xFF5E { // fullwidth ASCII variants
			r -= 0xFEE0
		}
		c := classify(r, size)
		if c == classMark && wRunes > 0 {
			c = wclass // a combining mark continues its word
		}
		if c == classHan {
			flushWord()
			if hanFrom < 0 {
				hanFrom = i
			}
			i += size
			continue
		}
		if err := flushHan(i); err != nil {
			return nil, err
		}
		switch c {
		case classSep, classMark:
			flushWord()
		default:
			if c != wclass && wRunes > 0 {
				flushWord()
			}
			if wRunes == 0 {
				wclass, wLatin = c, true
			}
			if c != classWord || !isLatinLetter(r) {
				wLatin = false
			}
			if r < utf8.RuneSelf {
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				word = append(word, byte(r))
			} else {
				word = utf8.AppendRune(word, unicode.ToLower(r))
			}
			wRunes++
		}
		i += size
	}
	flushWord()
	if err := flushHan(len(text)); err != nil {
		return nil, err
	}
	return out, nil
}

// maxStemBytes is the longest word that is stemmed; longer ones (hashes, blobs) are kept as
// they are.
const maxStemBytes = 48

// finishWord applies the word rules to a lowercased word.
func finishWord(word []byte, c runeClass, runes int, latin bool) (string, bool) {
	if runes == 1 {
		if r, _ := utf8.DecodeRune(word); !unicode.IsDigit(r) {
			return "", false
		}
	}
	if c != classWord {
		return string(word), true
	}
	if _, stop := englishStopWords[string(word)]; stop {
		return "", false
	}
	if latin && len(word) <= maxStemBytes {
		return stems.stem(word), true
	}
	return string(word), true
}

// Stem returns the Snowball English (Porter2) stem of a word ("running" → "run",
// "groups" → "group"), stop words included. The word is trimmed of spaces and lowercased
// first; words of one or two bytes come back unchanged. It is safe for concurrent use.
//
// The stemmer is the official Snowball one as generated for Go
// (github.com/blevesearch/snowballstem/english), which links no `testing` package.
func Stem(word string) string {
	word = strings.ToLower(strings.TrimSpace(word))
	if len(word) <= 2 {
		return word
	}
	env := snowballstem.NewEnv(word)
	english.Stem(env)
	return env.Current()
}

// stems caches [Stem] results: stemming is most of the cost of English text, and the
// vocabulary of a conversation is small.
var stems stemCache

// stemCache is a bounded, sharded, concurrency-safe map from word to stem. A full shard is
// cleared rather than evicted entry by entry, so memory stays bounded (≈ 64 Ki words).
type stemCache struct {
	shards [16]struct {
		mu sync.RWMutex
		m  map[string]string
	}
}

const stemShardCap = 4096

func (c *stemCache) stem(word []byte) string {
	h := uint32(2166136261) // FNV-1a
	for _, b := range word {
		h = (h ^ uint32(b)) * 16777619
	}
	sh := &c.shards[h%uint32(len(c.shards))]
	sh.mu.RLock()
	st, ok := sh.m[string(word)]
	sh.mu.RUnlock()
	if ok {
		return st
	}
	w := string(word)
	st = Stem(w)
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= stemShardCap {
		sh.m = make(map[string]string, 256)
	}
	sh.m[w] = st
	sh.mu.Unlock()
	return st
}

// runeClass groups runes into the runs [Tokenizer.Tokens] cuts text into.
type runeClass uint8

const (
	classSep    runeClass = iota // separators: space, punctuation, symbols, controls, invalid bytes
	classWord                    // letters and digits of spaced scripts (Latin, Cyrillic, …)
	classHan                     // Han characters, segmented by jieba
	classKana                    // Japanese hiragana and katakana
	classHangul                  // Korean hangul
	classMark                    // combining marks: continue the current word, else separate
)

// classify returns the class of r (decoded with the given size; an invalid byte is a
// separator).
func classify(r rune, size int) runeClass {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			return classWord
		default:
			return classSep
		}
	}
	switch {
	case r == utf8.RuneError && size == 1:
		return classSep
	case unicode.Is(unicode.Han, r):
		return classHan
	case unicode.In(r, unicode.Hiragana, unicode.Katakana) || r == 'ー' || r == 'ｰ':
		if unicode.IsLetter(r) || unicode.IsMark(r) || r == 'ー' || r == 'ｰ' {
			return classKana
		}
		return classSep
	case unicode.Is(unicode.Hangul, r):
		if unicode.IsLetter(r) {
			return classHangul
		}
		return classSep
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return classWord
	case unicode.IsMark(r):
		return classMark
	default:
		return classSep
	}
}

// isLatinLetter reports whether r is a letter of the Latin script (ASCII fast path).
func isLatinLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.Is(unicode.Latin, r)
}

// englishStopWords are dropped from Latin-script words before stemming: the NLTK English
// list without the apostrophe forms (words are split at apostrophes, so "don't" yields "don"
// and "t") and without "won" (a content verb more often than a fragment of "won't"), plus a
// few modal auxiliaries.
var englishStopWords = func() map[string]struct{} {
	words := []string{
		"i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
		"yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
		"it", "its", "itself", "they", "them", "their", "theirs", "themselves",
		"what", "which", "who", "whom", "whose", "this", "that", "these", "those",
		"am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having",
		"do", "does", "did", "doing", "would", "could", "should", "shall", "might", "must", "can", "will",
		"a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while",
		"of", "at", "by", "for", "with", "about", "against", "between", "into", "through",
		"during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out",
		"on", "off", "over", "under", "again", "further", "then", "once", "here", "there",
		"when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most",
		"other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too",
		"very", "just", "now",
		// contraction fragments ("don't" → "don" "t", "you'll" → "you" "ll", …)
		"s", "t", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren", "couldn", "didn",
		"doesn", "don", "hadn", "hasn", "haven", "isn", "ma", "mightn", "mustn", "needn",
		"shan", "shouldn", "wasn", "weren", "wouldn",
	}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()

// Tagged is a word of a text with its jieba part-of-speech tag (ICTCLAS tags: n noun, nr
// person name, ns place name, nt organisation, nz other proper noun, v verb, a adjective, d
// adverb, r pronoun, p preposition, c conjunction, u particle, m numeral, eng Latin text, x
// punctuation…).
type Tagged struct {
	Word, POS string
}

// Tag splits text into words with their parts of speech (jieba's Tag, HMM on). It loads jieba
// like [Tokenizer.Tokens]; text without Han characters is not tagged (nil). The error is
// non-nil only when jieba cannot be loaded or the Tokenizer is closed.
func (t *Tokenizer) Tag(text string) ([]Tagged, error) {
	if !strings.ContainsFunc(text, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
		return nil, nil
	}
	seg, err := t.acquire()
	if err != nil {
		return nil, err
	}
	defer t.mu.RUnlock()
	var out []Tagged
	for len(text) > 0 {
		piece := text
		if len(piece) > maxHanRun {
			cut := maxHanRun
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			piece = text[:cut]
		}
		text = text[len(piece):]
		for _, wt := range seg.jb.Tag(piece) {
			i := strings.LastIndexByte(wt, '/')
			if i <= 0 {
				continue
			}
			out = append(out, Tagged{Word: wt[:i], POS: wt[i+1:]})
		}
	}
	return out, nil
}
