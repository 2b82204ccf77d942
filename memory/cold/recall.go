// Package cold is the memory's recall: given a piece of text, it finds the events most worth
// bringing back into a context window, from L1 or L2, visible to the asker. The same Recall
// serves the automatic recall of pre_action, the coldcontext_query tool, the API's memory
// search and the recall benchmark.
//
// Recall is LLM-free and needs no model. It starts from BM25 over the index's terms (SQLite
// FTS5; jieba words for Chinese, stemmed words with irregular forms lemmatised for English, and
// WordNet hypernyms of nouns in a lower-weighted column) and adds what conversations teach:
//
//   - partner matching: a query that names one conversation partner prefers what that partner
//     said, and the name itself stops counting as a content word;
//   - time-aware matching: a query that names a date prefers events of that day (or month);
//   - neighbouring-turn context: in a dialogue the answer follows its topic, so an event gains
//     from the score of the one or two turns before it (and a little from the one after), within
//     the same burst of conversation;
//   - scenes: an event of a scene the asker is in now (Query.Scenes, from scene.Tracker.Match)
//     gains in proportion to how closely the scene matches;
//   - episode coherence: an event gains with the share of the query's terms its stretch of
//     conversation covers (coherence.go): a plan talked over for several turns names each part
//     once;
//   - episode documents: every episode of the store (a session's stretch of conversation, kept
//     by the index as events arrive) is also scored as one BM25 document, weighed by how recent
//     it is among those found, and the candidates in it gain in proportion, the more so the
//     longer the query (episode.go): a long message or the dialogue so far describes a topic
//     that a stretch of conversation covers, and usually goes on with the latest one; a short
//     question names a fact that one turn states;
//   - diversity: after the first few results, a turn right beside one already chosen competes
//     at a discount, so a longer list covers more places in the conversation;
//   - passages: a long event (an assistant's answer, a pasted document) is recalled as its
//     passage that holds the query's terms (passage.go; Hit.Passage), not whole.
//
// Every parameter of these steps is in [Params] (defaults in [DefaultParams], the owner's
// overrides in the `[memory.recall]` config keys).
//
// Pseudo-relevance feedback (searching the best terms of the first results again) was measured
// and left out: on the dev split it moved no figure beyond noise and cost a second search.
//
// Each step is measured by the recall benchmark on every dev set together (LoCoMo, RealMem,
// MADial zh and en; docs/benchmarks.md, with an ablation per set).
//
// With a dense model active (Options.Dense), the events nearest the query in the model's space
// join the candidates, and the sparse ranking (everything above) and the dense one are fused by
// reciprocal rank ([embed.Fuse]): a paraphrase that shares no word with the query can rank, and
// an event both sides agree on ranks first. Only events that stand out from the query's
// background similarity count on the dense side (see Params.DenseZ); events without a vector in the
// active space are ranked by the sparse side alone, so spaces never mix. In a large memory the
// nearest few of thousands stand out by chance too, so with a model active recall nearly always
// returns something; fusion ranks those dense-only events after the ones both sides agree on.
// Calibrating DenseZ needs the recall benchmark run with a real model (not done yet).
//
// With a model that embeds images too (CLIP-like), the image blocks nearest the query are a
// third ranking in the same fusion, each ranking the event that brought it (DenseResult.Images;
// Hit.Images names the images that matched): a text query finds a picture by what it shows, and
// by its OCR text through the event's BM25 as before. A memory without image vectors ranks
// exactly as without this side.
package cold

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// Options configures a Recaller. Index and Tokens are required.
type Options struct {
	Index memory.Index
	// Tokens turns text into index terms, exactly as events are indexed.
	Tokens func(text string) ([]string, error)
	// Partners lists the conversation partners visible to a viewer (for partner matching);
	// nil disables partner matching.
	Partners func(ctx context.Context, v memory.Viewer) ([]string, error)
	// Dense, when set, is fused with the sparse score.
	Dense Dense
	// Params are the retrieval parameters; nil: [DefaultParams].
	Params *Params
}

// Recaller runs recall queries. It is safe for concurrent use.
type Recaller struct {
	opts Options
	p    Params
}

// New returns a Recaller.
func New(opts Options) (*Recaller, error) {
	if opts.Index == nil || opts.Tokens == nil {
		return nil, errors.New("cold: Index and Tokens are required")
	}
	p := DefaultParams()
	if opts.Params != nil {
		p = *opts.Params
	}
	return &Recaller{opts: opts, p: p}, nil
}

