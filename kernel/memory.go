package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/backup"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/engine"
)

// Store is what the kernel needs of its store: the memory engine's memory.Memory and the
// backup's source and sink. memory/sqlite implements it.
type Store interface {
	memory.Memory
	backup.Source
	backup.Sink
	backup.ChatSink
}

// Facility is a heavy asset (jieba, WordNet…) on the kernel's readiness bus. An eager one loads
// in the background after Start; a lazy one loads when first needed (jieba on the first Chinese
// text), and Loaded tells when it has. Memory works meanwhile, with less recall.
type Facility struct {
	Name   string
	Load   func(ctx context.Context) error // eager: run after Start
	Loaded func() bool                     // lazy: polled when readiness is reported
}

// newEngine builds the memory engine on the kernel's store, clock, log and providers.
func newEngine(k *Kernel, deps Deps) (*engine.Engine, error) {
	mc := k.cfg.Memory
	params, err := cold.DefaultParams().With(mc.Recall)
	if err != nil {
		return nil, fmt.Errorf("memory.recall: %w", err)
	}
	return engine.New(engine.Options{
		Recall: &params,
		Store:  deps.Store, Tokens: deps.Tokens, CountTokens: llm.EstimateTokens, Clock: k.clock, Logger: k.log,
		Config: engine.Config{WindowTokens: mc.WindowTokens, Recent: mc.Recent, HistoryLimit: k.cfg.Agent.HistoryLimit,
			Extractor: mc.Extractor, DistillAccesses: mc.DistillAccesses, DistillIdle: mc.DistillIdle.Duration},
		Completer: llmCompleter{k},
		HaveLLM: func() bool {
			k.provMu.Lock()
			defer k.provMu.Unlock()
			return len(k.providers) > 0
		},
		ActiveTurns: func() int {
			k.turnMu.Lock()
			defer k.turnMu.Unlock()
			return len(k.turns)
		},
		Lexicon: deps.Lexicon, Tag: deps.Tag,
		Dense: engine.DenseOptions{Models: deps.Embedding.Models, Runtime: deps.Embedding.Runtime, RuntimeErr: deps.Embedding.RuntimeErr,
			Loading: func() { k.state.Declare(FacilityDense) }, Ready: func() { k.state.MarkReady(FacilityDense) }},
	})
}

// observedStore is the store as the kernel's writers see it: appends also reach the engine.
type observedStore struct {
	memory.Store
	onAppend func([]memory.Event)
}

// AppendEvents stores events and tells the engine.
func (o observedStore) AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error) {
	out, err := o.Store.AppendEvents(ctx, evs)
	if err == nil {
		o.onAppend(out)
	}
	return out, err
}

// preActionRecall is the pre_action hook: the engine's recall, as a system message before the
// user's message (so the model reads it as context for it).
func (k *Kernel) preActionRecall(ctx context.Context, d *agent.StageData) (agent.Patch, error) {
	text, err := k.mem.RecallText(ctx, d.Session, d.TurnID, d.Input)
	if err != nil || text == "" || len(d.Messages) == 0 {
		return agent.Patch{}, err
	}
	msgs := make([]llm.Message, 0, len(d.Messages)+1)
	msgs = append(msgs, d.Messages[:len(d.Messages)-1]...)
	msgs = append(msgs, llm.Message{Role: "system", Content: text}, d.Messages[len(d.Messages)-1])
	return agent.Patch{Messages: &msgs}, nil
}

// coldQueryTool is the coldcontext_query tool (memory/engine.Engine.ColdQuery) in the turn's
// session.
type coldQueryTool struct{ m *engine.Engine }

