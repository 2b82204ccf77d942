package main

import (
	"math"
	"regexp"
	"sort"
	"strings"
)

// The same-run baseline of every recall set: plain BM25 exactly as ../shared/tools/bm25_locomo.py
// computes it (k1 1.2, b 0.75, its stop list, lower-cased Latin words and digits, Han runs as
// character bigrams, no stemming, no segmenter), over the same candidates as the product. The
// documents are the set's own: a LoCoMo turn is "speaker: text [shares caption] session date", a
// RealMem session is all its turns and its date (the stronger variant), a MADial memory is its
// event and date. TestBM25MatchesPython checks the port against the script on a small file.

var bm25Stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an the and or of to in on at for with is are was were be been it its this that i you he she they we my your his her their our me him them us do did does what when where who whom which why how have has had not no so as by from about into than then there here up down out over just can could would should will shall may might must am s t") {
		m[w] = true
	}
	return m
}()

var (
	bm25Word = regexp.MustCompile(`[a-z0-9]+`)
	bm25Han  = regexp.MustCompile(`[\x{4e00}-\x{9fff}]+`)
)

// bm25Tokens is the script's tok(): Latin words of the lower-cased text without stop words, then
// each Han run as its character bigrams (a one-character run as itself).
func bm25Tokens(s string) []string {
	var out []string
	for _, w := range bm25Word.FindAllString(strings.ToLower(s), -1) {
		if !bm25Stop[w] {
			out = append(out, w)
		}
	}
	for _, run := range bm25Han.FindAllString(s, -1) {
		r := []rune(run)
		for i := 0; i < max(1, len(r)-1); i++ {
			out = append(out, string(r[i:min(i+2, len(r))]))
		}
	}
	return out
}

// bm25Index is a growing collection of documents; statistics are those of the documents added
// so far (RealMem's queries rank only the sessions before their own).
type bm25Index struct {
	units []string
	texts []string
	tfs   []map[string]int
	lens  []int
	total int
	df    map[string]int
}

func newBM25() *bm25Index { return &bm25Index{df: map[string]int{}} }

func (x *bm25Index) add(unit, text string) {
	toks := bm25Tokens(text)
	tf := map[string]int{}
	for _, t := range toks {
		tf[t]++
	}
	for t := range tf {
		x.df[t]++
	}
	x.units = append(x.units, unit)
	x.texts = append(x.texts, text)
	x.tfs = append(x.tfs, tf)
	x.lens = append(x.lens, len(toks))
	x.total += len(toks)
}

// rank returns the document indexes best first; ties keep the documents' order (Python's
// stable sort on -score).
func (x *bm25Index) rank(query string) []int {
	n := len(x.tfs)
	if n == 0 {
		return nil
	}
	avgdl := float64(x.total) / float64(n)
	qt := bm25Tokens(query)
	sc := make([]float64, n)
	for i, tf := range x.tfs {
		v := 0.0
		norm := 1.2 * (1 - 0.75 + 0.75*float64(x.lens[i])/avgdl)
		for _, w := range qt { // duplicates count again, as in the script
			if f := tf[w]; f > 0 {
				nw := float64(x.df[w])
				idf := math.Log(1 + (float64(n)-nw+0.5)/(nw+0.5))
				v += idf * float64(f) * 2.2 / (float64(f) + norm)
			}
		}
		sc[i] = v
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sc[order[a]] > sc[order[b]] })
	return order
}
