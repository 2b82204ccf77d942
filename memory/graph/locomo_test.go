//go:build integration

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
)

// The LoCoMo measurement of the rules extractor: method and figures in docs/benchmarks.md, "Fact extraction".

// locomoPath finds shared/data/locomo/locomo-dev.json beside one of the package's ancestors.
func locomoPath(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "data", "locomo", "locomo-dev.json")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if os.Getenv("HOLOGRAM_CI") == "1" {
		t.Fatal("LoCoMo dev split (shared/data/locomo/locomo-dev.json) not found beside the repository")
	}
	t.Skip("LoCoMo dev split (shared/data/locomo/locomo-dev.json) not found beside the repository")
	return ""
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

type locomoSample struct {
	SampleID     string                                  `json:"sample_id"`
	Conversation map[string]json.RawMessage              `json:"conversation"`
	Observation  map[string]map[string][]json.RawMessage `json:"observation"`
}

// observation is one gold fact: its text, whom it is about, and its source turns.
type observation struct {
	text, speaker string
	turns         []locomoTurn
	speakers      [2]string // the conversation's two participants
}

var diaRe = regexp.MustCompile(`D:?(\d+):(\d+)`)

// diaIDs normalises a dia_id field: a string ("D1:3", "D1:3; D1:5", "D:11:26") or a list of them.
func diaIDs(raw json.RawMessage) []string {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		list = []string{s}
	}
	var out []string
	for _, s := range list {
		for _, m := range diaRe.FindAllStringSubmatch(s, -1) {
			out = append(out, "D"+m[1]+":"+m[2])
		}
	}
	return out
}

func loadObservations(t *testing.T) []observation {
	t.Helper()
	b, err := os.ReadFile(locomoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	var samples []locomoSample
	if err := json.Unmarshal(b, &samples); err != nil {
		t.Fatalf("parse LoCoMo: %v", err)
	}
	var out []observation
	for _, s := range samples {
		turns := map[string]locomoTurn{}
		var names [2]string
		for i, k := range []string{"speaker_a", "speaker_b"} {
			if err := json.Unmarshal(s.Conversation[k], &names[i]); err != nil {
				t.Fatalf("%s %s: %v", s.SampleID, k, err)
			}
		}
		for k, raw := range s.Conversation {
			if !strings.HasPrefix(k, "session_") || strings.HasSuffix(k, "date_time") {
				continue
			}
			var ts []locomoTurn
			if err := json.Unmarshal(raw, &ts); err != nil {
				t.Fatalf("%s %s: %v", s.SampleID, k, err)
			}
			for _, tu := range ts {
				turns[tu.DiaID] = tu
			}
		}
		keys := make([]string, 0, len(s.Observation))
		for k := range s.Observation {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for who, items := range s.Observation[k] {
				for _, item := range items {
					var pair []json.RawMessage
					if err := json.Unmarshal(item, &pair); err != nil || len(pair) != 2 {
						t.Fatalf("%s %s: observation %s is not [text, dia_id]", s.SampleID, k, item)
					}
					o := observation{speaker: who, speakers: names}
					if err := json.Unmarshal(pair[0], &o.text); err != nil {
						t.Fatalf("%s %s: observation text: %v", s.SampleID, k, err)
					}
					for _, id := range diaIDs(pair[1]) {
						if tu, ok := turns[id]; ok {
							o.turns = append(o.turns, tu)
						}
					}
					if len(o.turns) > 0 {
						out = append(out, o)
					}
				}
			}
		}
	}
	return out
}

// goldStop are the words that are not content words for the gold protocol: function words,
// pronouns, auxiliaries, frequent verbs (all forms) and vague nouns.
var goldStop = set(`a an the and or but so because as if than then that this these those which who whom
whose what when where why how while of in on at to for from with about into onto over under after
before during through by up down out off again also too very just still even only ever never not no
nor all any both each every few more most other some such own same can could will would shall should
may might must do does did doing done is am are was were be been being has have had having
i me my mine myself you your yours he him his himself she her hers herself it its itself we us our
ours they them their theirs themselves one ones someone something everything anything nothing
there here now today yesterday recently currently lately soon always often sometimes really
make makes made making feel feels felt feeling find finds found finding go goes went gone going get
gets got getting take takes took taken taking plan plans planned planning want wants wanted wanting
love loves loved loving like likes liked enjoy enjoys enjoyed enjoying think thinks thought thinking
say says said saying share shares shared sharing help helps helped helping give gives gave given
keep keeps kept see sees saw seen look looks looked looking try tries tried trying start starts
started starting begin began begun continue continues continued use uses used using come comes came
coming know knows knew known hope hopes hoped hoping mention mentions mentioned talk talks talked
talking tell tells told telling express expresses expressed show shows showed shown believe believes
believed consider considers considered decide decided decides also way lot lots thing things time
times kind part new recent other another many much several way ways`)

// goldEntities returns the gold entities of an observation: maximal runs of content words
// (words not in goldStop, not -ly adverbs, not -ed forms, not numbers, and not an -ing form
// right after an auxiliary), split at punctuation and possessives. Capitalised runs are the
// proper names; the others the noun phrases of its verbs' objects and subjects.
func goldEntities(text string) [][]string {
	var out [][]string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	prev := ""
	for _, tok := range tokens(text) {
		if !tok.spaceBefore {
			flush()
		}
		w := strings.ToLower(tok.text)
		content := !goldStop[w] && !isNumber(w) && len(w) > 1 &&
			!(len(w) > 4 && strings.HasSuffix(w, "ly")) && !(len(w) > 4 && strings.HasSuffix(w, "ed")) &&
			!(auxiliaries[prev] && strings.HasSuffix(w, "ing"))
		if content && len(cur) > 0 && isUpperStart(tok.text) != isUpperStart(cur[len(cur)-1]) {
			flush() // "Caroline painting": a name and a noun phrase
		}
		if content {
			cur = append(cur, tok.text)
		} else {
			flush()
		}
		if tok.poss {
			flush()
		}
		prev = w
	}
	flush()
	return out
}

// auxiliaries make the -ing form after them a verb ("is going").
var auxiliaries = set("is are was were be been am")

// lemmas returns the stems of the content words of a name (as goldEntities decides them).
func lemmas(words []string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		for _, part := range strings.FieldsFunc(strings.ToLower(w), func(r rune) bool { return r == '-' || r == ' ' }) {
			if goldStop[part] || len(part) < 2 || isNumber(part) {
				continue
			}
			m[embed.Stem(part)] = true
		}
	}
	return m
}

