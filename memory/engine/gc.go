package engine

import (
	"context"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/graph"
)

// coolAfter is how long a session stays idle before GC cools its window: every L1 event but
// the pinned recent ones sinks to L2 (a turn would sink them anyway; cooling lets distillation
// reach the events of conversations that stopped).
const coolAfter = 24 * time.Hour

// GCReport is what one GC pass did.
type GCReport struct {
	Cooled, Distilled, Entities, Triples, Confirmed, Superseded, Decayed int
	Extractor                                                            string // "llm", "rules" or "llm+rules"
	Took                                                                 time.Duration
}

// GC runs one pass of cooling, distillation and scene decay. Passes never overlap (a second
// caller waits for the first); each step commits in small transactions, so an interrupted pass
// loses nothing and a rerun does not duplicate.
func (m *Engine) GC(ctx context.Context) (GCReport, error) {
	m.gcMu.Lock()
	defer m.gcMu.Unlock()
	t0 := time.Now()
	var rep GCReport
	var err error
	if err := m.turns.flush(ctx); err != nil {
		return rep, fmt.Errorf("memory gc: the turns' facts: %w", err)
	}
	if rep.Cooled, err = m.cool(ctx); err != nil {
		return rep, fmt.Errorf("memory gc: cooling: %w", err)
	}
	d, err := m.distiller()
	if err != nil {
		return rep, fmt.Errorf("memory gc: %w", err)
	}
	dr, err := d.Run(ctx, 0)
	rep.Distilled, rep.Entities, rep.Triples, rep.Confirmed, rep.Superseded, rep.Extractor =
		dr.Events, dr.Entities, dr.Triples, dr.Confirmed, dr.Superseded, dr.Extractor
	if err != nil {
		return rep, fmt.Errorf("memory gc: distillation: %w", err)
	}
	if rep.Decayed, err = m.scenes.Decay(ctx); err != nil {
		return rep, fmt.Errorf("memory gc: scene decay: %w", err)
	}
	rep.Took = time.Since(t0)
	m.log.Info("memory gc", "cooled", rep.Cooled, "distilled", rep.Distilled, "entities", rep.Entities, "triples", rep.Triples,
		"superseded", rep.Superseded, "extractor", rep.Extractor, "decayed", rep.Decayed, "ms", rep.Took.Milliseconds())
	return rep, nil
}

// cool sinks the L1 events of sessions idle for coolAfter to L2, but the recent pinned ones.
func (m *Engine) cool(ctx context.Context) (int, error) {
	sessions, err := m.store.ListSessions(ctx)
	if err != nil {
		return 0, err
	}
	now := m.clock()
	n := 0
	for _, s := range sessions {
		if now.Sub(s.Updated) < coolAfter {
			continue
		}
		evs, err := m.store.LayerEvents(ctx, s.ID, memory.LayerL1)
		if err != nil {
			return n, err
		}
		if len(evs) <= m.cfg.Recent {
			continue
		}
		ids := make([]int64, 0, len(evs)-m.cfg.Recent)
		for _, e := range evs[:len(evs)-m.cfg.Recent] {
			ids = append(ids, e.ID)
		}
		m.mu.Lock()
		err = m.store.SetLayer(ctx, ids, memory.LayerL2)
		if err == nil {
			for _, id := range ids {
				delete(m.recalled, id)
			}
			m.dropFromWindows(ids)
			delete(m.windows, s.ID)
		}
		m.mu.Unlock()
		if err != nil {
			return n, err
		}
		n += len(ids)
	}
	return n, nil
}

// distiller builds the distiller for a pass: the LLM extractor when configured (and, in "auto",
// when a provider is set), with the rules as fallback; the rules alone otherwise.
func (m *Engine) distiller() (*graph.Distiller, error) { return m.distillerWith(nil) }

// distillerWith is distiller with its options adjusted by adjust (nil: none).
func (m *Engine) distillerWith(adjust func(*graph.Options)) (*graph.Distiller, error) {
	cfg := m.opts.Config
	var ex graph.Extractor
	if c := m.opts.Completer; c != nil {
		switch cfg.Extractor {
		case "llm":
			ex = graph.NewLLM(c, graph.LLMOptions{})
		case "auto", "":
			if m.opts.HaveLLM != nil && m.opts.HaveLLM() {
				ex = graph.NewLLM(c, graph.LLMOptions{})
			}
		}
	}
	rules := m.rules()
	o := graph.Options{Graph: m.store, Extractor: ex, Fallback: rules, Clock: m.clock,
		MaxAccesses: cfg.DistillAccesses, Idle: cfg.DistillIdle, Log: m.log}
	if adjust != nil {
		adjust(&o)
	}
	return graph.NewDistiller(o)
}

// rules is the LLM-free extractor as distillation and the turns' facts use it.
func (m *Engine) rules() *graph.Rules {
	return graph.NewRules(graph.RulesOptions{Keywords: m.keywords, Lexicon: m.opts.Lexicon, Tag: m.opts.Tag})
}

// keywords are the rules extractor's Chinese topics: the text's jieba words of two or more
// characters, rarest in the memory first (document frequency, as recall weighs them).
func (m *Engine) keywords(text string) []string {
	toks, err := m.tok(text)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var words []string
	for _, t := range toks {
		if utf8.RuneCountInString(t) >= 2 && hasHan(t) && !seen[t] {
			seen[t] = true
			words = append(words, t)
		}
	}
	if len(words) < 2 {
		return words
	}
	df, _, err := m.store.DocFreq(context.Background(), words)
	if err != nil {
		return words
	}
	idx := make([]int, len(words))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return df[idx[a]] < df[idx[b]] })
	out := make([]string, len(words))
	for i, j := range idx {
		out[i] = words[j]
	}
	return out
}
