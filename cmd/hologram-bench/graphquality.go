package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/graph"
)

// runGraphQuality is `hologram-bench graph`: the LLM-free extractor over the whole of each dev
// set (LoCoMo dev, RealMem, MADial zh memory events), the graph's figures (docs/memory-graph.md,
// "Measuring the graph") and a sample of SAMPLE triples per set drawn with a fixed seed, written
// as TSV with the labels already given in the labels directory (key: subject, predicate,
// object). The same file runs on main for the before figures (its extractor construction lives
// in graphquality_rules.go).
func runGraphQuality(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hologram-bench graph", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "../shared/data", "the dev data `dir` (locomo/, realmem/, madial/)")
	sets := fs.String("sets", "locomo,realmem,madial-zh", "the sets")
	n := fs.Int("sample", 100, "triples sampled per set")
	seed := fs.Uint64("seed", 20, "the sample's seed")
	out := fs.String("out", "", "write SET-TAG.tsv samples into `dir`")
	tag := fs.String("tag", "after", "the samples' tag (before, after)")
	labels := fs.String("labels", "docs/graph-quality", "read labels from `dir`/SET-TAG.tsv")
	if _, err := parseInterleaved(fs, args); err != nil {
		return 2
	}
	for _, name := range strings.Split(*sets, ",") {
		var set recallSet
		var err error
		switch name = strings.TrimSpace(name); name {
		case "locomo":
			set, err = loadLocomo(filepath.Join(*data, "locomo", "locomo-dev.json"))
		case "realmem":
			set, err = loadRealMem(filepath.Join(*data, "realmem"))
		case "madial-zh":
			set, err = loadMADial(filepath.Join(*data, "madial"), "zh")
		default:
			err = fmt.Errorf("unknown set %q", name)
		}
		if err != nil {
			fmt.Fprintln(stderr, "hologram-bench graph:", err)
			return 1
		}
		g, err := buildGraph(ctx, set)
		if err != nil {
			fmt.Fprintln(stderr, "hologram-bench graph:", err)
			return 1
		}
		lab := readLabels(filepath.Join(*labels, name+"-"+*tag+".tsv"))
		sample := g.sample(*n, *seed)
		g.report(stdout, name, sample, lab)
		cur, err := curated(name, *data)
		if err != nil {
			fmt.Fprintln(stderr, "hologram-bench graph:", err)
			return 1
		}
		g.refReport(stdout, name, cur)
		if *out != "" {
			if err := writeSample(filepath.Join(*out, name+"-"+*tag+".tsv"), sample, lab); err != nil {
				fmt.Fprintln(stderr, "hologram-bench graph:", err)
				return 1
			}
		}
	}
	return 0
}

// gTriple is a triple of the measured graph with the text of its first source event.
type gTriple struct {
	subj, pred, obj string
	speakerSubj     bool
	corpus          string
	source          string
	events          int
}

func (t gTriple) key() string {
	return memory.NameKey(t.subj) + "\t" + memory.NormalizePredicate(t.pred) + "\t" + memory.NameKey(t.obj)
}

type qualityGraph struct {
	triples []gTriple
	events  int
	lex     *embed.Lexicon
	tok     *embed.Tokenizer
	took    time.Duration
	// speakers are each corpus's speakers' names (the owner, LoCoMo's two participants).
	speakers map[string]map[string]bool
}

// buildGraph extracts every corpus of a set in batches of 16 events of one session, as the
// distiller does, and merges the facts into triples by name key (as the store does).
func buildGraph(ctx context.Context, set recallSet) (*qualityGraph, error) {
	lex := embed.NewLexicon(embed.LexiconOptions{})
	if err := lex.Load(ctx); err != nil {
		return nil, err
	}
	tok := embed.NewTokenizer(embed.TokenizerOptions{})
	g := &qualityGraph{lex: lex, tok: tok, speakers: map[string]map[string]bool{}}
	idx := map[string]int{}
	var id int64
	for _, c := range set.Corpora {
		var evs []memory.Event
		speakers := map[string]bool{}
		for si, st := range c.Steps {
			for _, be := range st.Events {
				id++
				e := memory.Event{ID: id, Session: fmt.Sprintf("%s/%d", c.ID, si), Role: be.Role, Partner: be.Partner,
					Content: be.Text, Time: be.Time}
				if set.Unit == "turn" {
					e.Session = c.ID // a LoCoMo conversation is one session
				}
				evs = append(evs, e)
				if be.Partner != "" {
					speakers[memory.NameKey(be.Partner)] = true
				}
			}
		}
		owner := corpusOwner(set, c, evs, tok)
		speakers[memory.NameKey(owner)] = true
		g.speakers[c.ID] = speakers
		rules := newQualityRules(owner, lex, tok)
		text := map[int64]string{}
		for _, e := range evs {
			text[e.ID] = e.Content
		}
		g.events += len(evs)
		t0 := time.Now()
		for _, b := range sessionBatches(evs, 16) {
			facts, _, err := rules.Extract(ctx, b)
			if err != nil {
				return nil, err
			}
			for _, f := range facts {
				if endsFact(f) {
					continue // a negation ends a triple and creates none
				}
				t := gTriple{subj: f.Subject, pred: memory.NormalizePredicate(f.Predicate), obj: f.Object,
					speakerSubj: speakers[memory.NameKey(f.Subject)], corpus: c.ID}
				if i, ok := idx[t.key()]; ok {
					g.triples[i].events += len(f.Sources)
					continue
				}
				if len(f.Sources) > 0 {
					t.source = text[f.Sources[0]]
				}
				t.events = len(f.Sources)
				idx[t.key()] = len(g.triples)
				g.triples = append(g.triples, t)
			}
		}
		g.took += time.Since(t0)
	}
	return g, nil
}

