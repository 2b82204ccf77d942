// Package agent runs one conversational turn: the stage hooks, the context assembly, the LLM
// calls and the tool loop, the limits and the cancellation, and the persistence of every step
// through a [Store].
//
// The loop keeps one invariant above all others: every tool call in an assistant message gets
// exactly one tool result with its call id, recorded both in the message list the model sees and
// in the store, whatever happens to the call (unknown tool, bad arguments, denial, panic,
// timeout, cancellation, crashed plugin). A self-check before every LLM request repairs and
// counts any violation ([Agent.Repairs]).
//
// An [Agent] is safe for concurrent use: tools and hooks may be added and removed while turns run,
// and several turns (normally of different sessions) may run at once.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/toolwin"
	"github.com/hologramagent/hologram/memory"
)

// ErrToolUnavailable is wrapped by the error a tool returns when it cannot run at all, e.g.
// because the plugin that provides it crashed. The call is recorded with status "error".
var ErrToolUnavailable = errors.New("tool unavailable")

// Tool is a function the model may call. Implementations must be safe for concurrent use when
// ParallelSafe reports true.
type Tool interface {
	// Spec returns the name, description and JSON-schema parameters shown to the model.
	Spec() llm.Tool
	// ParallelSafe reports whether the tool may run at the same time as other tools of a batch.
	ParallelSafe() bool
	// Run executes the call. args is a JSON object already checked against Spec().Parameters.
	// The returned string is the result the model sees; an error is shown to the model as a
	// failure. Run must return promptly once ctx is done.
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// ToolInfo describes a registered tool.
type ToolInfo struct {
	Spec         llm.Tool
	ParallelSafe bool
	Source       string     // who registered it, e.g. "builtin" or a plugin name
	Visibility   Visibility // who may call it ([Scoped]; owner-only unless declared)
}

// Store is the part of memory.Store the agent needs; memory.Store satisfies it.
type Store interface {
	GetSession(ctx context.Context, id string) (memory.Session, error)
	AppendEvents(ctx context.Context, evs []memory.Event) ([]memory.Event, error)
	History(ctx context.Context, session string, limit int) ([]memory.Event, error)
}

var _ Store = memory.Store(nil)

// Options configures an [Agent]. Store and Provider are required; the other fields have defaults.
type Options struct {
	Store Store
	// Provider resolves the provider (possibly a fallback chain) for a session model ("" = the
	// default). It returns an error wrapping llm.ErrNoProvider when none is configured.
	Provider     func(model string) (llm.Provider, error)
	Clock        func() time.Time // default time.Now
	Logger       *slog.Logger     // default: discard
	MaxRounds    int              // LLM calls per turn, default 25
	MaxWall      time.Duration    // wall time per turn (measured with Clock), default 10m
	ToolTimeout  time.Duration    // per tool call, default 60s
	TokenBudget  int              // total tokens (reported usage) per turn; 0 = unlimited
	HistoryLimit int              // events loaded as context, default 200
	MaxTokens    int              // max_tokens per LLM request, default 4096
	// ToolWindow bounds the tools one request offers (see package toolwin): at most 64 by
	// default, never more than 128 with tool_search.
	ToolWindow toolwin.Options
	// MayCall, when set, says which tools a turn may call (a session's visibility and scopes);
	// the window, tool_search and the calls see only those. nil: every tool.
	MayCall func(ctx context.Context, turn TurnRequest, tool ToolInfo) bool
	// MaxResultBytes bounds a tool result (and an input) as the model sees it, default 64 KiB:
	// a longer result is stored whole as a text block and the model gets its head and tail and a
	// note naming the block, which [ResultRead] pages.
	MaxResultBytes int
	// Window, when set, chooses the events of a session that go into the prompt for an input
	// (the memory's L1 window), in chronological order; nil loads the last HistoryLimit events.
	Window func(ctx context.Context, session, input string) ([]memory.Event, error)
	// BasePrompt, when set, is the system prompt every turn starts with (date, time zone, the
	// owner, memory and tools); the session's own system prompt follows it.
	BasePrompt func(ctx context.Context, session string, scope memory.Scope) string
	// ImageText, when set, reads the text in an encoded image (OCR): a tool's images
	// ([AddResultImages], a client's answer) are stored with it and their result shows it.
	ImageText func(ctx context.Context, data []byte) (string, error)
}

// turnKey carries the running turn's request in the context tools and hooks receive.
type turnKey struct{}

// WithTurn returns ctx carrying req as the running turn (Run does this for tools and hooks).
func WithTurn(ctx context.Context, req TurnRequest) context.Context {
	return context.WithValue(ctx, turnKey{}, req)
}

// TurnFrom returns the request of the turn a tool or hook runs in.
func TurnFrom(ctx context.Context) (TurnRequest, bool) {
	r, ok := ctx.Value(turnKey{}).(TurnRequest)
	return r, ok
}

// Defaults of [Options].
const (
	DefaultMaxRounds    = 25
	DefaultMaxWall      = 10 * time.Minute
	DefaultToolTimeout  = 60 * time.Second
	DefaultHistoryLimit = 200
	DefaultMaxTokens    = 4096
)

// Agent runs turns. Create it with [New].
type Agent struct {
	opts Options
	log  *slog.Logger

	mu     sync.RWMutex
	tools  map[string]toolEntry
	hooks  []Hook
	scoped map[string]string // tool source → the one session that may call its tools (ScopeSource)

	repairs atomic.Uint64
	clients clientCalls // client-executed tools' calls waiting for their answer

	winMu   sync.Mutex
	lastWin map[string]WindowReport // by session
}

type toolEntry struct {
	tool   Tool
	spec   llm.Tool
	source string
	vis    Visibility
}

// New returns an agent with the defaults of [Options] filled in.
func New(opts Options) *Agent {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = DefaultMaxRounds
	}
	if opts.MaxWall <= 0 {
		opts.MaxWall = DefaultMaxWall
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = DefaultToolTimeout
	}
	if opts.HistoryLimit <= 0 {
		opts.HistoryLimit = DefaultHistoryLimit
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	return &Agent{opts: opts, log: opts.Logger, tools: map[string]toolEntry{}}
}

// AddTool registers t under its spec name. source names the owner (see [Agent.RemoveTools]).
// Its schema is normalised ([llm.NormalizeTool]: the repairs are logged); a duplicate or invalid
// name, or a schema that cannot be made valid, is an error.
func (a *Agent) AddTool(t Tool, source string) error {
	if t == nil {
		return errors.New("add tool: nil tool")
	}
	spec, err := a.normalize(t.Spec(), source)
	if err != nil {
		return fmt.Errorf("add tool: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.tools[spec.Name]; ok {
		return fmt.Errorf("add tool %s: already registered by %s", spec.Name, old.source)
	}
	a.tools[spec.Name] = toolEntry{tool: t, spec: spec, source: source, vis: visibilityOf(t)}
	return nil
}

// RemoveTools detaches every tool registered by source and returns how many were removed.
// Turns already running keep the tools of their current round.
func (a *Agent) RemoveTools(source string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for name, e := range a.tools {
		if e.source == source {
			delete(a.tools, name)
			n++
		}
	}
	return n
}

// ReplaceTools swaps every tool of a source for tools in one step, so that no turn ever sees the
// source's tools half replaced (a plugin re-listing its tools). A tool whose schema cannot be
// made valid ([llm.NormalizeTool]) is left out with a logged reason; nothing changes on an error
// (a nil tool, or a name another source holds).
func (a *Agent) ReplaceTools(source string, tools []Tool) error {
	entries := make([]toolEntry, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			return errors.New("replace tools: nil tool")
		}
		spec, err := a.normalize(t.Spec(), source)
		if err != nil { // one bad tool does not take its plugin's others with it
			a.log.Warn("tool left out", slog.String("source", source), slog.String("reason", err.Error()))
			continue
		}
		entries = append(entries, toolEntry{tool: t, spec: spec, source: source, vis: visibilityOf(t)})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[string]bool{}
	for _, e := range entries {
		if old, ok := a.tools[e.spec.Name]; (ok && old.source != source) || seen[e.spec.Name] {
			return fmt.Errorf("replace tools: %s is already registered", e.spec.Name)
		}
		seen[e.spec.Name] = true
	}
	for name, e := range a.tools {
		if e.source == source {
			delete(a.tools, name)
		}
	}
	for _, e := range entries {
		a.tools[e.spec.Name] = e
	}
	return nil
}

// normalize makes spec's schema one that servers accept and the agent can check arguments
// against, logging the repairs.
func (a *Agent) normalize(spec llm.Tool, source string) (llm.Tool, error) {
	spec, fixes, err := llm.NormalizeTool(spec)
	if err != nil {
		return spec, err
	}
	if _, err := parseSchema(spec.Parameters); err != nil {
		return spec, fmt.Errorf("tool %s: %w", spec.Name, err)
	}
	if len(fixes) > 0 {
		a.log.Info("tool schema repaired", slog.String("tool", spec.Name), slog.String("source", source), slog.String("fixes", strings.Join(fixes, "; ")))
	}
	return spec, nil
}

// Tools lists the registered tools sorted by name.
func (a *Agent) Tools() []ToolInfo {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]ToolInfo, 0, len(a.tools))
	for _, e := range a.tools {
		out = append(out, ToolInfo{Spec: e.spec, ParallelSafe: e.tool.ParallelSafe(), Source: e.source, Visibility: e.vis})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Name < out[j].Spec.Name })
	return out
}