// Query is one recall request.
type Query struct {
	Text    string
	Viewer  memory.Viewer
	K       int            // results wanted (default 10)
	Layers  []memory.Layer // empty: L1 and L2
	Session string         // non-empty: only this session's events
	// Exclude drops events (e.g. those already in the asker's context window).
	Exclude map[int64]bool
	// Scenes are the scenes the asker is in now, scene key → similarity (scene.Tracker.Match):
	// events of those scenes are boosted. Empty: no scene boost.
	Scenes map[string]float64
	// Now is when the question is asked: "yesterday", "last week", "三天前" are resolved against
	// it. Zero: relative expressions are not resolved (calendar dates and parts of months are).
	Now time.Time
}

// Hit is one recalled event with its score and why it ranks there. When the event is longer
// than Params.PassageTokens, Passage is the part of it worth showing (passage.go) and
// PassageTokens its tokens; otherwise Passage is empty and the whole event is the recall.
// Images are the ids of the event's image blocks that matched the query by their image vectors,
// best first (none without a model that embeds images).
type Hit struct {
	Event         memory.Event
	Score         float64
	Reason        string
	Passage       string
	PassageTokens int
	Images        []string
}

// Text is what the hit recalls: its passage, or the whole event's content.
func (h Hit) Text() string {
	if h.Passage != "" {
		return h.Passage
	}
	return h.Event.Content
}

// Tokens is the token count of [Hit.Text].
func (h Hit) Tokens() int {
	if h.Passage != "" {
		return h.PassageTokens
	}
	return h.Event.Tokens
}

// cand is an event being scored.
type cand struct {
	ev      memory.Event
	indexed string
	bm25    float64 // BM25 of the query's terms
	base    float64 // bm25 with partner and date adjustments
	score   float64 // base + neighbour context (+ dense)
	why     []string
	pos     int      // position in (session, id) order among known events (set by smooth)
	episode int64    // the episode the event belongs to, when it ranked (set by episodes)
	images  []string // image blocks that matched on the image side, best first
}

