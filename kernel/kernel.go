// Package kernel wires the agent's subsystems (store, memory engine, providers, agent loop, plugin
// host, event bus, readiness) into one Kernel, and hands out its roles (roles.go: Chat, Sessions,
// Memory …, all of them as Service) that implement client.Service and client.CompletionService.
// The memory's logic lives in memory/engine, the owner's memory admin in kernel/memadmin.
//
// Lifecycle: New (no I/O besides reading the store) → Start (marks facilities ready) → Drain
// (optional: lets in-flight turns finish) → Close. The HTTP API (kernel/api) and the binaries
// (cmd/homed, cmd/hologram) sit above this package; the concrete store and LLM client are chosen by
// the binaries and passed in Deps.
package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/kernel/agent"
	"github.com/hologramagent/hologram/kernel/assistants"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/kernel/events"
	"github.com/hologramagent/hologram/kernel/kstate"
	"github.com/hologramagent/hologram/kernel/llm"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/kernel/toolwin"
	"github.com/hologramagent/hologram/kernel/uploads"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/engine"
	"github.com/hologramagent/hologram/memory/graph"
	"github.com/hologramagent/hologram/memory/ocr"
	"github.com/hologramagent/hologram/memory/stt"
)

// Version is the product version, set at link time by the Makefile.
var Version = "dev"

// Facility names the kernel declares on its readiness bus, in start order.
const (
	FacilityStore     = "store"
	FacilityProviders = "providers"
	FacilityAgent     = "agent"
)

// Sealer seals secrets at rest (kernel/security.Codec implements it).
type Sealer interface {
	SealString(domain, plaintext string) (string, error)
	OpenString(domain, sealed string) (string, error)
}

// ProviderFactory builds an LLM provider from its settings (cmd/* passes llm/openai).
type ProviderFactory func(ProviderSettings) (llm.Provider, error)

// ProviderSettings is one configured provider with its key opened.
type ProviderSettings struct {
	Name     string
	BaseURL  string
	Model    string
	APIKey   string
	Proxy    string
	Priority int
	Vision   *bool // the model takes images; nil: the provider asks the server
}

// OCRDeps are the assets of the OCR of images into text (memory/ocr.Assets).
type OCRDeps = ocr.Assets

// STTDeps are the assets of the transcription of voice messages (memory/stt.Assets).
type STTDeps = stt.Assets

// Deps are the kernel's injected dependencies. Store, Sealer and NewProvider are required.
type Deps struct {
	Store       Store
	Sealer      Sealer
	NewProvider ProviderFactory
	Logger      *slog.Logger
	Clock       func() time.Time
	// Tools are extra in-process tools (time_now is always present).
	Tools []agent.Tool
	// Tokens turns text into index terms exactly as the store indexes events (the memory's
	// recall and window need it). Required.
	Tokens func(text string) ([]string, error)
	// Facilities are heavy assets loaded in the background after Start.
	Facilities []Facility
	// DetectTargets are the local servers DetectProviders probes; nil: Ollama on
	// 127.0.0.1:11434 and llama.cpp's server on 127.0.0.1:8080 (desktop.go).
	DetectTargets []DetectTarget
	// DetectTimeout bounds each probe of DetectProviders; zero: 700 ms.
	DetectTimeout time.Duration
	// ProviderTestTimeout bounds TestProvider's request; zero: 20 s.
	ProviderTestTimeout time.Duration
	// Embedding is the dense-embedding side (memory/engine.Dense; embedding.go); the zero value:
	// sparse only.
	Embedding EmbeddingDeps
	// OCR reads the text of images (memory/ocr.Lazy); the zero value: images keep no text.
	OCR OCRDeps
	// STT transcribes voice messages (memory/stt.Lazy); the zero value: audio keeps no text.
	STT STTDeps
	// Lexicon and Tag are the English word classes (WordNet) and Chinese parts of speech
	// (jieba) of the LLM-free fact extraction (nil: objects are not checked by part of speech).
	Lexicon graph.Lexicon
	Tag     func(text string) []graph.Tagged
}