// toolSnapshot returns the registered tools by name and the specs offered to a turn in scope
// sc ([MayCall]) sorted by name. The map keeps every tool, so that a call to one not offered is
// denied with a recorded result rather than reported unknown; only the tools scoped to another
// session ([Agent.ScopeSource]) are left out of both.
func (a *Agent) toolSnapshot(sc memory.Scope, session string) (map[string]toolEntry, []llm.Tool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	m := make(map[string]toolEntry, len(a.tools))
	specs := make([]llm.Tool, 0, len(a.tools))
	for name, e := range a.tools {
		if s, ok := a.scoped[e.source]; ok && s != session {
			continue // another session's own tools
		}
		m[name] = e
		if MayCall(e.vis, sc) {
			specs = append(specs, e.spec)
		}
	}
	sortTools(specs)
	return m, specs
}

func sortTools(specs []llm.Tool) {
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
}

// AddHook registers h. A hook with the same stage and name, an unknown stage, an empty name or a
// nil Fn is an error. Plugins name their hooks "<plugin>/<hook>".
func (a *Agent) AddHook(h Hook) error {
	if h.Name == "" {
		return errors.New("add hook: empty name")
	}
	if h.Fn == nil {
		return fmt.Errorf("add hook %s: nil func", h.Name)
	}
	if !h.Stage.valid() {
		return fmt.Errorf("add hook %s: unknown stage %q", h.Name, h.Stage)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, o := range a.hooks {
		if o.Stage == h.Stage && o.Name == h.Name {
			return fmt.Errorf("add hook %s: already registered at stage %s", h.Name, h.Stage)
		}
	}
	a.hooks = append(a.hooks, h)
	return nil
}

// RemoveHooks removes every hook whose name starts with prefix and returns how many were removed.
func (a *Agent) RemoveHooks(prefix string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.hooks[:0:0]
	for _, h := range a.hooks {
		if !strings.HasPrefix(h.Name, prefix) {
			kept = append(kept, h)
		}
	}
	n := len(a.hooks) - len(kept)
	a.hooks = kept
	return n
}

// hooksFor returns the hooks of a stage in execution order: priority descending, then name.
func (a *Agent) hooksFor(s Stage) []Hook {
	a.mu.RLock()
	var hs []Hook
	for _, h := range a.hooks {
		if h.Stage == s {
			hs = append(hs, h)
		}
	}
	a.mu.RUnlock()
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Priority != hs[j].Priority {
			return hs[i].Priority > hs[j].Priority
		}
		return hs[i].Name < hs[j].Name
	})
	return hs
}

// Repairs returns how many LLM requests the pre-send self-check had to repair since New. It stays
// 0 unless stored history is damaged (or the agent has a bug).
func (a *Agent) Repairs() uint64 { return a.repairs.Load() }
