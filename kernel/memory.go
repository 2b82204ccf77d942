package kernel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/scene"
	"github.com/hologramagent/hologram/memory/window"
)

// MemoryStore is what the memory features need of the store beyond memory.Store.
type MemoryStore interface {
	memory.Store
	memory.Index
	memory.Layers
	// Partners lists the distinct conversation partners of stored events.
	Partners(ctx context.Context) ([]string, error)
	memory.Graph
	memory.BlockStore
	memory.SceneStore
	backup.Source
	backup.Sink
}

// Facility is a heavy asset (jieba, WordNet…) on the kernel's readiness bus. An eager one loads
// in the background after Start; a lazy one loads when first needed (jieba on the first Chinese
// text), and Loaded tells when it has. Memory works meanwhile, with less recall.
type Facility struct {
	Name   string
	Load   func(ctx context.Context) error // eager: run after Start
	Loaded func() bool                     // lazy: polled when readiness is reported
}

// Memory settings (ARCHITECTURE.md §4).
const (
	autoRecallK      = 5    // events recalled into pre_action
	autoRecallTokens = 1200 // at most this many tokens of them
	toolRecallMax    = 20
)

// mem is the kernel's memory subsystem: L1 windows, recall and the coldcontext_query tool.
type mem struct {
	k     *Kernel
	store MemoryStore
	tok   func(string) ([]string, error)
	rec   *cold.Recaller
	cfg   window.Config

	mu       sync.Mutex
	windows  map[string]client.Window  // last window computed per session
	recalled map[int64]bool            // events brought back from L2 by coldcontext_query
	recalls  map[string]*client.Recall // what each session's last turn recalled at pre_action
	sessWins map[string]*sessWin       // sessions' L1 candidates (see sessWin)

	partnersMu sync.Mutex
	partners   []string
	partnersAt time.Time

	scenes *scene.Tracker
	obs    *sceneObserver
	gcMu   sync.Mutex // one memgc pass at a time

	sessInfo sync.Map // session id → sessionInfo: what of a session never changes
}

// sessionInfo is what of a session never changes after it is created: where it happens and
// its scope (memory.Store.UpdateSession changes only title, prompt and model).
type sessionInfo struct {
	channel, partner string
	scope            memory.Scope
}

// session returns a session's fixed part, read from the store once.
func (m *mem) session(ctx context.Context, id string) (sessionInfo, error) {
	if v, ok := m.sessInfo.Load(id); ok {
		return v.(sessionInfo), nil
	}
	s, err := m.store.GetSession(ctx, id)
	if err != nil {
		return sessionInfo{}, err
	}
	si := sessionInfo{channel: s.Channel, partner: s.Partner, scope: s.Scope}
	m.sessInfo.Store(id, si)
	return si, nil
}

func newMem(k *Kernel, store MemoryStore, tok func(string) ([]string, error)) (*mem, error) {
	m := &mem{k: k, store: store, tok: tok, windows: map[string]client.Window{}, recalled: map[int64]bool{}, recalls: map[string]*client.Recall{}, sessWins: map[string]*sessWin{},
		cfg: window.Config{Budget: k.cfg.Memory.WindowTokens, Recent: k.cfg.Memory.Recent, MaxItems: k.cfg.Agent.HistoryLimit}}
	params, err := cold.DefaultParams().With(k.cfg.Memory.Recall)
	if err != nil {
		return nil, fmt.Errorf("memory.recall: %w", err)
	}
	opts := cold.Options{Index: store, Tokens: tok, Partners: m.partnerNames, Params: &params}
	if k.dense != nil {
		opts.Dense = k.dense // embedding.go
	}
	rec, err := cold.New(opts)
	if err != nil {
		return nil, err
	}
	m.rec = rec
	m.scenes = scene.NewTracker(store, scene.Options{Clock: k.clock})
	m.obs = newSceneObserver(m)
	return m, nil
}

