package cold

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Params holds every retrieval parameter of recall, so that an ablation is a setting, not an
// edit. [DefaultParams] documents the defaults; the owner may override any of them with the
// `[memory.recall]` config keys (the names below), and the recall benchmark with --param. The
// same values serve every language and every kind of conversation.
//
// Defaults were chosen as whole-method settings over all the dev sets together (LoCoMo,
// RealMem, MADial zh and en; docs/benchmarks.md), never per question or per set.
type Params struct {
	// MaxCands is how many best BM25 matches are considered per query (at least 20, 6 per
	// result wanted, at most this).
	MaxCands int
	// PartnerBoost: score × (1 + PartnerBoost) for events said by the one partner the query
	// names.
	PartnerBoost float64
	// DateBoost is added for events on a date the query names (±1 day; same month if no day).
	DateBoost float64
	// PrevWeight, Prev2Weight and NextWeight: the share of the previous turn's, the one before
	// it, and the next turn's base score an event inherits (neighbouring-turn context) within a
	// burst of conversation (gaps under BurstGap).
	PrevWeight, Prev2Weight, NextWeight float64
	BurstGap                            time.Duration
	// MaxNeighbour bounds the events whose neighbours are fetched for the context step (3 per
	// result wanted, at most this).
	MaxNeighbour int
	// BesidePen: past the first PureTop picks, an event right beside one chosen competes at
	// this fraction of its score (diversity). 1 turns diversity off.
	BesidePen float64
	PureTop   int
	// SceneBoost: score × (1 + SceneBoost × similarity) for events of a scene the asker is in.
	SceneBoost float64
	// PassageTokens bounds what a hit shows of a long message: a longer event is recalled as its
	// best passage of at most this many tokens (passage.go). 0 recalls whole events.
	PassageTokens int
	// Coherence: score × (1 + Coherence × coverage), coverage being the share of the query's
	// terms (IDF-weighted, saturating) that the event's episode holds (coherence.go). 0 off.
	Coherence float64
	// Episode and EpisodeTerms: each candidate episode is scored as one BM25 document and the
	// score added to its events' in proportion to the best event's, weighted Episode × min(1,
	// query terms / EpisodeTerms): long queries describe a topic, short ones name a fact
	// (episode.go). 0 off.
	Episode      float64
	EpisodeTerms int
	// EpisodeMinTerms: a query of fewer distinct terms names a fact and skips the episode step
	// (its weight would be under EpisodeMinTerms / EpisodeTerms of the best score).
	EpisodeMinTerms int
	// EpisodeRepeat: past the first PureTop picks, each pick from an episode multiplies the
	// effective score of the other events of that episode by this (diversity across episodes:
	// a list of recalls should cover the conversations a topic came up in, not retell one).
	// 1 turns it off.
	EpisodeRepeat float64
	// Recency and RecencyDays: an episode's score × (1 + Recency × e^(−age / RecencyDays)),
	// age in days before the newest episode found (episode.go): a message that goes on with a
	// plan usually goes on with its latest conversation. Recency 0: off.
	Recency, RecencyDays float64
	// EpisodeQTF: a term the query says n times weighs n times in the episode score.
	EpisodeQTF bool
	// DenseZ: an event counts on the dense side when its cosine to the query is at least this
	// many standard deviations above the mean cosine of every event searched.
	DenseZ float64
	// ImageZ is DenseZ for image blocks' vectors (a model that embeds images): an image counts
	// when its cosine to the query is at least this many standard deviations above the mean
	// cosine of every image searched. Image–text cosines have a range of their own, so they are
	// judged among images. Not calibrated on a real CLIP model (that needs a benchmark with
	// images): 1.5 rather than DenseZ's 2 because with 2 the designed test model's pure blue did
	// not count among 100 distinct colours (in its 3-dimensional space the cosines spread from
	// -1 to 1, mean 0.12, sd 0.48, so mean + 2 sd is above 1).
	ImageZ float64
}

// DefaultParams returns the defaults.
func DefaultParams() Params {
	return Params{
		MaxCands:        200,
		PartnerBoost:    0.75,
		DateBoost:       2.0,
		PrevWeight:      0.5,
		Prev2Weight:     0.2,
		NextWeight:      0.1,
		BurstGap:        time.Hour,
		MaxNeighbour:    60,
		BesidePen:       0.85,
		PureTop:         4,
		SceneBoost:      0.25,
		DenseZ:          2.0,
		ImageZ:          1.5,
		Coherence:       2.0,
		PassageTokens:   80,
		Episode:         1.5,
		EpisodeTerms:    50,
		EpisodeMinTerms: 4,
		EpisodeRepeat:   1,
		Recency:         1,
		RecencyDays:     20,
		EpisodeQTF:      true,
	}
}

// paramKeys maps the config key names to the fields (durations in seconds, counts rounded).
func (p *Params) fields() map[string]any {
	return map[string]any{
		"max_candidates":    &p.MaxCands,
		"partner_boost":     &p.PartnerBoost,
		"date_boost":        &p.DateBoost,
		"prev_weight":       &p.PrevWeight,
		"prev2_weight":      &p.Prev2Weight,
		"next_weight":       &p.NextWeight,
		"burst_gap_seconds": &p.BurstGap,
		"max_neighbour":     &p.MaxNeighbour,
		"beside_penalty":    &p.BesidePen,
		"pure_top":          &p.PureTop,
		"scene_boost":       &p.SceneBoost,
		"dense_z":           &p.DenseZ,
		"image_z":           &p.ImageZ,
		"passage_tokens":    &p.PassageTokens,
		"coherence":         &p.Coherence,
		"episode":           &p.Episode,
		"episode_terms":     &p.EpisodeTerms,
		"episode_min_terms": &p.EpisodeMinTerms,
		"episode_repeat":    &p.EpisodeRepeat,
		"recency":           &p.Recency,
		"recency_days":      &p.RecencyDays,
		"episode_qtf":       &p.EpisodeQTF,
	}
}

// ParamNames lists the keys [Params.With] accepts, sorted.
func ParamNames() []string {
	var p Params
	var out []string
	for k := range p.fields() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// With returns p with the named overrides applied (the `[memory.recall]` keys). An unknown
// name, a negative or non-finite value is an error naming it.
func (p Params) With(over map[string]float64) (Params, error) {
	f := p.fields()
	var bad []string
	for name, v := range over {
		ptr, ok := f[name]
		if !ok {
			bad = append(bad, fmt.Sprintf("unknown recall parameter %q (known: %s)", name, strings.Join(ParamNames(), ", ")))
			continue
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			bad = append(bad, fmt.Sprintf("recall parameter %s must be a finite number ≥ 0, got %g", name, v))
			continue
		}
		switch x := ptr.(type) {
		case *int:
			*x = int(math.Round(v))
		case *bool:
			*x = v != 0
		case *float64:
			*x = v
		case *time.Duration:
			*x = time.Duration(v * float64(time.Second))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return p, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return p, nil
}
