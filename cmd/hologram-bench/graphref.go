package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Reference matching (docs/memory-graph.md, "Reference matching"): the graph's named entities
// against the key entities of curated statements — LoCoMo dev's observation facts and RealMem's
// extracted_memory — per corpus (a LoCoMo conversation, a RealMem persona).

// curated returns, per corpus id, the curated statements of a set (nil for a set without any).
func curated(set, data string) (map[string][]string, error) {
	out := map[string][]string{}
	switch set {
	case "locomo":
		raw, err := os.ReadFile(filepath.Join(data, "locomo", "locomo-dev.json"))
		if err != nil {
			return nil, err
		}
		var samples []struct {
			SampleID    string                                  `json:"sample_id"`
			Observation map[string]map[string][]json.RawMessage `json:"observation"`
		}
		if err := json.Unmarshal(raw, &samples); err != nil {
			return nil, err
		}
		for _, s := range samples {
			for _, byWho := range s.Observation {
				for _, items := range byWho {
					for _, it := range items {
						var pair []json.RawMessage
						var text string
						if json.Unmarshal(it, &pair) == nil && len(pair) > 0 && json.Unmarshal(pair[0], &text) == nil {
							out[s.SampleID] = append(out[s.SampleID], text)
						}
					}
				}
			}
		}
	case "realmem":
		files, err := filepath.Glob(filepath.Join(data, "realmem", "*_dialogues_*.json"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var d struct {
				Meta struct {
					Person string `json:"person_name"`
				} `json:"_metadata"`
				Dialogues []struct {
					Memory []struct {
						Content json.RawMessage `json:"content"`
					} `json:"extracted_memory"`
				} `json:"dialogues"`
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			id := d.Meta.Person
			if id == "" {
				id = strings.TrimSuffix(filepath.Base(f), ".json")
			}
			seen := map[string]bool{}
			for _, s := range d.Dialogues {
				for _, m := range s.Memory {
					text := bracketRe.ReplaceAllString(jsonText(m.Content), "")
					if !seen[text] {
						seen[text] = true
						out[id] = append(out[id], text)
					}
				}
			}
		}
	default:
		return nil, nil
	}
	return out, nil
}

var (
	bracketRe  = regexp.MustCompile(`【[^】]*】`)
	sentenceRe = regexp.MustCompile(`[.!?]\s+`)
)

// refStop are capitalised words that name no entity of the owner's world: the roles of the
// statements ("User", "Assistant"), pronouns and determiners that start a sentence, calendar
// words.
var refStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("user users assistant the a an i he she they we it this that these those his her their our my " +
		"monday tuesday wednesday thursday friday saturday sunday january february march april may june july " +
		"august september october november december and or but in on at of for to with by from as after before " +
		"when while if also both each every all some") {
		m[w] = true
	}
	return m
}()

// keyEntities are the key entities of a statement: each maximal run of capitalised words
// (joined by "of", "de", "the" or "&"), its leading and trailing stop words dropped, the
// corpus's speakers left out; normalised by [refKey].
func keyEntities(text string, speakers map[string]bool) []string {
	var out []string
	var run []string
	flush := func() {
		for len(run) > 0 && refStop[strings.ToLower(run[0])] {
			run = run[1:]
		}
		for len(run) > 0 && refStop[strings.ToLower(run[len(run)-1])] {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			if k := refKey(strings.Join(run, " ")); k != "" && !speakers[k] {
				out = append(out, k)
			}
		}
		run = nil
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",.;:!?()\"“”", r) }) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		r := []rune(w)
		switch {
		case len(r) > 0 && unicode.IsUpper(r[0]):
			run = append(run, w)
		case len(run) > 0 && (w == "of" || w == "de" || w == "the" || w == "&"):
			run = append(run, w)
		default:
			flush()
		}
	}
	flush()
	return out
}

// refKey normalises a name for matching: lower case, possessives dropped, each word without a
// plural -s, stop words out.
func refKey(name string) string {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(name)) {
		w = strings.Trim(strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s"), "'\"-")
		if w == "" || refStop[w] {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// refMatch reports whether two normalised names match: the words of one are a contiguous run of
// the other's ("lgbtq" and "lgbtq support group", "amy ellis nutt" and "nutt").
func refMatch(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return strings.Contains(" "+a+" ", " "+b+" ") || strings.Contains(" "+b+" ", " "+a+" ")
}

// refReport measures the graph's named entities against the curated statements' key entities,
// per corpus, and lists up to 20 failures of each kind.
func (g *qualityGraph) refReport(w io.Writer, name string, cur map[string][]string) {
	if cur == nil {
		return
	}
	var keysN, keysHit, entsN, entsHit int
	var missed, wrong []string
	corpora := make([]string, 0, len(cur))
	for c := range cur {
		corpora = append(corpora, c)
	}
	sort.Strings(corpora)
	for _, c := range corpora {
		speakers := map[string]bool{}
		for s := range g.speakers[c] {
			speakers[refKey(s)] = true
			speakers[refKey(firstField(s))] = true
		}
		// A capitalised word that starts a sentence is a name only when the corpus's
		// statements also capitalise it inside one ("According", "Painting" are not).
		mid := map[string]bool{}
		for _, st := range cur[c] {
			for _, sent := range sentenceRe.Split(st, -1) {
				f := strings.Fields(sent)
				for i := 1; i < len(f); i++ {
					if r := []rune(f[i]); len(r) > 0 && unicode.IsUpper(r[0]) {
						mid[refKey(f[i])] = true
					}
				}
			}
		}
		keys := map[string]bool{}
		for _, st := range cur[c] {
			for _, sent := range sentenceRe.Split(st, -1) {
				first := ""
				if f := strings.Fields(sent); len(f) > 0 {
					first = refKey(f[0])
				}
				for _, k := range keyEntities(sent, speakers) {
					if k == first && !mid[k] {
						continue
					}
					keys[k] = true
				}
			}
		}
		ents := map[string]bool{}
		for _, t := range g.triples {
			if t.corpus != c {
				continue
			}
			for _, n := range []string{t.subj, t.obj} {
				if r := []rune(n); len(r) > 0 && unicode.IsUpper(r[0]) && !strings.Contains(n, "'s ") {
					if k := refKey(n); k != "" && !speakers[k] {
						ents[k] = true
					}
				}
			}
		}
		for k := range keys {
			keysN++
			if slices.ContainsFunc(mapKeys(ents), func(e string) bool { return refMatch(k, e) }) {
				keysHit++
			} else if len(missed) < 20 {
				missed = append(missed, c+": "+k)
			}
		}
		for e := range ents {
			entsN++
			if slices.ContainsFunc(mapKeys(keys), func(k string) bool { return refMatch(k, e) }) {
				entsHit++
			} else if len(wrong) < 20 {
				wrong = append(wrong, c+": "+e)
			}
		}
	}
	fmt.Fprintf(w, "  reference (%s curated statements): key-entity recall %.3f (%d/%d), precision %.3f (%d/%d)\n",
		name, ratio(keysHit, keysN), keysHit, keysN, ratio(entsHit, entsN), entsHit, entsN)
	sort.Strings(missed)
	sort.Strings(wrong)
	fmt.Fprintf(w, "    missed key entities: %s\n", strings.Join(missed, "; "))
	fmt.Fprintf(w, "    graph names no statement has: %s\n", strings.Join(wrong, "; "))
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// jsonText is the text of a JSON value: a string as it is, an object's or array's strings
// joined.
func jsonText(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var parts []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			parts = append(parts, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := mapKeysAny(x)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return strings.Join(parts, ". ")
}

func mapKeysAny(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