// Recall returns the best K events for q.Text that q.Viewer may see, best first.
func (r *Recaller) Recall(ctx context.Context, q Query) ([]Hit, error) {
	if q.K <= 0 {
		q.K = 10
	}
	terms, err := r.opts.Tokens(q.Text)
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	partner, nameTerms, err := r.namedPartner(ctx, q, terms)
	if err != nil {
		return nil, err
	}
	qtf := map[string]int{} // how often the query says each term (episode.go weighs by it)
	for _, t := range terms {
		qtf[t]++
	}
	terms = dedupe(without(terms, nameTerms))
	if len(terms) == 0 {
		terms = dedupe(nameTerms) // a query that is only a name still finds that name
	}
	cs := map[int64]*cand{}
	qt := queryTime(q.Text, q.Now)
	if len(terms) > 0 || !qt.empty() {
		if len(terms) > 0 {
			if err := r.search(ctx, q, terms, cs); err != nil {
				return nil, err
			}
		}
		if err := r.timeWindow(ctx, q, qt, cs); err != nil {
			return nil, err
		}
		if len(cs) > 0 {
			r.rescore(cs, partner, qt, q.Scenes)
			if err := r.smooth(ctx, q, cs, qt); err != nil {
				return nil, err
			}
			if err := r.coherence(ctx, cs, terms); err != nil {
				return nil, err
			}
			if err := r.episodes(ctx, q, cs, terms, qtf); err != nil {
				return nil, err
			}
		}
	}
	// The dense side runs even when the sparse one found nothing: that is when it helps most.
	if r.opts.Dense != nil && strings.TrimSpace(q.Text) != "" {
		if err := r.fuseDense(ctx, q, cs); err != nil {
			return nil, err
		}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	hits := top(cs, q, r.p)
	r.passages(hits, terms)
	return hits, nil
}

// search runs the BM25 query and records each match's score.
func (r *Recaller) search(ctx context.Context, q Query, terms []string, cs map[int64]*cand) error {
	hits, err := r.opts.Index.SearchTerms(ctx, memory.TextQuery{Terms: terms, Viewer: q.Viewer, Layers: q.Layers, Session: q.Session,
		Limit: min(r.p.MaxCands, max(20, 6*q.K))})
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	for _, h := range hits {
		c := cs[h.Event.ID]
		if c == nil {
			c = &cand{ev: h.Event, indexed: h.Indexed}
			cs[h.Event.ID] = c
		}
		c.bm25 = h.Score
	}
	return nil
}

// timeWindow adds the events of the one stretch of time the question names (a dated day, month
// or span, timeWindow), so that a question that gives only a time ("what happened on 8 May
// 2023?") finds that time's events even when its words match nothing there. They join as
// candidates without a text score; the date boost ranks them.
func (r *Recaller) timeWindow(ctx context.Context, q Query, qt qtime, cs map[int64]*cand) error {
	from, to, ok := qt.window()
	if !ok {
		return nil
	}
	hits, err := r.opts.Index.SearchTerms(ctx, memory.TextQuery{Viewer: q.Viewer, Layers: q.Layers, Session: q.Session,
		From: from, To: to, Limit: min(r.p.MaxCands, max(20, 6*q.K))})
	if err != nil {
		return fmt.Errorf("recall: events of %s: %w", from.Format(time.DateOnly), err)
	}
	for _, h := range hits {
		if cs[h.Event.ID] == nil {
			cs[h.Event.ID] = &cand{ev: h.Event, indexed: h.Indexed}
		}
	}
	return nil
}

// rescore computes base scores: BM25 with partner, date and scene adjustments.
func (r *Recaller) rescore(cs map[int64]*cand, partner string, qt qtime, scenes map[string]float64) {
	for _, c := range cs {
		c.why = c.why[:0]
		c.base = c.bm25
		if c.bm25 > 0 {
			c.why = append(c.why, fmt.Sprintf("bm25 %.2f", c.bm25))
		}
		if partner != "" && strings.EqualFold(c.ev.Partner, partner) {
			c.base *= 1 + r.p.PartnerBoost
			c.why = append(c.why, "said by "+c.ev.Partner)
		}
		if qt.boosts(c.ev.Time) {
			c.base += r.p.DateBoost
			c.why = append(c.why, "on the date asked")
		}
		if sim, ok := scenes[c.ev.Scene]; ok && c.ev.Scene != "" && sim > 0 {
			c.base *= 1 + r.p.SceneBoost*sim
			c.why = append(c.why, "scene "+c.ev.Scene)
		}
		c.score = c.base
	}
}

// smooth adds neighbouring-turn context: each of the best events passes part of its base score
// to the one or two turns after it (and a little to the one before), within the same burst of
// its conversation. The neighbours of those events are fetched, so in the (session, id) order of
// all known events, a source's true next and previous turns sit right beside it.
func (r *Recaller) smooth(ctx context.Context, q Query, cs map[int64]*cand, qt qtime) error {
	best := sortedByBase(cs)
	if n := min(r.p.MaxNeighbour, 3*q.K); len(best) > n {
		best = best[:n]
	}
	ids := make([]int64, 0, len(best))
	for _, c := range best {
		ids = append(ids, c.ev.ID)
	}
	nbs, err := r.opts.Index.Neighbours(ctx, ids, 2, q.Viewer)
	if err != nil {
		return fmt.Errorf("recall: neighbours: %w", err)
	}
	for _, ev := range nbs {
		if cs[ev.ID] == nil && layerOK(ev.Layer, q.Layers) && (q.Session == "" || ev.Session == q.Session) {
			c := &cand{ev: ev}
			if qt.boosts(ev.Time) {
				c.base = r.p.DateBoost
				c.why = append(c.why, "on the date asked")
			}
			cs[ev.ID] = c
		}
	}
	all := make([]*cand, 0, len(cs))
	for _, c := range cs {
		c.score = c.base
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].ev.Session != all[j].ev.Session {
			return all[i].ev.Session < all[j].ev.Session
		}
		return all[i].ev.ID < all[j].ev.ID
	})
	pos := make(map[int64]int, len(all))
	for i, c := range all {
		pos[c.ev.ID] = i
		c.pos = i
	}
	add := make([]float64, len(all))
	give := func(from *cand, to int, w float64) {
		if to < 0 || to >= len(all) {
			return
		}
		t := all[to]
		gap := t.ev.Time.Sub(from.ev.Time)
		if t.ev.Session == from.ev.Session && gap <= r.p.BurstGap && gap >= -r.p.BurstGap {
			add[to] += w * from.base
		}
	}
	for _, src := range best {
		if src.base <= 0 {
			continue
		}
		i := pos[src.ev.ID]
		give(src, i+1, r.p.PrevWeight)
		if i+1 < len(all) && all[i+1].ev.Session == src.ev.Session {
			give(src, i+2, r.p.Prev2Weight)
		}
		give(src, i-1, r.p.NextWeight)
	}
	for i, c := range all {
		if add[i] > 0 {
			c.score += add[i]
			c.why = append(c.why, fmt.Sprintf("context %.2f", add[i]))
		}
	}
	return nil
}