// corpusOwner names the owner of a corpus: a RealMem persona by name; a MADial user by the
// name its memory notes most often start with (they are written in the third person); LoCoMo
// has two speakers (the events' partners) and the default owner.
func corpusOwner(set recallSet, c benchCorpus, evs []memory.Event, tok *embed.Tokenizer) string {
	switch {
	case set.Unit == "session":
		return c.ID
	case strings.HasPrefix(set.Name, "madial"):
		count := map[string]int{}
		for _, e := range evs {
			tags, err := tok.Tag(e.Content)
			if err != nil || len(tags) == 0 {
				continue
			}
			if w := tags[0]; w.POS == "nr" || w.POS == "eng" || w.POS == "nrt" {
				count[w.Word]++
			}
		}
		best := ""
		for w, n := range count {
			if n > count[best] || n == count[best] && w < best {
				best = w
			}
		}
		if best != "" {
			return best
		}
	}
	return graph.DefaultOwner
}

// sessionBatches cuts events (chronological) into batches of at most n of one session.
func sessionBatches(evs []memory.Event, n int) [][]memory.Event {
	var out [][]memory.Event
	for i := 0; i < len(evs); {
		j := i
		for j < len(evs) && j-i < n && evs[j].Session == evs[i].Session {
			j++
		}
		out = append(out, evs[i:j])
		i = j
	}
	return out
}

// catchAll are the predicate names that say nothing typed (the list).
var catchAll = map[string]bool{"talks about": true, "mentions": true, "interested in": true, "related to": true, "topic": true}

// badObject reports whether an object is a single word that is neither a noun nor a name:
// English, not in WordNet's noun index and not capitalised; Chinese, one jieba word tagged
// d, a, r, p, c or u.
func (g *qualityGraph) badObject(obj string) bool {
	obj = strings.TrimSpace(obj)
	if strings.ContainsFunc(obj, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
		tags, err := g.tok.Tag(obj)
		if err != nil || len(tags) != 1 {
			return false
		}
		switch tags[0].POS {
		case "d", "a", "r", "p", "c", "u", "ad", "an", "uj", "ul", "uz", "ug", "uv", "ud":
			return true
		}
		return false
	}
	if strings.Contains(obj, " ") || obj == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(obj)
	if unicode.IsUpper(r) || unicode.IsDigit(r) {
		return unicode.IsDigit(r) && strings.IndexFunc(obj, unicode.IsLetter) < 0
	}
	_, noun := g.lex.NounLemma(strings.ToLower(obj))
	return !noun
}

func (g *qualityGraph) sample(n int, seed uint64) []gTriple {
	s := slices.Clone(g.triples)
	slices.SortFunc(s, func(a, b gTriple) int { return cmp.Compare(a.key(), b.key()) })
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s[:min(n, len(s))]
}

func (g *qualityGraph) report(w io.Writer, name string, sample []gTriple, lab map[string]string) {
	typed, other, bad := 0, 0, 0
	preds := map[string]int{}
	var bads []string
	for _, t := range g.triples {
		if !catchAll[t.pred] {
			typed++
		}
		if !t.speakerSubj {
			other++
		}
		if g.badObject(t.obj) {
			bad++
			if len(bads) < 10 {
				bads = append(bads, t.pred+" "+t.obj)
			}
		}
		preds[t.pred]++
	}
	n := max(len(g.triples), 1)
	fmt.Fprintf(w, "%s: %d events, %d triples (one per %.1f events), extraction %.0f events/s\n", name, g.events, len(g.triples),
		float64(g.events)/float64(n), float64(g.events)/max(g.took.Seconds(), 1e-9))
	fmt.Fprintf(w, "  typed predicates %.1f %%, subjects other than the owner/speakers %.1f %%, single-word objects neither noun nor name %d %v\n",
		100*float64(typed)/float64(n), 100*float64(other)/float64(n), bad, bads)
	type pc struct {
		p string
		n int
	}
	var ps []pc
	for p, c := range preds {
		ps = append(ps, pc{p, c})
	}
	slices.SortFunc(ps, func(a, b pc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.p, b.p)) })
	fmt.Fprint(w, "  predicates:")
	for _, p := range ps[:min(len(ps), 15)] {
		fmt.Fprintf(w, " %s %d;", p.p, p.n)
	}
	fmt.Fprintln(w)
	counts := map[string]int{}
	labelled := 0
	for _, t := range sample {
		if l := lab[t.key()]; l != "" {
			counts[l]++
			labelled++
		}
	}
	if labelled > 0 {
		fmt.Fprintf(w, "  sample of %d, %d labelled:", len(sample), labelled)
		for _, l := range []string{"meaningful", "vague", "junk", "wrong-subject"} {
			fmt.Fprintf(w, " %s %d (%.0f %%);", l, counts[l], 100*float64(counts[l])/float64(labelled))
		}
		fmt.Fprintln(w)
	}
}

// readLabels reads a labelled sample: TSV lines "label subject predicate object …"; the key is
// the triple.
func readLabels(file string) map[string]string {
	m := map[string]string{}
	f, err := os.Open(file)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		if len(p) < 4 || strings.HasPrefix(p[0], "#") || p[0] == "" {
			continue
		}
		t := gTriple{subj: p[1], pred: p[2], obj: p[3]}
		m[t.key()] = p[0]
	}
	return m
}

func writeSample(file string, sample []gTriple, lab map[string]string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# label\tsubject\tpredicate\tobject\tsource (first event, cut)\n")
	for _, t := range sample {
		src := strings.Join(strings.Fields(t.source), " ")
		if utf8.RuneCountInString(src) > 200 {
			src = string([]rune(src)[:200]) + "…"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", lab[t.key()], t.subj, t.pred, t.obj, src)
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
