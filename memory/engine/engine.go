// Package engine is what the memory does per turn and over time (ARCHITECTURE.md §4): the L1
// window of each session (kept in memory and in step with every write), recall and the text it
// puts before a turn's input, the coldcontext_query tool's search, cooling and distillation,
// scene observation, and the dense side (the chosen model, its vectors, the re-embedding worker).
//
// The kernel wires it: it passes the store, the tokenizer, the clock and the LLM call
// distillation needs, tells it of every event it stores ([Engine.Appended]), and converts its
// results for the API. An Engine is safe for concurrent use; [Engine.Close] ends its background
// work, after the turns and before the store closes.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/graph"
	"github.com/hologramagent/hologram/memory/scene"
	"github.com/hologramagent/hologram/memory/window"
)

// ErrInvalid is wrapped by the errors of requests the caller must fix (a bad argument, a model
// in use); ErrUnavailable by those of something this engine does not have (no runtime, no dense
// side). Unknown ids wrap memory.ErrNotFound.
var (
	ErrInvalid     = errors.New("invalid")
	ErrUnavailable = errors.New("unavailable")
)

// DefaultSession is the owner's main session, whose scenes recall uses when none is given.
const DefaultSession = "main"

// Memory settings (ARCHITECTURE.md §4).
const (
	autoRecallK      = 5    // events recalled into pre_action
	autoRecallTokens = 1200 // at most this many tokens of them
	toolRecallMax    = 20
)

// Config holds the memory's settings from the kernel's [memory] and [agent] configuration.
type Config struct {
	// WindowTokens is the L1 window's token budget; Recent the recent events pinned in it;
	// HistoryLimit the most events a window holds.
	WindowTokens, Recent, HistoryLimit int
	// Extractor chooses distillation: "llm", "rules", or "auto"/"" (the LLM when one is set,
	// with the rules as fallback).
	Extractor string
	// DistillAccesses and DistillIdle: an event is distilled once it has at most this many
	// accesses and has been idle this long.
	DistillAccesses int
	DistillIdle     time.Duration
}

// Options are an Engine's dependencies. Store and Tokens are required.
type Options struct {
	Store memory.Memory
	// Tokens turns text into index terms exactly as the store indexes events.
	Tokens func(text string) ([]string, error)
	// CountTokens estimates the prompt tokens of a text (nil: a rune count / 4 estimate).
	CountTokens func(text string) int
	Clock       func() time.Time // nil: time.Now
	Logger      *slog.Logger     // nil: discard
	Config      Config
	// Completer is distillation's LLM call; HaveLLM says whether one is configured now (the
	// "auto" extractor uses it only then). Both nil: rules only.
	Completer graph.Completer
	HaveLLM   func() bool
	// ActiveTurns counts the turns running now: background batches wait for them (nil: none).
	ActiveTurns func() int
	// Dense is the dense side's model manager and runtime (Models nil: sparse only).
	Dense DenseOptions
	// Recall holds recall's retrieval parameters (nil: cold.DefaultParams).
	Recall *cold.Params
	// Lexicon (WordNet's word classes) and Tag (jieba's parts of speech) let the rules
	// extractor tell nouns and names from other words (nil: objects are not checked).
	Lexicon graph.Lexicon
	Tag     func(text string) []graph.Tagged
}

// Engine is the memory of one kernel.
type Engine struct {
	store  memory.Memory
	tok    func(string) ([]string, error)
	count  func(string) int
	clock  func() time.Time
	log    *slog.Logger
	opts   Options
	rec    *cold.Recaller
	cfg    window.Config
	dense  *Dense // nil without a model manager
	scenes *scene.Tracker
	obs    *sceneObserver
	turns  *turnFacts
	gcMu   sync.Mutex // one GC pass at a time

	mu       sync.Mutex
	windows  map[string]Window   // last window computed per session
	recalled map[int64]bool      // events brought back from L2 by coldcontext_query
	recalls  map[string]*Recall  // what each session's last turn recalled at pre_action
	sessWins map[string]*sessWin // sessions' L1 candidates (see sessWin)

	partnersMu sync.Mutex
	partners   []string
	partnersAt time.Time // zero: not read yet (or invalidated)

	sessInfo sync.Map // session id → sessionInfo: what of a session never changes
}