// Kernel is the running agent. It is safe for concurrent use.
type Kernel struct {
	cfg     config.Config
	db      Store        // the store itself (graph, blocks, backup…)
	store   memory.Store // db as the kernel's writers see it: appends reach the memory engine
	sealer  Sealer
	newProv ProviderFactory
	log     *slog.Logger
	clock   func() time.Time
	state   *kstate.State
	bus     *events.Bus
	agent   *agent.Agent
	mem     *engine.Engine
	admin   *memadmin.Admin // the owner's side of the memory (graph, edits, forget)
	asst    *assistants.Service
	facs    []Facility
	started time.Time
	plugins *plugins // the plugin host and its tools (plugins.go)
	ocr     *ocr.Lazy
	stt     *stt.Lazy
	uploads *uploads.Store // files streamed ahead of their chat message

	provMu    sync.Mutex
	providers []ProviderSettings // sorted by priority, name; keys opened
	built     map[string]llm.Provider

	gcStop chan struct{} // closed by Close: stops the memgc schedule

	desk    deskOptions // DetectProviders and TestProvider settings (desktop.go)
	pauseMu sync.Mutex  // serialises SetPaused
	paused  atomic.Bool // channel input and scheduled jobs stopped (desktop.go)

	turnMu  sync.Mutex
	turns   map[string]*turn
	closing bool
	turnWG  sync.WaitGroup
}

type turn struct {
	id      string
	session string
	cancel  context.CancelCauseFunc
}

// ErrClosing is returned for new turns once the kernel is shutting down.
var ErrClosing = errors.New("kernel is shutting down")