func overlap(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// prf is a micro precision/recall counter.
type prf struct{ tpPred, pred, tpGold, gold int }

func (c prf) scores() (p, r, f float64) {
	if c.pred > 0 {
		p = float64(c.tpPred) / float64(c.pred)
	}
	if c.gold > 0 {
		r = float64(c.tpGold) / float64(c.gold)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return p, r, f
}

// locomoScores are the figures of one extractor configuration on the dev split.
type locomoScores struct {
	facts, turns  int
	ents, entsAll prf // entities, participants excluded / included
	// patternFacts are the speaker-subject facts of the first-person patterns (not mentions,
	// not topics); speakerFacts also count the topics.
	patternFacts, speakerFacts prf
	ceiling                    prf // every chunk of the turns
}

// measureLoCoMo runs r on the source turns of every observation (docs/benchmarks.md, "Fact
// extraction", for the method).
func measureLoCoMo(t *testing.T, obs []observation, r *Rules) locomoScores {
	t.Helper()
	ctx := context.Background()
	var sc locomoScores
	for _, o := range obs {
		evs := make([]memory.Event, len(o.turns))
		for i, tu := range o.turns {
			text := tu.Text
			if tu.BlipCaption != "" {
				text += " [image: " + tu.BlipCaption + "]"
			}
			evs[i] = memory.Event{ID: int64(i + 1), Session: "locomo", Role: memory.RoleUser, Partner: tu.Speaker, Content: text}
		}
		sc.turns += len(evs)
		fs, _, err := r.Extract(ctx, evs)
		if err != nil {
			t.Fatal(err)
		}
		sc.facts += len(fs)
		participant := map[string]bool{memory.NameKey(o.speakers[0]): true, memory.NameKey(o.speakers[1]): true}

		var gold []map[string]bool
		var goldAll []map[string]bool
		for _, g := range goldEntities(o.text) {
			l := lemmas(g)
			if len(l) == 0 {
				continue
			}
			goldAll = append(goldAll, l)
			if !participant[memory.NameKey(strings.Join(g, " "))] {
				gold = append(gold, l)
			}
		}
		predNames := map[string]bool{}
		for _, f := range fs {
			predNames[f.Subject] = true
			predNames[f.Object] = true
		}
		var pred, predAll []map[string]bool
		for n := range predNames {
			l := lemmas(strings.Fields(n))
			if len(l) == 0 {
				continue
			}
			predAll = append(predAll, l)
			if !participant[memory.NameKey(n)] {
				pred = append(pred, l)
			}
		}
		count := func(c *prf, pred, gold []map[string]bool) {
			c.pred += len(pred)
			c.gold += len(gold)
			for _, p := range pred {
				for _, g := range gold {
					if overlap(p, g) {
						c.tpPred++
						break
					}
				}
			}
			for _, g := range gold {
				for _, p := range pred {
					if overlap(p, g) {
						c.tpGold++
						break
					}
				}
			}
		}
		count(&sc.ents, pred, gold)
		// The same-run reference: every noun-phrase chunk of the source turns (the gold
		// protocol applied to them) as if extracted: the recall any extraction from these turns
		// can reach, at the precision of keeping everything.
		var chunks []map[string]bool
		for _, e := range evs {
			for _, c := range goldEntities(e.Content) {
				if l := lemmas(c); len(l) > 0 && !participant[memory.NameKey(strings.Join(c, " "))] {
					chunks = append(chunks, l)
				}
			}
		}
		count(&sc.ceiling, chunks, gold)
		count(&sc.entsAll, predAll, goldAll)

		// Facts whose subject is the observation's speaker: right when the object overlaps a
		// gold entity; the observation is found when one of them is right.
		speakerFacts := func(c *prf, topics bool) {
			c.gold++
			found := false
			for _, f := range fs {
				if f.Predicate == "mentions" || f.Predicate == PredicateTalksAbout && !topics ||
					memory.NameKey(f.Subject) != memory.NameKey(o.speaker) {
					continue
				}
				c.pred++
				obj := lemmas(strings.Fields(f.Object))
				for _, g := range gold {
					if overlap(obj, g) {
						c.tpPred++
						found = true
						break
					}
				}
			}
			if found {
				c.tpGold++
			}
		}
		speakerFacts(&sc.patternFacts, false)
		speakerFacts(&sc.speakerFacts, true)
	}
	return sc
}

func TestLoCoMoRules(t *testing.T) {
	obs := loadObservations(t)
	if len(obs) < 600 {
		t.Fatalf("%d observations with source turns, want the dev split's 677", len(obs))
	}
	// Topics off: the patterns and mentions alone (the extractor before topics).
	base := measureLoCoMo(t, obs, NewRules(RulesOptions{MaxTopics: -1}))
	t.Logf("LoCoMo dev: %d observations, %d source turns", len(obs), base.turns)
	cp, cr, cf := base.ceiling.scores()
	t.Logf("reference, every chunk of the turns: P %.3f R %.3f F1 %.3f (%d chunks)", cp, cr, cf, base.ceiling.pred)
	logRow := func(name string, sc locomoScores) {
		ep, er, ef := sc.ents.scores()
		ap, ar, af := sc.entsAll.scores()
		pp, pr, pf := sc.patternFacts.scores()
		sp, sr, sf := sc.speakerFacts.scores()
		t.Logf("%s: %d facts", name, sc.facts)
		t.Logf("  entities (participants excluded): P %.3f R %.3f F1 %.3f (%d predicted, %d gold)", ep, er, ef, sc.ents.pred, sc.ents.gold)
		t.Logf("  entities (participants included): P %.3f R %.3f F1 %.3f (%d predicted, %d gold)", ap, ar, af, sc.entsAll.pred, sc.entsAll.gold)
		t.Logf("  speaker-subject facts, patterns: P %.3f R %.3f F1 %.3f (%d facts)", pp, pr, pf, sc.patternFacts.pred)
		t.Logf("  speaker-subject facts, with topics: P %.3f R %.3f F1 %.3f (%d facts)", sp, sr, sf, sc.speakerFacts.pred)
	}
	logRow("topics off (MaxTopics -1)", base)

	// The topics at several bounds, logged for docs/benchmarks.md (8 shows what more would give).
	// The default is not pinned to the best of them on this evaluation data: a test may check
	// that a default is sane, never that it equals an optimum. Topics are off by default
	// (docs/memory-graph.md: the labelled samples found them vague or junk).
	for _, n := range []int{1, 2, 3, 5, 8} {
		logRow(fmt.Sprintf("MaxTopics %d", n), measureLoCoMo(t, obs, NewRules(RulesOptions{MaxTopics: n})))
	}
	if DefaultMaxTopics >= 0 && (DefaultMaxTopics < 1 || DefaultMaxTopics > 8) {
		t.Errorf("DefaultMaxTopics is %d: topics are off by default (negative) or bounded (1–8)", DefaultMaxTopics)
	}
	def := measureLoCoMo(t, obs, NewRules(RulesOptions{}))
	logRow("default", def)
	topics := measureLoCoMo(t, obs, NewRules(RulesOptions{MaxTopics: 5}))

	// Floors a few points under the measured figures (docs/benchmarks.md, "Fact extraction"):
	// a regression fails.
	bp, br, _ := base.ents.scores()
	bap, bar, _ := base.entsAll.scores()
	bsp, bsr, _ := base.patternFacts.scores()
	dp, _, _ := def.ents.scores()
	tp, tr, tf := topics.ents.scores()
	tsp, tsr, _ := topics.speakerFacts.scores()
	floors := []struct {
		name     string
		got, min float64
	}{
		{"topics off: entity precision", bp, 0.78},
		{"topics off: entity recall", br, 0.03},
		{"topics off: entity precision (participants included)", bap, 0.85},
		{"topics off: entity recall (participants included)", bar, 0.05},
		{"topics off: speaker fact precision", bsp, 0.76},
		{"topics off: speaker fact recall", bsr, 0.10},
		{"default: entity precision", dp, 0.78},
		{"MaxTopics 5: entity precision", tp, 0.50},
		{"MaxTopics 5: entity recall", tr, 0.40},
		{"MaxTopics 5: entity F1", tf, 0.45},
		{"MaxTopics 5: speaker fact precision (topics included)", tsp, 0.50},
		{"MaxTopics 5: speaker fact recall (topics included)", tsr, 0.84},
	}
	for _, f := range floors {
		if f.got < f.min {
			t.Errorf("%s %.3f is under its floor %.3f", f.name, f.got, f.min)
		}
	}
}
