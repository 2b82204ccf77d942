// Package scene learns scenes: recurring situations of the agent's conversations (ARCHITECTURE.md
// §4). A situation is summed up as a fingerprint, a set of weighted features:
//
//	channel:<channel>  1.0   where the conversation happens ("qq", "api", "waiter"…)
//	partner:<partner>  1.0   who the agent talks with
//	tool:<name>        0.8   each tool used in the turn
//	topic:<term>       0.4   each of the turn's most specific terms (see [Topics])
//	tod:<bucket>       0.2   the time of day: night, morning, afternoon or evening
//
// Two fingerprints compare by weighted Jaccard similarity ([Similarity]). A fingerprint that
// resembles an earlier one (similarity ≥ 0.5) joins it; a scene emerges at its second
// occurrence (minimum evidence 2) and is used for recall from then on (similarity ≥ 0.35). Its
// strength grows by one per recurrence and halves every 30 days, so scenes that stop recurring
// fade and are removed. Declared scenes come from a session key such as "chan:qq/peer:group_1"
// and take their features from the key alone.
//
// The [Tracker] keeps scenes in a [memory.SceneStore] and tags events with their scene's key;
// memory/cold boosts recalled events whose scene matches the asker's.
//
// The package imports only the standard library and memory.
package scene

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Feature weights (ARCHITECTURE.md §4).
const (
	weightChannel = 1.0
	weightPartner = 1.0
	weightTool    = 0.8
	weightTopic   = 0.4
	weightTOD     = 0.2
)

// Fingerprint maps a feature "kind:value" (e.g. "channel:qq", "tool:shell") to its weight.
type Fingerprint map[string]float64

// Obs is one observation of a situation: a turn's channel, partner, the tools it used, its
// topics (see [Topics]) and its time.
type Obs struct {
	Channel, Partner string
	Tools            []string
	Topics           []string
	Time             time.Time
}

// Features returns the fingerprint of o. Values are lower-cased and empty ones skipped; the time
// of day is bucketed in loc (nil: o.Time's own location) as night [0, 6), morning [6, 12),
// afternoon [12, 18) or evening [18, 24); a zero o.Time has no time-of-day feature.
func Features(o Obs, loc *time.Location) Fingerprint {
	fp := Fingerprint{}
	add := func(kind, value string, w float64) {
		if v := strings.ToLower(strings.TrimSpace(value)); v != "" {
			fp[kind+":"+v] = w
		}
	}
	add("channel", o.Channel, weightChannel)
	add("partner", o.Partner, weightPartner)
	for _, t := range o.Tools {
		add("tool", t, weightTool)
	}
	for _, t := range o.Topics {
		add("topic", t, weightTopic)
	}
	if !o.Time.IsZero() {
		t := o.Time
		if loc != nil {
			t = t.In(loc)
		}
		add("tod", timeOfDay(t.Hour()), weightTOD)
	}
	return fp
}

// timeOfDay buckets an hour of the day.
func timeOfDay(hour int) string {
	switch {
	case hour < 6:
		return "night"
	case hour < 12:
		return "morning"
	case hour < 18:
		return "afternoon"
	}
	return "evening"
}

// Declared returns the fingerprint of a declared scene key: "chan:<channel>/peer:<partner>",
// where either part may be left out (but not both), e.g. "chan:qq/peer:group_1", "chan:waiter"
// or "peer:bob". Values are lower-cased. Any other key is an error naming it.
func Declared(key string) (Fingerprint, error) {
	bad := func(why string) (Fingerprint, error) {
		return nil, fmt.Errorf(`scene key %q: %s (want "chan:<channel>/peer:<partner>", either part optional)`, key, why)
	}
	parts := strings.Split(key, "/")
	if len(parts) > 2 {
		return bad("too many parts")
	}
	fp := Fingerprint{}
	for i, p := range parts {
		prefix, value, ok := strings.Cut(p, ":")
		value = strings.ToLower(strings.TrimSpace(value))
		switch {
		case !ok:
			return bad(fmt.Sprintf("part %q has no kind", p))
		case value == "":
			return bad(fmt.Sprintf("part %q has no value", p))
		case prefix == "chan" && i == 0:
			fp["channel:"+value] = weightChannel
		case prefix == "peer" && (i == 1 || len(parts) == 1):
			fp["partner:"+value] = weightPartner
		default:
			return bad(fmt.Sprintf("unexpected part %q", p))
		}
	}
	return fp, nil
}

// Similarity is the weighted Jaccard similarity of two fingerprints: the sum over the union of
// their features of the smaller weight divided by the sum of the larger one (a missing feature
// weighs 0). It is 1 for equal prints, 0 for disjoint ones and 0 for two empty ones. The sums run
// in feature order, so equal inputs give bit-equal results.
func Similarity(a, b Fingerprint) float64 {
	union := make([]string, 0, len(a)+len(b))
	for f := range a {
		union = append(union, f)
	}
	for f := range b {
		if _, ok := a[f]; !ok {
			union = append(union, f)
		}
	}
	sort.Strings(union)
	var lo, hi float64
	for _, f := range union {
		wa, wb := a[f], b[f]
		lo += math.Min(wa, wb)
		hi += math.Max(wa, wb)
	}
	if hi == 0 {
		return 0
	}
	return lo / hi
}

// Topics returns the n most specific of terms: those with the highest inverse document frequency,
// i.e. found in the fewest indexed documents, ties broken by their order in terms. Terms found in
// no document (unknown words, typos) are skipped, as are empty and repeated ones. df returns each
// term's document frequency and the number of documents (memory.Index.DocFreq with a context).
func Topics(terms []string, df func([]string) ([]int, int, error), n int) ([]string, error) {
	if n <= 0 || len(terms) == 0 {
		return nil, nil
	}
	seen := make(map[string]bool, len(terms))
	uniq := make([]string, 0, len(terms))
	for _, t := range terms {
		if t != "" && !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	if len(uniq) == 0 {
		return nil, nil
	}
	counts, _, err := df(uniq)
	if err != nil {
		return nil, fmt.Errorf("scene topics: %w", err)
	}
	if len(counts) != len(uniq) {
		return nil, fmt.Errorf("scene topics: %d document frequencies for %d terms", len(counts), len(uniq))
	}
	type term struct {
		t  string
		df int
	}
	found := make([]term, 0, len(uniq))
	for i, t := range uniq {
		if counts[i] > 0 {
			found = append(found, term{t, counts[i]})
		}
	}
	// The idf falls as the document frequency grows, whatever the number of documents.
	sort.SliceStable(found, func(i, j int) bool { return found[i].df < found[j].df })
	out := make([]string, 0, min(n, len(found)))
	for _, t := range found[:min(n, len(found))] {
		out = append(out, t.t)
	}
	return out, nil
}
