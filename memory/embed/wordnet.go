package embed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// WordNetDirEnv names the environment variable that points at a WordNet 3.0 database directory.
const WordNetDirEnv = "HOLOGRAM_WORDNET_DIR"

// WordNetFiles are the files of the WordNet database the Lexicon reads.
var WordNetFiles = []string{"data.noun", "index.noun", "noun.exc", "verb.exc", "adj.exc"}

// ErrWordNetNotFound is returned when no WordNet database can be found.
var ErrWordNetNotFound = errors.New("WordNet database not found")

// Lexicon gives memory retrieval some English lexical knowledge without any model: the
// hypernyms of nouns
// ("taekwondo" → "martial art", "Spain" → "European country"), which the index stores beside an
// event's own terms so that a question asked in general words finds events told in specific
// ones. The data is Princeton WordNet 3.0 (Debian's wordnet-base; WordNet licence, permissive).
//
// A Lexicon is safe for concurrent use. It loads lazily, once (≈ 20 MB read, ≈ 0.3 s); a failed
// load is remembered, and the Lexicon then answers as if it knew no word.
type Lexicon struct {
	opts LexiconOptions
	log  *slog.Logger

	once   sync.Once
	err    error
	loaded atomic.Bool
	exc    map[string]string   // irregular form → lemma
	idx    map[string][]uint32 // noun lemma → synset offsets of its most frequent senses
	syn    map[uint32]synset
	memo   sync.Map // word → []string expansion tokens
}

type synset struct {
	words []string
	hyp   []uint32
}

// LexiconOptions configures [NewLexicon].
type LexiconOptions struct {
	// Dir is the WordNet database directory; "" resolves it with [ResolveWordNetDir].
	Dir string
	// Senses is how many of a noun's most frequent senses are expanded (default 2); Depth is how
	// many hypernym levels (default 2). More of either adds noise faster than recall.
	Senses, Depth int
	Logger        *slog.Logger
	// getenv and executable feed the resolver (tests replace them).
	getenv     func(string) string
	executable func() (string, error)
}