// New builds a kernel from its configuration and dependencies. It does not start anything.
func New(cfg config.Config, deps Deps) (*Kernel, error) {
	if deps.Store == nil || deps.Sealer == nil || deps.NewProvider == nil || deps.Tokens == nil {
		return nil, errors.New("kernel: Store, Sealer, NewProvider and Tokens are required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	k := &Kernel{
		cfg:     cfg,
		db:      deps.Store,
		sealer:  deps.Sealer,
		newProv: deps.NewProvider,
		log:     deps.Logger,
		clock:   deps.Clock,
		state:   kstate.New(),
		built:   map[string]llm.Provider{},
		turns:   map[string]*turn{},
	}
	k.state.Declare(FacilityStore, FacilityProviders, FacilityAgent)
	k.facs = deps.Facilities
	k.desk = newDeskOptions(deps)
	for _, f := range deps.Facilities {
		k.state.Declare(f.Name)
	}
	k.bus = events.New(events.Options{Logger: deps.Logger, Clock: deps.Clock, Guard: events.DenyPluginTypes(isKernelEvent)})
	k.ocr = ocr.NewLazy(deps.OCR, deps.Logger)
	k.stt = stt.NewLazy(deps.STT, deps.Logger)
	k.uploads = uploads.New(cfg.DataDir, cfg.API.MaxUploadBytes)
	m, err := newEngine(k, deps)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	k.mem = m
	k.admin = &memadmin.Admin{DB: deps.Store, Mem: m, Log: k.log, Clock: k.clock}
	k.asst = &assistants.Service{DB: deps.Store, Create: sessionRole{k}.CreateSession, Log: k.log}
	k.state.OnClose(FacilityDense, m.Close) // after the turns, before the binary closes the store
	// Every write of the kernel (turns, ingests) goes through here, so the engine stays in step.
	k.store = observedStore{Store: deps.Store, onAppend: m.Appended}
	k.agent = agent.New(agent.Options{
		Window:       m.ContextWindow,
		BasePrompt:   k.admin.RenderBasePrompt,
		Store:        k.store,
		Provider:     k.resolveProvider,
		Clock:        deps.Clock,
		Logger:       deps.Logger,
		MaxRounds:    cfg.Agent.MaxRounds,
		MaxWall:      cfg.Agent.MaxWall.Duration,
		ToolTimeout:  cfg.Agent.ToolTimeout.Duration,
		TokenBudget:  cfg.Agent.TokenBudget,
		HistoryLimit: cfg.Agent.HistoryLimit,
		ToolWindow:   toolwin.Options{MaxTools: cfg.Agent.MaxTools},
		// The session's visibility (the security issue) goes in MayCall; nil offers every tool.
		MaxResultBytes: cfg.Agent.MaxResultBytes,
		MayCall:        k.asst.MayCall,  // a chat started from an assistant offers its tools
		ImageText:      k.ocr.ImageText, // a tool's images are read as attachments are
	})
	if err := k.agent.AddTool(agent.TimeNow(deps.Clock), "builtin"); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	// Long tool results are stored as blocks; result_read pages them within the turn's scope.
	if err := k.agent.AddTool(agent.ResultRead(deps.Store, nil), "builtin"); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	for _, t := range deps.Tools {
		if err := k.agent.AddTool(t, "builtin"); err != nil {
			return nil, fmt.Errorf("kernel: %w", err)
		}
	}
	k.plugins = newPlugins(k, cfg.Plugins, k.newPluginHost)
	if err := k.agent.AddTool(coldQueryTool{k.mem}, "builtin"); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	if err := k.agent.AddHook(agent.Hook{Name: "kernel/recall", Stage: agent.StagePreAction, Fn: k.preActionRecall}); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	return k, nil
}

// isKernelEvent says which event types only the kernel may publish (ARCHITECTURE.md §5: plugins
// never publish kernel events).
func isKernelEvent(typ string) bool {
	return strings.HasPrefix(typ, "turn_") || strings.HasPrefix(typ, "kernel_")
}

// Start loads the providers, marks the facilities ready and the kernel complete. The store is
// already open (the binary opened it).
func (k *Kernel) Start(ctx context.Context) error {
	k.started = k.clock()
	k.state.MarkReady(FacilityStore)
	if err := k.loadPaused(ctx); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	if err := k.reloadProviders(ctx); err != nil {
		return fmt.Errorf("kernel: loading providers: %w", err)
	}
	k.state.MarkReady(FacilityProviders)
	if _, err := k.ensureSession(ctx, defaultSession, "Main"); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	k.state.MarkReady(FacilityAgent)
	k.state.MarkComplete()
	if err := k.mem.Start(ctx); err != nil { // the chosen dense model loads in the background
		return fmt.Errorf("kernel: %w", err)
	}
	// Plugins come up in the background once the kernel is ready.
	if err := k.plugins.start(ctx); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	// Heavy assets load in the background: the API serves at once, and they load only once.
	for _, f := range k.facs {
		if f.Load == nil {
			continue // lazy
		}
		k.state.Start(context.WithoutCancel(ctx), f.Name, nil, func(ctx context.Context) error {
			t0 := time.Now()
			if err := f.Load(ctx); err != nil {
				k.log.Warn("facility unavailable", "facility", f.Name, "err", err)
				return err
			}
			k.log.Info("facility ready", "facility", f.Name, "ms", time.Since(t0).Milliseconds())
			return nil
		})
	}
	if k.cfg.Memory.GCInterval.Duration > 0 {
		k.gcStop = make(chan struct{})
		go gcLoop(k, k.cfg.Memory.GCInterval.Duration, k.gcStop)
	}
	k.log.Info("kernel ready", "version", Version, "providers", len(k.providers))
	return nil
}

// State exposes the readiness bus (read-only use: snapshots and waits).
func (k *Kernel) State() *kstate.State {
	markLazy(k)
	return k.state
}

// markLazy marks the lazy facilities that have loaded since.
func markLazy(k *Kernel) {
	for _, f := range k.facs {
		if f.Loaded != nil && !k.state.IsReady(f.Name) && f.Loaded() {
			k.state.MarkReady(f.Name)
		}
	}
}

// Bus exposes the kernel event bus for subscribers.
func (k *Kernel) Bus() *events.Bus { return k.bus }

// Agent exposes the agent loop so the binaries can add tools and hooks.
func (k *Kernel) Agent() *agent.Agent { return k.agent }

// Drain refuses new turns and waits for in-flight ones to finish until ctx is done; then it
// cancels those still running and waits for them to record their results.
func (k *Kernel) Drain(ctx context.Context) {
	k.turnMu.Lock()
	k.closing = true
	n := len(k.turns)
	k.turnMu.Unlock()
	if n > 0 {
		k.log.Info("waiting for in-flight turns", "turns", n)
	}
	done := make(chan struct{})
	go func() { k.turnWG.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	k.turnMu.Lock()
	for _, t := range k.turns {
		t.cancel(ErrClosing)
	}
	k.turnMu.Unlock()
	<-done
}

// Close cancels running turns, waits for them and releases the kernel's resources. The store is
// closed by its owner (the binary).
func (k *Kernel) Close() error {
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	k.Drain(cctx)
	if k.gcStop != nil {
		close(k.gcStop)
		k.gcStop = nil
	}
	pctx, pcancel := context.WithTimeout(context.Background(), pluginStopTimeout)
	defer pcancel()
	perr := k.plugins.close(pctx)
	k.ocr.Close()
	k.stt.Close()
	return errors.Join(perr, k.state.Close())
}