// namedPartner finds the one conversation partner the query names, and the index terms of the
// names it mentions.
func (r *Recaller) namedPartner(ctx context.Context, q Query, terms []string) (string, []string, error) {
	if r.opts.Partners == nil {
		return "", nil, nil
	}
	ps, err := r.opts.Partners(ctx, q.Viewer)
	if err != nil {
		return "", nil, fmt.Errorf("recall: partners: %w", err)
	}
	have := map[string]bool{}
	for _, t := range terms {
		have[t] = true
	}
	var named []string
	var nameTerms []string
	for _, p := range ps {
		pt, err := r.opts.Tokens(p)
		if err != nil || len(pt) == 0 {
			continue
		}
		all := true
		for _, t := range pt {
			all = all && have[t]
		}
		if all {
			named = append(named, p)
			nameTerms = append(nameTerms, pt...)
		}
	}
	if len(named) == 1 {
		return named[0], nameTerms, nil
	}
	return "", nameTerms, nil
}

func top(cs map[int64]*cand, q Query, p Params) []Hit {
	all := sortedByScore(cs)
	// Greedy selection: the first picks by relevance alone; after them, the turns right beside
	// a chosen one are discounted (the context step lifts whole neighbourhoods, and a longer
	// list should cover more of them).
	type key struct {
		session string
		pos     int
	}
	chosen := map[key]bool{}
	eff := make(map[*cand]float64, len(all))
	for _, c := range all {
		eff[c] = c.score
	}
	out := make([]Hit, 0, q.K)
	for len(out) < q.K {
		var best *cand
		for _, c := range all {
			if eff[c] < 0 || q.Exclude[c.ev.ID] || c.score <= 0 {
				continue
			}
			if best == nil || eff[c] > eff[best] || (eff[c] == eff[best] && c.ev.ID < best.ev.ID) {
				best = c
			}
		}
		if best == nil {
			break
		}
		out = append(out, Hit{Event: best.ev, Score: best.score, Reason: strings.Join(best.why, ", "), Images: best.images})
		eff[best] = -1
		chosen[key{best.ev.Session, best.pos}] = true
		for _, c := range all {
			if len(out) > p.PureTop && eff[c] > 0 && c.ev.Session == best.ev.Session && (c.pos == best.pos+1 || c.pos == best.pos-1) &&
				within(c.ev.Time, best.ev.Time, p.BurstGap) {
				eff[c] *= p.BesidePen
			}
			if len(out) > p.PureTop && eff[c] > 0 && best.episode != 0 && c.episode == best.episode {
				eff[c] *= p.EpisodeRepeat
			}
		}
	}
	return out
}

// within reports whether a and b are at most gap apart: turns of one stretch of conversation.
// Two separate memories stored next to each other are not "beside" each other.
func within(a, b time.Time, gap time.Duration) bool {
	d := a.Sub(b)
	return d <= gap && d >= -gap
}

func sortedByScore(cs map[int64]*cand) []*cand {
	all := make([]*cand, 0, len(cs))
	for _, c := range cs {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].ev.ID < all[j].ev.ID
	})
	return all
}

func sortedByBase(cs map[int64]*cand) []*cand {
	all := make([]*cand, 0, len(cs))
	for _, c := range cs {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].base != all[j].base {
			return all[i].base > all[j].base
		}
		return all[i].ev.ID < all[j].ev.ID
	})
	return all
}

func layerOK(l memory.Layer, ls []memory.Layer) bool {
	if len(ls) == 0 {
		return true
	}
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

func without(terms, drop []string) []string {
	if len(drop) == 0 {
		return terms
	}
	d := map[string]bool{}
	for _, t := range drop {
		d[t] = true
	}
	out := terms[:0:0]
	for _, t := range terms {
		if !d[t] {
			out = append(out, t)
		}
	}
	return out
}

func dedupe(terms []string) []string {
	seen := map[string]bool{}
	out := terms[:0:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