// NewLexicon returns a Lexicon; it loads nothing yet.
func NewLexicon(opts LexiconOptions) *Lexicon {
	if opts.Senses <= 0 {
		opts.Senses = 2
	}
	if opts.Depth <= 0 {
		opts.Depth = 2
	}
	if opts.getenv == nil {
		opts.getenv = os.Getenv
	}
	if opts.executable == nil {
		opts.executable = os.Executable
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Lexicon{opts: opts, log: log}
}

// ResolveWordNetDir finds the WordNet database: configured → $HOLOGRAM_WORDNET_DIR →
// /usr/lib/hologram/wordnet → /usr/share/wordnet (Debian's wordnet-base) → next to the
// executable (wordnet, ../lib/hologram/wordnet). A directory counts only with every file of
// [WordNetFiles]; an explicit one (configured or the environment) that lacks them is an error.
func ResolveWordNetDir(configured string, getenv func(string) string, exe string) (string, error) {
	explicit := configured
	if explicit == "" {
		explicit = getenv(WordNetDirEnv)
	}
	if explicit != "" {
		if err := checkFiles(explicit, WordNetFiles); err != nil {
			return "", fmt.Errorf("%w: %v", ErrWordNetNotFound, err)
		}
		return explicit, nil
	}
	cands := []string{"/usr/lib/hologram/wordnet", "/usr/share/wordnet"}
	if exe != "" {
		d := filepath.Dir(exe)
		cands = append(cands, filepath.Join(d, "wordnet"), filepath.Join(d, "..", "lib", "hologram", "wordnet"))
	}
	for _, c := range cands {
		if checkFiles(c, WordNetFiles) == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w in %s: install Debian's wordnet-base or set %s", ErrWordNetNotFound, strings.Join(cands, ", "), WordNetDirEnv)
}

func checkFiles(dir string, files []string) error {
	var missing []string
	for _, f := range files {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s", dir, strings.Join(missing, ", "))
	}
	return nil
}

// Load reads the database now (the kernel runs it as a facility); it is idempotent and returns
// the remembered error of a failed load.
func (l *Lexicon) Load(ctx context.Context) error {
	l.once.Do(func() {
		t0 := time.Now()
		l.err = l.load()
		if l.err != nil {
			l.log.Warn("lexicon unavailable: retrieval works without hypernyms and irregular forms", "err", l.err)
			return
		}
		l.loaded.Store(true)
		l.log.Info("lexicon loaded", "nouns", len(l.idx), "synsets", len(l.syn), "ms", time.Since(t0).Milliseconds())
	})
	return l.err
}

// Ready reports whether the database loaded, loading it if that was not tried yet.
func (l *Lexicon) Ready() bool { return l.Load(context.Background()) == nil }

// Loaded reports whether the database has loaded, without loading it.
func (l *Lexicon) Loaded() bool { return l.loaded.Load() }

func (l *Lexicon) load() error {
	exe, _ := l.opts.executable()
	dir, err := ResolveWordNetDir(l.opts.Dir, l.opts.getenv, exe)
	if err != nil {
		return err
	}
	l.exc = map[string]string{}
	for _, f := range []string{"verb.exc", "noun.exc", "adj.exc"} {
		if err := eachLine(filepath.Join(dir, f), func(line string) error {
			p := strings.Fields(line)
			if len(p) >= 2 && !strings.Contains(p[0], "_") {
				if _, dup := l.exc[p[0]]; !dup {
					l.exc[p[0]] = p[1]
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	l.idx = map[string][]uint32{}
	if err := eachLine(filepath.Join(dir, "index.noun"), func(line string) error {
		if strings.HasPrefix(line, "  ") {
			return nil // licence header
		}
		p := strings.Split(line, " ")
		if len(p) < 6 {
			return fmt.Errorf("index.noun: short line %q", line)
		}
		scnt, err1 := strconv.Atoi(p[2])
		pcnt, err2 := strconv.Atoi(p[3])
		if err1 != nil || err2 != nil || len(p) < 6+pcnt+scnt {
			return fmt.Errorf("index.noun: bad line %q", line)
		}
		offs := p[6+pcnt : 6+pcnt+min(scnt, l.opts.Senses)]
		for _, o := range offs {
			v, err := strconv.ParseUint(o, 10, 32)
			if err != nil {
				return fmt.Errorf("index.noun: bad offset %q", o)
			}
			l.idx[p[0]] = append(l.idx[p[0]], uint32(v))
		}
		return nil
	}); err != nil {
		return err
	}
	l.syn = map[uint32]synset{}
	return eachLine(filepath.Join(dir, "data.noun"), func(line string) error {
		if strings.HasPrefix(line, "  ") {
			return nil
		}
		p := strings.Split(line, " ")
		if len(p) < 5 {
			return fmt.Errorf("data.noun: short line %q", line)
		}
		off, err := strconv.ParseUint(p[0], 10, 32)
		if err != nil {
			return fmt.Errorf("data.noun: bad offset %q", p[0])
		}
		wcnt, err := strconv.ParseUint(p[3], 16, 16)
		if err != nil || len(p) < 5+2*int(wcnt) {
			return fmt.Errorf("data.noun: bad word count in %q", line)
		}
		s := synset{words: make([]string, 0, wcnt)}
		for i := 0; i < int(wcnt); i++ {
			s.words = append(s.words, strings.ToLower(p[4+2*i]))
		}
		i := 4 + 2*int(wcnt)
		pcnt, err := strconv.Atoi(p[i])
		if err != nil || len(p) < i+1+4*pcnt {
			return fmt.Errorf("data.noun: bad pointer count in %q", line)
		}
		for j := 0; j < pcnt; j++ {
			sym, o, pos := p[i+1+4*j], p[i+2+4*j], p[i+3+4*j]
			if (sym == "@" || sym == "@i") && pos == "n" {
				if v, err := strconv.ParseUint(o, 10, 32); err == nil {
					s.hyp = append(s.hyp, uint32(v))
				}
			}
		}
		l.syn[uint32(off)] = s
		return nil
	})
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Lemma returns the lemma of an irregular English form ("went" → "go", "mice" → "mouse"), or
// word itself. word is lowercase.
func (l *Lexicon) Lemma(word string) string {
	if l == nil || l.Load(context.Background()) != nil {
		return word
	}
	if v, ok := l.exc[word]; ok {
		return v
	}
	return word
}

// nounLemma finds word's noun lemma: itself, an irregular plural, or a regular plural.
func (l *Lexicon) nounLemma(word string) (string, bool) {
	if _, ok := l.idx[word]; ok {
		return word, true
	}
	if v, ok := l.exc[word]; ok {
		if _, ok := l.idx[v]; ok {
			return v, true
		}
	}
	for _, sr := range [][2]string{{"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"ches", "ch"}, {"shes", "sh"}, {"s", ""}} {
		if b, ok := strings.CutSuffix(word, sr[0]); ok && b != "" {
			if _, ok := l.idx[b+sr[1]]; ok {
				return b + sr[1], true
			}
		}
	}
	return "", false
}

// Hypernyms returns the hypernym lemmas of a noun's most frequent senses, nearest first, as
// WordNet writes them ("martial_art"). Unknown words give nil.
func (l *Lexicon) Hypernyms(word string) []string {
	if l == nil || l.Load(context.Background()) != nil {
		return nil
	}
	lem, ok := l.nounLemma(word)
	if !ok {
		return nil
	}
	type item struct {
		off   uint32
		depth int
	}
	var out []string
	seen := map[uint32]bool{}
	queue := make([]item, 0, 8)
	for _, o := range l.idx[lem] {
		queue = append(queue, item{o, 0})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.off] {
			continue
		}
		seen[it.off] = true
		s := l.syn[it.off]
		if it.depth > 0 {
			out = append(out, s.words...)
		}
		if it.depth < l.opts.Depth {
			for _, h := range s.hyp {
				queue = append(queue, item{h, it.depth + 1})
			}
		}
	}
	return out
}

// Expand returns the index terms of the hypernyms of text's English words (stemmed, stop words
// dropped, each word's expansion at most once per call): the terms the index keeps in its
// expansion column.
func (l *Lexicon) Expand(text string) []string {
	if l == nil || l.Load(context.Background()) != nil {
		return nil
	}
	var out []string
	done := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) || r > unicode.MaxLatin1 }) {
		if len(w) < 3 || done[w] {
			continue
		}
		done[w] = true
		if _, stop := englishStopWords[w]; stop {
			continue
		}
		out = append(out, l.expandWord(w)...)
	}
	return out
}

func (l *Lexicon) expandWord(w string) []string {
	if v, ok := l.memo.Load(w); ok {
		return v.([]string)
	}
	if _, ok := l.nounLemma(w); !ok {
		return nil // not remembered: the memo holds WordNet nouns only, so it stays bounded
	}
	var toks []string
	for _, h := range l.Hypernyms(w) {
		for _, part := range strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(part) < 2 {
				continue
			}
			if _, stop := englishStopWords[part]; stop {
				continue
			}
			toks = append(toks, Stem(part))
		}
	}
	l.memo.Store(w, toks)
	return toks
}