// Window explains a session's L1 window: what the next prompt holds and why.
type Window struct {
	Session, Input             string
	Budget, Used, Pinned, Sunk int
	Items                      []WindowItem // chronological
	Recall                     *Recall      // the session's last pre_action recall, if any
}

// WindowItem is one event of a window with its score, reason and source.
type WindowItem struct {
	// Event points into the slice the window computation returned to the agent (one copy of
	// the window's events per turn, not two); it is never modified through either.
	Event          *memory.Event
	Score          float64
	Reason, Source string
}

// Recall is what a turn's pre_action recalled: facts and events.
type Recall struct {
	TurnID string
	Time   time.Time
	Input  string
	Facts  []RecalledFact
	Events []cold.Hit
}

// RecalledFact is a triple recalled into a prompt.
type RecalledFact struct {
	Triple int64
	Text   string
	Score  float64
}

// New builds the engine; it starts nothing (see [Engine.Start]).
func New(opts Options) (*Engine, error) {
	if opts.Store == nil || opts.Tokens == nil {
		return nil, errors.New("memory engine: Store and Tokens are required")
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CountTokens == nil {
		opts.CountTokens = func(s string) int { return (len([]rune(s)) + 3) / 4 }
	}
	if opts.ActiveTurns == nil {
		opts.ActiveTurns = func() int { return 0 }
	}
	m := &Engine{store: opts.Store, tok: opts.Tokens, count: opts.CountTokens, clock: opts.Clock, log: opts.Logger, opts: opts,
		windows: map[string]Window{}, recalled: map[int64]bool{}, recalls: map[string]*Recall{}, sessWins: map[string]*sessWin{},
		cfg: window.Config{Budget: opts.Config.WindowTokens, Recent: opts.Config.Recent, MaxItems: opts.Config.HistoryLimit}}
	copts := cold.Options{Index: opts.Store, Tokens: opts.Tokens, Partners: m.partnerNames, Params: opts.Recall}
	if opts.Dense.Models != nil {
		m.dense = newDense(m, opts.Dense)
		copts.Dense = m.dense
	}
	rec, err := cold.New(copts)
	if err != nil {
		return nil, fmt.Errorf("memory engine: %w", err)
	}
	m.rec = rec
	m.scenes = scene.NewTracker(opts.Store, scene.Options{Clock: opts.Clock})
	m.obs = newSceneObserver(m)
	m.turns = newTurnFacts(m)
	return m, nil
}

// Start loads the chosen dense model in the background.
func (m *Engine) Start(ctx context.Context) error {
	if m.dense == nil {
		return nil
	}
	return m.dense.start(ctx)
}

// Close waits for a running GC pass (its context is the caller's to cancel) and the scene
// observer, and releases the dense model.
func (m *Engine) Close() error {
	m.gcMu.Lock()
	m.gcMu.Unlock()
	m.obs.flush()
	m.turns.close()
	if m.dense != nil {
		return m.dense.close()
	}
	return nil
}

// Dense returns the dense side, nil when the engine has no model manager.
func (m *Engine) Dense() *Dense { return m.dense }

// Settle waits until the background work on what was stored so far (scene observation, the
// turns' facts) is done; benchmarks and tests call it between ingesting and asking.
func (m *Engine) Settle() {
	m.obs.flush()
	m.turns.wait()
}

// Reset drops everything the engine cached of the store (after a restore replaced it).
func (m *Engine) Reset() {
	m.mu.Lock()
	clear(m.windows)
	clear(m.recalled)
	clear(m.sessWins)
	m.mu.Unlock()
	m.sessInfo.Clear()
	m.partnersMu.Lock()
	m.partners, m.partnersAt = nil, time.Time{}
	m.partnersMu.Unlock()
	m.scenes.Invalidate()
}

// sessionInfo is what of a session never changes after it is created: where it happens and
// its scope (memory.Store.UpdateSession changes only title, prompt and model).
type sessionInfo struct {
	channel, partner string
	scope            memory.Scope
}

// session returns a session's fixed part, read from the store once.
func (m *Engine) session(ctx context.Context, id string) (sessionInfo, error) {
	if v, ok := m.sessInfo.Load(id); ok {
		return v.(sessionInfo), nil
	}
	s, err := m.store.GetSession(ctx, id)
	if err != nil {
		return sessionInfo{}, err
	}
	si := sessionInfo{channel: s.Channel, partner: s.Partner, scope: s.Scope}
	m.sessInfo.Store(id, si)
	if si.partner != "" { // a session the engine has not seen may bring a new partner's name
		m.partnersMu.Lock()
		m.partners, m.partnersAt = nil, time.Time{}
		m.partnersMu.Unlock()
	}
	return si, nil
}

// partnerNames caches the store's partners for a few seconds: recall asks on every query.
func (m *Engine) partnerNames(ctx context.Context, _ memory.Viewer) ([]string, error) {
	m.partnersMu.Lock()
	defer m.partnersMu.Unlock()
	// An empty list is cached too: a store without partners is the common case.
	if !m.partnersAt.IsZero() && m.clock().Sub(m.partnersAt) < 5*time.Second {
		return m.partners, nil
	}
	ps, err := m.store.Partners(ctx)
	if err != nil {
		return nil, err
	}
	m.partners, m.partnersAt = ps, m.clock()
	return ps, nil
}

// ViewerOf returns the viewer of a session ("" is the owner).
func (m *Engine) ViewerOf(ctx context.Context, session string) (memory.Viewer, error) {
	if session == "" {
		return memory.OwnerViewer, nil
	}
	s, err := m.session(ctx, session)
	if err != nil {
		return memory.Viewer{}, err
	}
	return memory.ViewerFor(memory.Session{Scope: s.scope}), nil
}

// ContextWindow is the agent's window: it computes the session's L1 window for the input, sinks
// what does not fit to L2, remembers the explanation, and returns the kept events.
func (m *Engine) ContextWindow(ctx context.Context, session, input string) ([]memory.Event, error) {
	w, kept, err := m.compute(ctx, session, input, true)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.windows[session] = w
	m.mu.Unlock()
	return kept, nil
}

// Explain returns the last window computed for the session, or one computed now (without
// sinking) for its last user message, with the session's last recall.
func (m *Engine) Explain(ctx context.Context, session string) (Window, error) {
	m.mu.Lock()
	w, ok := m.windows[session]
	rec := m.recalls[session]
	m.mu.Unlock()
	if ok {
		w.Recall = rec
		return w, nil
	}
	input := ""
	hist, err := m.store.History(ctx, session, 50)
	if err != nil {
		return Window{}, err
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Role == memory.RoleUser {
			input = hist[i].Content
			break
		}
	}
	w, _, err = m.compute(ctx, session, input, false)
	w.Recall = rec
	return w, err
}

// compute builds a window; sink moves the events that did not fit to L2.
func (m *Engine) compute(ctx context.Context, session, input string, sink bool) (Window, []memory.Event, error) {
	sw, err := m.sessionWindow(ctx, session)
	if err != nil {
		return Window{}, nil, err
	}
	qterms, err := m.tok(input)
	if err != nil {
		return Window{}, nil, fmt.Errorf("window: %w", err)
	}
	dense := m.windowDense(ctx, input) // nil: sparse (dense.go)
	// Compute and read the result under the lock: the candidates change with every append.
	m.mu.Lock()
	q := window.Query{Terms: sw.vocab.Lookup(qterms), VocabSize: sw.vocab.Size()}
	if dense != nil {
		q.Dense = dense(sw.cands)
	}
	res := window.ComputeQuery(sw.cands, q, m.cfg, m.recalled)
	w := Window{Session: session, Input: input, Budget: res.Budget, Used: res.Used, Pinned: res.Pinned, Sunk: len(res.Sunk)}
	kept := make([]memory.Event, 0, len(res.Items))
	w.Items = make([]WindowItem, 0, len(res.Items))
	for _, it := range res.Items {
		kept = append(kept, sw.cands[it.Index].Event)
	}
	for i, it := range res.Items { // kept is complete: its elements no longer move
		w.Items = append(w.Items, WindowItem{Event: &kept[i], Score: it.Score, Reason: it.Reason, Source: it.Source})
	}
	sunk := make([]int64, len(res.Sunk))
	for i, idx := range res.Sunk {
		sunk[i] = sw.cands[idx].Event.ID
	}
	m.mu.Unlock()
	if sink && len(sunk) > 0 {
		if err := m.store.SetLayer(ctx, sunk, memory.LayerL2); err != nil {
			return Window{}, nil, fmt.Errorf("window: sinking to L2: %w", err)
		}
		m.mu.Lock()
		for _, id := range sunk {
			delete(m.recalled, id)
		}
		m.dropFromWindows(sunk)
		m.mu.Unlock()
	}
	return w, kept, nil
}

// sessWin is a session's L1 events as window candidates, kept in memory so that a turn does not
// reload and re-tokenise the whole window: loaded from the store once, then kept in step by the
// kernel's own writes (appended events, events sunk to L2, events recalled to L1). Guarded by
// Engine.mu.
type sessWin struct {
	vocab *window.Vocab
	cands []window.Candidate // chronological (by id)
}

// sessionWindow returns the session's candidates, loading them on first use.
func (m *Engine) sessionWindow(ctx context.Context, session string) (*sessWin, error) {
	m.mu.Lock()
	sw := m.sessWins[session]
	m.mu.Unlock()
	if sw != nil {
		return sw, nil
	}
	evs, err := m.store.LayerEvents(ctx, session, memory.LayerL1)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	indexed, err := m.store.Events(ctx, ids)
	if err != nil {
		return nil, err
	}
	terms := make(map[int64]string, len(indexed))
	for _, h := range indexed {
		terms[h.Event.ID] = h.Indexed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if sw := m.sessWins[session]; sw != nil { // loaded meanwhile
		return sw, nil
	}
	sw = &sessWin{vocab: window.NewVocab(), cands: make([]window.Candidate, len(evs))}
	for i, e := range evs {
		sw.cands[i] = window.Candidate{Event: e, Terms: sw.vocab.Intern(strings.Fields(terms[e.ID]))}
	}
	m.sessWins[session] = sw
	return sw, nil
}

// Appended keeps loaded windows, the scene observer and the dense worker in step with events
// the kernel stored (new events are L1). Every write of the kernel must come through here.
func (m *Engine) Appended(evs []memory.Event) {
	m.addToWindows(evs)
	m.obs.appended(evs)
	m.turns.add(evs) // the turn's facts, in the background
	if m.dense != nil {
		m.dense.notify() // new events to embed, in the background
	}
}

// addToWindows adds L1 events to their sessions' loaded windows, in id order.
func (m *Engine) addToWindows(evs []memory.Event) {
	type add struct {
		ev    memory.Event
		terms []string
	}
	var adds []add
	m.mu.Lock()
	for _, e := range evs {
		if m.sessWins[e.Session] != nil {
			adds = append(adds, add{ev: e})
		}
	}
	m.mu.Unlock()
	if len(adds) == 0 {
		return
	}
	for i := range adds { // tokenise outside the lock, exactly as the store indexes
		toks, err := memory.IndexTokens(m.tok, adds[i].ev)
		if err != nil {
			m.log.Warn("window: tokenising a new event", "event", adds[i].ev.ID, "err", err)
		}
		adds[i].terms = strings.Fields(toks)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range adds {
		sw := m.sessWins[a.ev.Session]
		if sw == nil {
			continue
		}
		a.ev.Layer = memory.LayerL1
		c := window.Candidate{Event: a.ev, Terms: sw.vocab.Intern(a.terms)}
		i, found := slices.BinarySearchFunc(sw.cands, a.ev.ID, func(c window.Candidate, id int64) int { return cmp.Compare(c.Event.ID, id) })
		if found {
			sw.cands[i] = c
			continue
		}
		sw.cands = slices.Insert(sw.cands, i, c)
	}
}

// dropFromWindows removes events (sunk to L2) from the loaded windows. Callers hold m.mu.
func (m *Engine) dropFromWindows(ids []int64) {
	gone := make(map[int64]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	for _, sw := range m.sessWins {
		sw.cands = slices.DeleteFunc(sw.cands, func(c window.Candidate) bool { return gone[c.Event.ID] })
	}
}

// Forget deletes events from the store (memory.Graph.Forget) and from every window that held
// them.
func (m *Engine) Forget(ctx context.Context, ids []int64) (memory.ForgetResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.store.Forget(ctx, ids)
	if err != nil {
		return r, err
	}
	if m.dense != nil {
		m.dense.forgotten(ids)
	}
	m.dropFromWindows(ids)
	gone := make(map[int64]bool, len(ids))
	for _, id := range ids {
		delete(m.recalled, id)
		gone[id] = true
	}
	for s, w := range m.windows {
		w.Items = slices.DeleteFunc(slices.Clone(w.Items), func(it WindowItem) bool { return gone[it.Event.ID] })
		m.windows[s] = w
	}
	return r, nil
}

// Recall runs the shared recall for a session's view ("" the owner): the top k events in
// layers (nil: L1 and L2) but those excluded, scenes of the asker favoured.
func (m *Engine) Recall(ctx context.Context, session, text string, k int, layers []memory.Layer, exclude map[int64]bool) ([]cold.Hit, error) {
	v, err := m.ViewerOf(ctx, session)
	if err != nil {
		return nil, err
	}
	scenes, err := m.activeScenes(ctx, session, text)
	if err != nil {
		return nil, err
	}
	return m.rec.Recall(ctx, cold.Query{Text: text, Viewer: v, K: k, Layers: layers, Exclude: exclude, Scenes: scenes, Now: m.clock()})
}

// RecallFor is recall for a viewer of no session (a plugin outside a turn): no scenes.
func (m *Engine) RecallFor(ctx context.Context, v memory.Viewer, text string, k int) ([]cold.Hit, error) {
	return m.rec.Recall(ctx, cold.Query{Text: text, Viewer: v, K: k, Now: m.clock()})
}

// activeScenes returns the scenes the asker is in (similarity ≥ the recall threshold): the
// asking session's channel and partner.
func (m *Engine) activeScenes(ctx context.Context, session, text string) (map[string]float64, error) {
	if session == "" {
		session = DefaultSession
	}
	// The asker's situation: channel and partner. Not the query's topics (its words already
	// count in BM25; counting them again as scene features cost recall on the benchmark), and
	// not the time of day (the moment of asking says little about what is asked, and it made
	// the benchmark depend on the hour it ran): docs/benchmarks.md.
	obs, key, err := m.sceneObs(ctx, session, "", nil, nil, time.Time{})
	obs.Time = time.Time{}
	if errors.Is(err, memory.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return m.scenes.Match(ctx, obs, key)
}

// Scenes lists the scenes with their current strength.
func (m *Engine) Scenes(ctx context.Context) ([]memory.Scene, error) { return m.scenes.Scenes(ctx) }

// closeEmbedder closes an embedder (nil: none).
func closeEmbedder(e embed.Embedder) error {
	if e == nil {
		return nil
	}
	return e.Close()
}