// partnerNames caches the store's partners for a few seconds: recall asks on every query.
func (m *mem) partnerNames(ctx context.Context, _ memory.Viewer) ([]string, error) {
	m.partnersMu.Lock()
	defer m.partnersMu.Unlock()
	if m.partners != nil && m.k.clock().Sub(m.partnersAt) < 5*time.Second {
		return m.partners, nil
	}
	ps, err := m.store.Partners(ctx)
	if err != nil {
		return nil, err
	}
	m.partners, m.partnersAt = ps, m.k.clock()
	return ps, nil
}

// viewerOf returns the viewer of a session ("" is the owner).
func (m *mem) viewerOf(ctx context.Context, session string) (memory.Viewer, error) {
	if session == "" {
		return memory.OwnerViewer, nil
	}
	s, err := m.session(ctx, session)
	if err != nil {
		return memory.Viewer{}, err
	}
	return memory.ViewerFor(memory.Session{Scope: s.scope}), nil
}

// contextWindow is the agent's Window hook: it computes the session's L1 window for the input,
// sinks what does not fit to L2, remembers the explanation, and returns the kept events.
func (m *mem) contextWindow(ctx context.Context, session, input string) ([]memory.Event, error) {
	w, kept, err := m.compute(ctx, session, input, true)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.windows[session] = w
	m.mu.Unlock()
	return kept, nil
}

