package embed

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
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
	exc    map[string]string // irregular form → lemma (a few thousand entries)
	nets   nounNet           // the noun network, pointer-free (see nounNet)
	// verbs, adjs, advs are the sorted FNV-1a hashes of index.verb, index.adj and index.adv
	// lemmas (empty when the files are absent): the word classes of [Lexicon.Classes].
	verbs, adjs, advs []uint64
	memo              sync.Map // word → []string expansion tokens
}

// nounNet is WordNet's noun network in flat arrays without pointers, so that the garbage
// collector never scans it (as maps of strings and slices, its 80,000 synsets made every GC cycle
// of the kernel longer, and the turn latency's tail with it): words live in one byte blob, lemmas
// are found by binary search over sorted hashes, synsets are dense indexes.
type nounNet struct {
	blob      []byte   // every lemma and synset word, back to back
	lemmaHash []uint64 // sorted FNV-1a hashes of index.noun lemmas
	lemmaRef  []uint64 // parallel: lemma text (blob offset<<16 | length) …
	lemmaSen  []uint32 // … first sense (senses of lemma i: senses[lemmaSen[i]:lemmaSen[i+1]])
	senses    []uint32 // synset indexes
	synOff    []uint32 // sorted data.noun byte offsets: synset index = position
	synWords  []uint32 // per synset (plus one): first word in words
	words     []uint64 // word text (blob offset<<16 | length)
	synHyp    []uint32 // per synset (plus one): first hypernym in hyps
	hyps      []uint32 // synset indexes
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func (n *nounNet) text(ref uint64) string {
	off, ln := ref>>16, ref&0xffff
	return string(n.blob[off : off+ln])
}

func (n *nounNet) add(s string) uint64 {
	ref := uint64(len(n.blob))<<16 | uint64(len(s))
	n.blob = append(n.blob, s...)
	return ref
}

// lemma returns the index of a noun lemma, or -1.
func (n *nounNet) lemma(word string) int {
	h := fnv64(word)
	i, _ := slices.BinarySearch(n.lemmaHash, h)
	for ; i < len(n.lemmaHash) && n.lemmaHash[i] == h; i++ {
		if n.text(n.lemmaRef[i]) == word {
			return i
		}
	}
	return -1
}

// synset returns the index of the synset at a data.noun offset, or -1.
func (n *nounNet) synset(off uint32) int {
	if i, ok := slices.BinarySearch(n.synOff, off); ok {
		return i
	}
	return -1
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
		l.log.Info("lexicon loaded", "nouns", len(l.nets.lemmaHash), "synsets", len(l.nets.synOff), "ms", time.Since(t0).Milliseconds())
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
	// index.noun: lemma → offsets of its most frequent senses (resolved to synset indexes below).
	type lemmaRow struct {
		hash uint64
		ref  uint64
		offs []uint32
	}
	var lemmas []lemmaRow
	var n nounNet
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
		if err1 != nil || err2 != nil || len(p) < 6+pcnt+scnt || len(p[0]) > 0xffff {
			return fmt.Errorf("index.noun: bad line %q", line)
		}
		row := lemmaRow{hash: fnv64(p[0]), ref: n.add(p[0])}
		for _, o := range p[6+pcnt : 6+pcnt+min(scnt, l.opts.Senses)] {
			v, err := strconv.ParseUint(o, 10, 32)
			if err != nil {
				return fmt.Errorf("index.noun: bad offset %q", o)
			}
			row.offs = append(row.offs, uint32(v))
		}
		lemmas = append(lemmas, row)
		return nil
	}); err != nil {
		return err
	}
	// data.noun: synsets in offset order (the file is sorted by offset), with their words and the
	// offsets of their hypernyms (resolved to indexes once every synset is known).
	var hypOffs []uint32
	if err := eachLine(filepath.Join(dir, "data.noun"), func(line string) error {
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
		if k := len(n.synOff); k > 0 && uint32(off) <= n.synOff[k-1] {
			return fmt.Errorf("data.noun: offsets out of order at %q", p[0])
		}
		wcnt, err := strconv.ParseUint(p[3], 16, 16)
		if err != nil || len(p) < 5+2*int(wcnt) {
			return fmt.Errorf("data.noun: bad word count in %q", line)
		}
		n.synOff = append(n.synOff, uint32(off))
		n.synWords = append(n.synWords, uint32(len(n.words)))
		for i := 0; i < int(wcnt); i++ {
			if w := strings.ToLower(p[4+2*i]); len(w) <= 0xffff {
				n.words = append(n.words, n.add(w))
			}
		}
		i := 4 + 2*int(wcnt)
		pcnt, err := strconv.Atoi(p[i])
		if err != nil || len(p) < i+1+4*pcnt {
			return fmt.Errorf("data.noun: bad pointer count in %q", line)
		}
		n.synHyp = append(n.synHyp, uint32(len(hypOffs)))
		for j := 0; j < pcnt; j++ {
			sym, o, pos := p[i+1+4*j], p[i+2+4*j], p[i+3+4*j]
			if (sym == "@" || sym == "@i") && pos == "n" {
				if v, err := strconv.ParseUint(o, 10, 32); err == nil {
					hypOffs = append(hypOffs, uint32(v))
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	n.synWords = append(n.synWords, uint32(len(n.words)))
	n.synHyp = append(n.synHyp, uint32(len(hypOffs)))
	n.hyps = make([]uint32, 0, len(hypOffs))
	for k, o := range hypOffs {
		idx := n.synset(o)
		if idx < 0 {
			return fmt.Errorf("data.noun: hypernym offset %d (pointer %d) is not a synset", o, k)
		}
		n.hyps = append(n.hyps, uint32(idx))
	}
	slices.SortFunc(lemmas, func(a, b lemmaRow) int { return cmp.Compare(a.hash, b.hash) })
	for _, r := range lemmas {
		n.lemmaHash = append(n.lemmaHash, r.hash)
		n.lemmaRef = append(n.lemmaRef, r.ref)
		n.lemmaSen = append(n.lemmaSen, uint32(len(n.senses)))
		for _, o := range r.offs {
			if idx := n.synset(o); idx >= 0 {
				n.senses = append(n.senses, uint32(idx))
			}
		}
	}
	n.lemmaSen = append(n.lemmaSen, uint32(len(n.senses)))
	n.blob = slices.Clip(n.blob)
	l.nets = n
	for _, c := range []struct {
		file string
		into *[]uint64
	}{{"index.verb", &l.verbs}, {"index.adj", &l.adjs}, {"index.adv", &l.advs}} {
		hs, err := lemmaHashes(filepath.Join(dir, c.file))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		*c.into = hs
	}
	return nil
}

// WordNetClassFiles are the index files that give [Lexicon.Classes] the verbs, adjectives and
// adverbs (Debian's wordnet-base ships them beside [WordNetFiles]; without them only nouns are
// known).
var WordNetClassFiles = []string{"index.verb", "index.adj", "index.adv"}

// lemmaHashes reads the lemmas of a WordNet index file as sorted FNV-1a hashes.
func lemmaHashes(path string) ([]uint64, error) {
	var hs []uint64
	err := eachLine(path, func(line string) error {
		if strings.HasPrefix(line, "  ") {
			return nil // licence header
		}
		if i := strings.IndexByte(line, ' '); i > 0 {
			hs = append(hs, fnv64(line[:i]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(hs)
	return slices.Compact(hs), nil
}

// Word classes of [Lexicon.Classes], as bits.
const (
	ClassNoun = 1 << iota
	ClassVerb
	ClassAdj
	ClassAdv
)

// Classes returns the WordNet word classes of an English word (lower case) as ClassNoun,
// ClassVerb, ClassAdj and ClassAdv bits: the classes whose index lists the word itself or its
// lemma (an irregular form, a regular plural for nouns, -s/-ed/-ing for verbs). 0 means the
// word is unknown (a name, a misspelling) or the lexicon did not load. Multi-word lemmas are
// written with spaces or underscores ("ice cream").
func (l *Lexicon) Classes(word string) int {
	if l == nil || l.Load(context.Background()) != nil || word == "" {
		return 0
	}
	word = strings.ReplaceAll(strings.ToLower(word), " ", "_")
	c := 0
	if _, ok := l.nounLemma(word); ok {
		c |= ClassNoun
	}
	has := func(hs []uint64, w string) bool {
		_, ok := slices.BinarySearch(hs, fnv64(w))
		return ok
	}
	forms := []string{word}
	if v, ok := l.exc[word]; ok {
		forms = append(forms, v)
	}
	for _, suf := range []string{"s", "es", "ed", "d", "ing"} {
		if b, ok := strings.CutSuffix(word, suf); ok && len(b) > 1 {
			forms = append(forms, b, b+"e")
			if n := len(b); n > 2 && b[n-1] == b[n-2] {
				forms = append(forms, b[:n-1]) // "stopped" → "stop"
			}
			if suf == "s" || suf == "es" {
				if y, ok := strings.CutSuffix(b, "i"); ok {
					forms = append(forms, y+"y") // "studies" → "study"
				}
			}
		}
	}
	for _, f := range forms {
		if has(l.verbs, f) {
			c |= ClassVerb
			break
		}
	}
	if v, ok := l.exc[word]; has(l.adjs, word) || ok && has(l.adjs, v) {
		c |= ClassAdj
	}
	if has(l.advs, word) {
		c |= ClassAdv
	}
	return c
}

// NounLemma returns the noun lemma of an English word ("turtles" → "turtle", "mice" → "mouse")
// and whether WordNet knows it as a noun; an unknown word is returned as it is.
func (l *Lexicon) NounLemma(word string) (string, bool) {
	if l == nil || l.Load(context.Background()) != nil {
		return word, false
	}
	w := strings.ReplaceAll(strings.ToLower(word), " ", "_")
	i, ok := l.nounLemma(w)
	if !ok {
		return word, false
	}
	return strings.ReplaceAll(l.nets.text(l.nets.lemmaRef[i]), "_", " "), true
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

// nounLemma finds word's noun lemma index: itself, an irregular plural, or a regular plural.
func (l *Lexicon) nounLemma(word string) (int, bool) {
	if i := l.nets.lemma(word); i >= 0 {
		return i, true
	}
	if v, ok := l.exc[word]; ok {
		if i := l.nets.lemma(v); i >= 0 {
			return i, true
		}
	}
	for _, sr := range [][2]string{{"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"ches", "ch"}, {"shes", "sh"}, {"s", ""}} {
		if b, ok := strings.CutSuffix(word, sr[0]); ok && b != "" {
			if i := l.nets.lemma(b + sr[1]); i >= 0 {
				return i, true
			}
		}
	}
	return -1, false
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
	n := &l.nets
	type item struct {
		syn   uint32
		depth int
	}
	var out []string
	seen := map[uint32]bool{}
	queue := make([]item, 0, 8)
	for _, s := range n.senses[n.lemmaSen[lem]:n.lemmaSen[lem+1]] {
		queue = append(queue, item{s, 0})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.syn] {
			continue
		}
		seen[it.syn] = true
		if it.depth > 0 {
			for _, w := range n.words[n.synWords[it.syn]:n.synWords[it.syn+1]] {
				out = append(out, n.text(w))
			}
		}
		if it.depth < l.opts.Depth {
			for _, h := range n.hyps[n.synHyp[it.syn]:n.synHyp[it.syn+1]] {
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