func (coldQueryTool) Spec() llm.Tool {
	return llm.Tool{
		Name:        "coldcontext_query",
		Description: "Search the cold memory (older conversation that is no longer in the context) for events related to a query; found events return to the context.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"},` +
			`"k":{"type":"integer","description":"how many events (default 5, at most 20)"}},"required":["query"]}`),
	}
}

func (coldQueryTool) ParallelSafe() bool { return true }

// Visibility: offered in every session; it answers in the session's scope.
func (coldQueryTool) Visibility() agent.Visibility { return agent.VisibilityAny }

func (t coldQueryTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("bad arguments: %w", err)
	}
	tr, ok := agent.TurnFrom(ctx)
	if !ok {
		return "", errors.New("coldcontext_query runs only inside a turn")
	}
	return t.m.ColdQuery(ctx, tr.Session, a.Query, a.K)
}

// Window implements client.Service: the last window computed for the session, or one computed
// now (without sinking) for its last user message.
func (k memoryRole) Window(ctx context.Context, session string) (client.Window, error) {
	if strings.TrimSpace(session) == "" {
		return client.Window{}, invalid("the session id is empty") // as the HTTP API answers
	}
	if _, err := k.store.GetSession(ctx, session); err != nil {
		return client.Window{}, mapErr(err)
	}
	w, err := k.mem.Explain(ctx, session)
	if err != nil {
		return client.Window{}, mapErr(err)
	}
	out := client.Window{Session: w.Session, Input: w.Input, Budget: w.Budget, Used: w.Used, Pinned: w.Pinned, Sunk: w.Sunk}
	for _, it := range w.Items {
		e := it.Event
		out.Items = append(out.Items, client.WindowItem{ID: e.ID, Time: e.Time, Role: string(e.Role), Content: e.Content, Tokens: e.Tokens,
			Score: it.Score, Reason: it.Reason, Source: it.Source})
	}
	if r := w.Recall; r != nil {
		out.Recall = &client.Recall{TurnID: r.TurnID, Time: r.Time, Input: r.Input, Facts: []client.RecalledFact{}, Events: []client.MemoryHit{}}
		for _, f := range r.Facts {
			out.Recall.Facts = append(out.Recall.Facts, client.RecalledFact{Triple: f.Triple, Text: f.Text, Score: f.Score})
		}
		for _, h := range r.Events {
			out.Recall.Events = append(out.Recall.Events, memadmin.HitOut(h.Event, h.Score, h.Reason, h.Images...))
		}
	}
	if tw, ok := k.agent.LastWindow(session); ok {
		out.Tools = &client.ToolWindow{TurnID: tw.TurnID, Round: tw.Round, Time: tw.Time, Sent: tw.Sent, Tokens: tw.Tokens, Left: tw.Left,
			Tools: make([]client.WindowTool, 0, len(tw.Scores))}
		for _, s := range tw.Scores {
			out.Tools.Tools = append(out.Tools.Tools, client.WindowTool{Name: s.Name, Score: s.Score, Tokens: s.Tokens, Sent: s.Sent, Reason: s.Reason})
		}
	}
	return out, nil
}

// SearchMemory implements client.Service with the same Recall the agent uses.
func (k memoryRole) SearchMemory(ctx context.Context, q client.MemoryQuery) ([]client.MemoryHit, error) {
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
	hits, err := k.mem.Recall(ctx, q.Session, q.Text, want, layers, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]client.MemoryHit, 0, q.K)
	for _, h := range hits {
		e := h.Event
		if scope != nil && e.Scope != *scope {
			continue
		}
		out = append(out, memadmin.HitOut(e, h.Score, h.Reason, h.Images...))
		if len(out) == q.K {
			break
		}
	}
	return out, nil
}

// Recall is the memory's Recall for benchmarks and tools inside the kernel: the top k events
// (L1 or L2) that session may see.
func (k *Kernel) Recall(ctx context.Context, session, text string, kk int) ([]cold.Hit, error) {
	return k.mem.Recall(ctx, session, text, kk, nil, nil)
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
func (k *Kernel) SettleMemory() { k.mem.Settle() }

// MemoryGC implements client.Service: one pass of cooling, distillation and scene decay
// (memory/engine.Engine.GC).
func (k memoryRole) MemoryGC(ctx context.Context) (client.GCReport, error) {
	r, err := k.mem.GC(ctx)
	return client.GCReport{Cooled: r.Cooled, Distilled: r.Distilled, Entities: r.Entities, Triples: r.Triples, Confirmed: r.Confirmed,
		Superseded: r.Superseded, Extractor: r.Extractor, Decayed: r.Decayed, Took: r.Took}, err
}

// llmCompleter is distillation's LLM call through the kernel's providers (with their fallback).
type llmCompleter struct{ k *Kernel }

// Complete implements graph.Completer.
func (c llmCompleter) Complete(ctx context.Context, system, user string, schema json.RawMessage) (string, error) {
	p, err := c.k.resolveProvider("")
	if err != nil {
		return "", err
	}
	zero := 0.0
	resp, err := p.Chat(ctx, llm.Request{Temperature: &zero, ResponseSchema: schema, Messages: []llm.Message{
		{Role: "system", Content: system + "\n\nAnswer with one JSON object only, matching this JSON schema:\n" + string(schema)},
		{Role: "user", Content: user},
	}}, nil)
	if err != nil {
		return "", err
	}
	return resp.Message.Content, nil
}

// gcLoop runs memgc every interval until stop is closed.
func gcLoop(k *Kernel, interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if k.paused.Load() {
				k.log.Debug("memory gc skipped: the kernel is paused")
				continue
			}
			if _, err := k.mem.GC(ctx); err != nil && ctx.Err() == nil {
				k.log.Warn("memory gc failed", "err", err)
			}
		}
	}
}