// compute builds a window; sink moves the events that did not fit to L2.
func (m *mem) compute(ctx context.Context, session, input string, sink bool) (client.Window, []memory.Event, error) {
	sw, err := m.sessionWindow(ctx, session)
	if err != nil {
		return client.Window{}, nil, err
	}
	qterms, err := m.tok(input)
	if err != nil {
		return client.Window{}, nil, fmt.Errorf("window: %w", err)
	}
	dense := m.windowDense(ctx, input) // nil: sparse (embedding.go)
	// Compute and read the result under the lock: the candidates change with every append.
	m.mu.Lock()
	q := window.Query{Terms: sw.vocab.Lookup(qterms), VocabSize: sw.vocab.Size()}
	if dense != nil {
		q.Dense = dense(sw.cands)
	}
	res := window.ComputeQuery(sw.cands, q, m.cfg, m.recalled)
	w := client.Window{Session: session, Input: input, Budget: res.Budget, Used: res.Used, Pinned: res.Pinned, Sunk: len(res.Sunk)}
	kept := make([]memory.Event, 0, len(res.Items))
	for _, it := range res.Items {
		e := sw.cands[it.Index].Event
		kept = append(kept, e)
		w.Items = append(w.Items, client.WindowItem{ID: e.ID, Time: e.Time, Role: string(e.Role), Content: e.Content, Tokens: e.Tokens,
			Score: it.Score, Reason: it.Reason, Source: it.Source})
	}
	sunk := make([]int64, len(res.Sunk))
	for i, idx := range res.Sunk {
		sunk[i] = sw.cands[idx].Event.ID
	}
	m.mu.Unlock()
	if sink && len(sunk) > 0 {
		if err := m.store.SetLayer(ctx, sunk, memory.LayerL2); err != nil {
			return client.Window{}, nil, fmt.Errorf("window: sinking to L2: %w", err)
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
// mem.mu.
type sessWin struct {
	vocab *window.Vocab
	cands []window.Candidate // chronological (by id)
}

// sessionWindow returns the session's candidates, loading them on first use.
func (m *mem) sessionWindow(ctx context.Context, session string) (*sessWin, error) {
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

// appended keeps loaded windows in step with events the kernel stored (new events are L1).
func (m *mem) appended(evs []memory.Event) {
	m.addToWindows(evs)
	m.obs.appended(evs)
	if m.k.dense != nil {
		m.k.dense.notify() // new events to embed, in the background
	}
}

// addToWindows adds L1 events to their sessions' loaded windows, in id order.
func (m *mem) addToWindows(evs []memory.Event) {
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
			m.k.log.Warn("window: tokenising a new event", "event", adds[i].ev.ID, "err", err)
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
func (m *mem) dropFromWindows(ids []int64) {
	gone := make(map[int64]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	for _, sw := range m.sessWins {
		sw.cands = slices.DeleteFunc(sw.cands, func(c window.Candidate) bool { return gone[c.Event.ID] })
	}
}

// observedStore is the store as the kernel's writers see it: appends also reach the windows.
type observedStore struct {
	memory.Store
	onAppend func([]memory.Event)
}

// AppendEvents stores events and tells the windows.
func (o observedStore) AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error) {
	out, err := o.Store.AppendEvents(ctx, evs)
	if err == nil {
		o.onAppend(out)
	}
	return out, err
}

// recall runs the shared Recall for a session's view.
func (m *mem) recall(ctx context.Context, session, text string, k int, layers []memory.Layer, exclude map[int64]bool) ([]cold.Hit, error) {
	v, err := m.viewerOf(ctx, session)
	if err != nil {
		return nil, err
	}
	scenes, err := m.activeScenes(ctx, session, text)
	if err != nil {
		return nil, err
	}
	return m.rec.Recall(ctx, cold.Query{Text: text, Viewer: v, K: k, Layers: layers, Exclude: exclude, Scenes: scenes})
}

// activeScenes returns the scenes the asker is in (similarity ≥ the recall threshold): the
// asking session's channel and partner, the query's topics and the time of day.
func (m *mem) activeScenes(ctx context.Context, session, text string) (map[string]float64, error) {
	if session == "" {
		session = defaultSession
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

// preActionRecall is the pre_action hook: it recalls the events most related to the input that
// are not in the window and injects them as a system message.
func (m *mem) preActionRecall(ctx context.Context, d *agent.StageData) (agent.Patch, error) {
	inWindow := map[int64]bool{}
	m.mu.Lock()
	for _, it := range m.windows[d.Session].Items {
		inWindow[it.ID] = true
	}
	m.mu.Unlock()
	hits, err := m.recall(ctx, d.Session, d.Input, autoRecallK+2, nil, inWindow)
	if err != nil {
		return agent.Patch{}, err
	}
	// Not this turn's own input (already committed), at most autoRecallK.
	kept := hits[:0]
	for _, h := range hits {
		if h.Event.TurnID == "" || h.Event.TurnID != d.TurnID {
			kept = append(kept, h)
		}
	}
	hits = kept[:min(len(kept), autoRecallK)]
	v, err := m.viewerOf(ctx, d.Session)
	if err != nil {
		return agent.Patch{}, err
	}
	facts, err := m.recallFacts(ctx, v, d.Input, autoRecallFacts)
	if err != nil {
		return agent.Patch{}, err
	}
	rec := &client.Recall{TurnID: d.TurnID, Time: m.k.clock(), Input: d.Input, Facts: []client.RecalledFact{}, Events: []client.MemoryHit{}}
	defer func() {
		m.mu.Lock()
		m.recalls[d.Session] = rec
		m.mu.Unlock()
	}()
	if (len(hits) == 0 && len(facts) == 0) || len(d.Messages) == 0 {
		return agent.Patch{}, nil
	}
	var b strings.Builder
	used := 0
	if len(facts) > 0 {
		b.WriteString("Known facts (long-term memory; the newest statement wins):\n")
		for _, f := range facts {
			text := describeFact(f.t)
			line := "- " + text + "\n"
			used += llm.EstimateTokens(line)
			b.WriteString(line)
			rec.Facts = append(rec.Facts, client.RecalledFact{Triple: f.t.ID, Text: text, Score: f.score})
		}
	}
	if len(hits) > 0 {
		b.WriteString("Memories that may be relevant (recalled from earlier conversations; use them only if they help):\n")
	}
	for _, h := range hits {
		ev := h.Event
		ev.Content = h.Text() // a long event's passage (cold.Hit.Passage), not all of it
		line := "- " + describe(ev) + "\n"
		used += llm.EstimateTokens(line)
		if used > autoRecallTokens {
			break
		}
		b.WriteString(line)
		rec.Events = append(rec.Events, hitOut(h.Event, h.Score, h.Reason))
	}
	// Before the user's message, so the model reads them as context for it.
	msgs := make([]llm.Message, 0, len(d.Messages)+1)
	msgs = append(msgs, d.Messages[:len(d.Messages)-1]...)
	msgs = append(msgs, llm.Message{Role: "system", Content: b.String()}, d.Messages[len(d.Messages)-1])
	return agent.Patch{Messages: &msgs}, nil
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

// coldQueryTool is the coldcontext_query tool: it peeks into L2 (counting an access), returns the
// events, and moves them back into L1 at their original time.
type coldQueryTool struct{ m *mem }

func (coldQueryTool) Spec() llm.Tool {
	return llm.Tool{
		Name:        "coldcontext_query",
		Description: "Search the cold memory (older conversation that is no longer in the context) for events related to a query; found events return to the context.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},` +
			`"k":{"type":"integer","description":"how many events (default 5, at most 20)"}},"required":["query"]}`),
	}
}

func (coldQueryTool) ParallelSafe() bool { return true }

func (t coldQueryTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("bad arguments: %w", err)
	}
	if strings.TrimSpace(a.Query) == "" {
		return "", errors.New("query is empty")
	}
	if a.K <= 0 {
		a.K = 5
	}
	a.K = min(a.K, toolRecallMax)
	tr, ok := agent.TurnFrom(ctx)
	if !ok {
		return "", errors.New("coldcontext_query runs only inside a turn")
	}
	hits, err := t.m.recall(ctx, tr.Session, a.Query, a.K, []memory.Layer{memory.LayerL2}, nil)
	if err != nil {
		return "", err
	}
	v, err := t.m.viewerOf(ctx, tr.Session)
	if err != nil {
		return "", err
	}
	facts, err := t.m.recallFacts(ctx, v, a.Query, min(a.K, autoRecallFacts))
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
	if err := t.m.store.Touch(ctx, ids, t.m.k.clock()); err != nil {
		return "", err
	}
	if err := t.m.store.SetLayer(ctx, ids, memory.LayerL1); err != nil {
		return "", err
	}
	t.m.mu.Lock()
	for _, id := range ids {
		t.m.recalled[id] = true
	}
	t.m.mu.Unlock()
	back := make([]memory.Event, len(hits))
	for i, h := range hits {
		back[i] = h.Event
	}
	t.m.addToWindows(back)
	if b.Len() > 0 {
		b.WriteString("Events:\n")
	}
	for _, h := range hits {
		b.WriteString(describe(h.Event))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// Window implements client.Service: the last window computed for the session, or one computed
// now (without sinking) for its last user message.
func (k *Kernel) Window(ctx context.Context, session string) (client.Window, error) {
	if k.mem == nil {
		return client.Window{}, fmt.Errorf("%w: memory features need an indexed store", client.ErrUnavailable)
	}
	if strings.TrimSpace(session) == "" {
		return client.Window{}, invalid("the session id is empty") // as the HTTP API answers
	}
	if _, err := k.store.GetSession(ctx, session); err != nil {
		return client.Window{}, mapErr(err)
	}
	k.mem.mu.Lock()
	w, ok := k.mem.windows[session]
	rec := k.mem.recalls[session]
	k.mem.mu.Unlock()
	if ok {
		w.Recall = rec
		return w, nil
	}
	input := ""
	hist, err := k.store.History(ctx, session, 50)
	if err != nil {
		return client.Window{}, mapErr(err)
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Role == memory.RoleUser {
			input = hist[i].Content
			break
		}
	}
	w, _, err = k.mem.compute(ctx, session, input, false)
	w.Recall = rec
	return w, mapErr(err)
}

// SearchMemory implements client.Service with the same Recall the agent uses.
func (k *Kernel) SearchMemory(ctx context.Context, q client.MemoryQuery) ([]client.MemoryHit, error) {
	if k.mem == nil {
		return nil, fmt.Errorf("%w: memory features need an indexed store", client.ErrUnavailable)
	}
	if strings.TrimSpace(q.Text) == "" {
		return nil, invalid("the query is empty")
	}
	if q.K < 0 || q.K > client.MaxMemoryK { // as the HTTP API answers
		return nil, invalid("k must be from 1 to %d, got %d", client.MaxMemoryK, q.K)
	}
	if q.K == 0 {
		q.K = client.DefaultMemoryK
	}
	var scope *memory.Scope
	if q.Scope != "" {
		sc, err := memory.ParseScope(q.Scope)
		if err != nil {
			return nil, invalid("%v", err)
		}
		scope = &sc
	}
	var layers []memory.Layer
	switch q.Layer {
	case 0:
	case 1, 2:
		layers = []memory.Layer{memory.Layer(q.Layer)}
	default:
		return nil, invalid("layer must be 1 or 2")
	}
	want := q.K
	if scope != nil {
		want = min(100, q.K*5) // filter by scope after recall, from a wider pool
	}
	hits, err := k.mem.recall(ctx, q.Session, q.Text, want, layers, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]client.MemoryHit, 0, q.K)
	for _, h := range hits {
		e := h.Event
		if scope != nil && e.Scope != *scope {
			continue
		}
		out = append(out, hitOut(e, h.Score, h.Reason))
		if len(out) == q.K {
			break
		}
	}
	return out, nil
}

// Recall is the memory's Recall for benchmarks and tools inside the kernel: the top k events
// (L1 or L2) that session may see.
func (k *Kernel) Recall(ctx context.Context, session, text string, kk int) ([]cold.Hit, error) {
	if k.mem == nil {
		return nil, fmt.Errorf("%w: memory features need an indexed store", client.ErrUnavailable)
	}
	return k.mem.recall(ctx, session, text, kk, nil, nil)
}

// IngestEvent is one message from a channel (or an import) stored as a memory event.
type IngestEvent struct {
	Session string
	Role    memory.Role // default user
	Content string
	Partner string
	Time    time.Time
	Meta    map[string]string
}

// Ingest stores channel messages in their session as events of the session's channel and scope,
// through the same store path the agent uses. Each call is one transaction.
func (k *Kernel) Ingest(ctx context.Context, evs []IngestEvent) ([]memory.Event, error) {
	sessions := map[string]memory.Session{}
	out := make([]memory.Event, 0, len(evs))
	for _, in := range evs {
		s, ok := sessions[in.Session]
		if !ok {
			var err error
			if s, err = k.store.GetSession(ctx, in.Session); err != nil {
				return nil, mapErr(err)
			}
			sessions[in.Session] = s
		}
		content := strings.TrimSpace(sanitize(in.Content))
		if content == "" {
			return nil, invalid("message %d of %d is empty", len(out)+1, len(evs))
		}
		role := in.Role
		if role == "" {
			role = memory.RoleUser
		}
		t := in.Time
		if t.IsZero() {
			t = k.clock()
		}
		out = append(out, memory.Event{Session: s.ID, Role: role, Content: content, Partner: in.Partner, Channel: s.Channel,
			Scope: s.Scope, Time: t, Meta: in.Meta, Tokens: llm.EstimateTokens(content)})
	}
	stored, err := k.store.AppendEvents(ctx, out)
	return stored, mapErr(err)
}

// sanitize makes text safe to store and index: valid UTF-8 without NUL bytes.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// SettleMemory waits until the memory's background work on what was stored so far (scene
// observation) is done; benchmarks call it between ingesting and asking.
func (k *Kernel) SettleMemory() {
	if k.mem != nil {
		k.mem.obs.flush()
	}
}
