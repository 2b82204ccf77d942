package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory"
)

// RecallText is pre_action's recall: the facts and events most related to a turn's input that
// are not in its window, as the text of a system message to put before the input ("" when
// nothing was found). It also remembers what was recalled, for [Engine.Explain].
func (m *Engine) RecallText(ctx context.Context, session, turnID, input string) (string, error) {
	inWindow := map[int64]bool{}
	m.mu.Lock()
	for _, it := range m.windows[session].Items {
		inWindow[it.Event.ID] = true
	}
	m.mu.Unlock()
	hits, err := m.Recall(ctx, session, input, autoRecallK+2, nil, inWindow)
	if err != nil {
		return "", err
	}
	// Not this turn's own input (already committed), at most autoRecallK.
	kept := hits[:0]
	for _, h := range hits {
		if h.Event.TurnID == "" || h.Event.TurnID != turnID {
			kept = append(kept, h)
		}
	}
	hits = kept[:min(len(kept), autoRecallK)]
	v, err := m.ViewerOf(ctx, session)
	if err != nil {
		return "", err
	}
	facts, err := m.recallFacts(ctx, v, input, autoRecallFacts)
	if err != nil {
		return "", err
	}
	rec := &Recall{TurnID: turnID, Time: m.clock(), Input: input}
	defer func() {
		m.mu.Lock()
		m.recalls[session] = rec
		m.mu.Unlock()
	}()
	if len(hits) == 0 && len(facts) == 0 {
		return "", nil
	}
	var b strings.Builder
	used := 0
	if len(facts) > 0 {
		b.WriteString("Known facts (long-term memory; the newest statement wins):\n")
		for _, f := range facts {
			text := describeFact(f.t)
			line := "- " + text + "\n"
			used += m.count(line)
			b.WriteString(line)
			rec.Facts = append(rec.Facts, RecalledFact{Triple: f.t.ID, Text: text, Score: f.score})
		}
	}
	if len(hits) > 0 {
		b.WriteString("Memories that may be relevant (recalled from earlier conversations; use them only if they help):\n")
	}
	for _, h := range hits {
		ev := h.Event
		ev.Content = h.Text() // a long event's passage (cold.Hit.Passage), not all of it
		line := "- " + describe(ev) + "\n"
		used += m.count(line)
		if used > autoRecallTokens {
			break
		}
		b.WriteString(line)
		rec.Events = append(rec.Events, h)
	}
	return b.String(), nil
}

// ColdQuery is the coldcontext_query tool: it peeks into L2 for the events (and facts) related
// to query that session may see, counts an access for each, moves the events back into L1 at
// their original time, and returns them as text. k ≤ 0 is 5; at most 20.
func (m *Engine) ColdQuery(ctx context.Context, session, query string, k int) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", errors.New("query is empty")
	}
	if k <= 0 {
		k = 5
	}
	k = min(k, toolRecallMax)
	hits, err := m.Recall(ctx, session, query, k, []memory.Layer{memory.LayerL2}, nil)
	if err != nil {
		return "", err
	}
	v, err := m.ViewerOf(ctx, session)
	if err != nil {
		return "", err
	}
	facts, err := m.recallFacts(ctx, v, query, min(k, autoRecallFacts))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(facts) > 0 {
		b.WriteString("Known facts:\n")
		for _, f := range facts {
			b.WriteString("- " + describeFact(f.t) + "\n")
		}
	}
	if len(hits) == 0 {
		if b.Len() > 0 {
			return b.String() + "No cold events matched.\n", nil
		}
		return "nothing found in cold memory", nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Event.ID
	}
	// Peek (one access each), then move the events back into L1 at their original time.
	if err := m.store.Touch(ctx, ids, m.clock()); err != nil {
		return "", err
	}
	if err := m.store.SetLayer(ctx, ids, memory.LayerL1); err != nil {
		return "", err
	}
	m.mu.Lock()
	for _, id := range ids {
		m.recalled[id] = true
	}
	m.mu.Unlock()
	back := make([]memory.Event, len(hits))
	for i, h := range hits {
		back[i] = h.Event
	}
	m.addToWindows(back)
	if b.Len() > 0 {
		b.WriteString("Events:\n")
	}
	for _, h := range hits {
		b.WriteString(describe(h.Event))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// describe renders an event for a prompt: date, who, text.
func describe(e memory.Event) string {
	who := string(e.Role)
	if e.Partner != "" {
		who = e.Partner
	}
	return fmt.Sprintf("[%s] %s: %s", e.Time.UTC().Format("2006-01-02 15:04"), who, truncateRunes(e.Content, 600))
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
