package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// Options configures a [Host]. Zero fields take the defaults documented on each.
type Options struct {
	Registry  Registry     // where plugin tools are attached; required
	Publisher Publisher    // lifecycle events; nil drops them
	Logger    *slog.Logger // nil discards

	// Clock is the time source for crash accounting and log lines; default time.Now.
	Clock func() time.Time
	// After is the timer used for restart delays, the handshake timeout and pings; default
	// time.After. Tests inject a fake to drive supervision without sleeping. (The stop ladder's
	// graces use real timers: they wait on real processes.)
	After func(d time.Duration) <-chan time.Time

	HandshakeTimeout time.Duration // initialize through the tools listing; default 10s
	PingInterval     time.Duration // default 30s
	PingTimeout      time.Duration // default 5s; a failed ping is a crash (the process is killed)
	StopGrace        time.Duration // per rung of the stop ladder; default 2s
	RestartDelays    []time.Duration
	// RestartDelays are the waits before restarting after the 1st, 2nd, 3rd… crash within the
	// breaker window (the last one repeats); default 1s, 2s, 3s.
	BreakerWindow  time.Duration // default 5m
	BreakerCrashes int           // the BreakerCrashes-th crash within BreakerWindow trips; default 4
	LogLines       int           // stderr lines kept per plugin; default 500
	// ClientInfo is how the host introduces itself in initialize; default {hologram, dev}.
	ClientInfo protocol.Implementation

	// ImageText, when set, reads the text in a tool result's images (OCR): it follows the
	// result's text, so the model and memory see the words of a screenshot. nil: images are
	// only summarised.
	ImageText func(ctx context.Context, mime string, data []byte) (string, error)

	// Services is the kernel's side of the native extensions (hooks, channels, memory, events,
	// notify, llm); nil: native plugins get the MCP lifecycle only, and their kernel calls are
	// answered "not available".
	Services Services
	// TurnOf returns the ids of the agent turn a tool call's context belongs to and of its
	// session ("" outside a turn); native plugins receive them in tools/call's _meta. nil:
	// never sent.
	TurnOf func(ctx context.Context) (turn, session string)
	// HookTimeout bounds one run of a plugin hook that declares no timeout; default 2s.
	// MaxHookTimeout caps what a plugin may declare; default 30s.
	HookTimeout    time.Duration
	MaxHookTimeout time.Duration
	// NoCgroups keeps the plugins in the host's own cgroup; by default each plugin process gets
	// a cgroup v2 directory of its own where the hierarchy is writable (see cgroups).
	NoCgroups bool
	// Shm, when set, gives each native plugin process its own shared-memory region (fds 3, 4,
	// 5) for payloads over 64 KiB and the event ring; nil: no region.
	Shm *ShmOptions
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 30 * time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 5 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if len(o.RestartDelays) == 0 {
		o.RestartDelays = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	}
	if o.BreakerWindow <= 0 {
		o.BreakerWindow = 5 * time.Minute
	}
	if o.BreakerCrashes <= 0 {
		o.BreakerCrashes = 4
	}
	if o.LogLines <= 0 {
		o.LogLines = 500
	}
	if o.HookTimeout <= 0 {
		o.HookTimeout = DefaultHookTimeout
	}
	if o.MaxHookTimeout <= 0 {
		o.MaxHookTimeout = DefaultMaxHookTimeout
	}
	if o.ClientInfo.Name == "" {
		o.ClientInfo.Name = "hologram"
		if o.ClientInfo.Version == "" {
			o.ClientInfo.Version = "dev"
		}
	}
	return o
}

// ErrClosed is returned by [Host.Add] (and the other starting methods) after [Host.Close].
var ErrClosed = errors.New("plugin host closed")

// Host supervises plugins: it starts each as a child process, speaks MCP with it over
// stdin/stdout, attaches its tools to the [Registry], restarts it after a crash until the breaker
// trips, and stops it with the ladder (shutdown request for native plugins, close stdin,
// SIGTERM, SIGKILL).
//
// Lifecycle: [New], then [Host.Add] per plugin, then [Host.Close] exactly once. All methods are
// safe for concurrent use. Operations on one plugin are serialized.
type Host struct {
	opts Options
	log  *slog.Logger

	cg cgroups

	mu      sync.Mutex
	plugins map[string]*plugin
	closed  bool
}

// New returns a Host. opts.Registry is required. The Registry and the Publisher are called from
// the host's goroutines (AddTool and RemoveTools while the plugin's tool set is locked) and must
// not call back into the Host.
func New(opts Options) *Host {
	opts = opts.withDefaults()
	return &Host{opts: opts, log: opts.Logger, plugins: map[string]*plugin{}, cg: cgroups{off: opts.NoCgroups}}
}

// publish sends an event to the Publisher, if any.
func (h *Host) publish(event string, payload map[string]any) {
	if h.opts.Publisher != nil {
		h.opts.Publisher.Publish(event, payload)
	}
}

// lookup returns the named plugin or ErrNotFound.
func (h *Host) lookup(name string) (*plugin, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.plugins[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w", name, ErrNotFound)
	}
	return p, nil
}

// Add validates spec and adds the plugin: the name must match [A-Za-z0-9._-]{1,64}, exactly one
// of Command and Dir must be set, and a native plugin's Dir/plugin.json must name an executable
// entry inside Dir. Unless spec.Disabled, the plugin is started and Add waits (bounded by ctx) for
// the first start attempt to finish: the status is then running, or backoff after a failed
// handshake. A duplicate name is [ErrExists]; an invalid spec wraps [ErrInvalid].
func (h *Host) Add(ctx context.Context, spec Spec) (Status, error) {
	prep, err := prepare(spec)
	if err != nil {
		return Status{}, err
	}
	p := newPlugin(h, prep)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return Status{}, ErrClosed
	}
	if _, dup := h.plugins[spec.Name]; dup {
		h.mu.Unlock()
		return Status{}, fmt.Errorf("plugin %q: %w", spec.Name, ErrExists)
	}
	h.plugins[spec.Name] = p
	h.mu.Unlock()
	if prep.spec.Disabled {
		return p.status(), nil
	}
	p.op.Lock()
	defer p.op.Unlock()
	return p.start(ctx), nil
}

// Remove stops the plugin (the ladder; not a crash), detaches its tools and forgets it. The
// returned status is its last, with state stopped.
func (h *Host) Remove(ctx context.Context, name string) (Status, error) {
	p, err := h.lookup(name)
	if err != nil {
		return Status{}, err
	}
	p.op.Lock()
	defer p.op.Unlock()
	st := p.stop(ctx, StateStopped, "removed")
	h.mu.Lock()
	if h.plugins[name] == p {
		delete(h.plugins, name)
	}
	h.mu.Unlock()
	return st, nil
}

// Enable resets the plugin's breaker and crash history and starts it if it is not running
// (waiting, bounded by ctx, for the first start attempt). Enabling a running plugin only resets
// the breaker.
func (h *Host) Enable(ctx context.Context, name string) (Status, error) {
	p, err := h.lookup(name)
	if err != nil {
		return Status{}, err
	}
	if h.isClosed() {
		return Status{}, ErrClosed
	}
	p.op.Lock()
	defer p.op.Unlock()
	p.mu.Lock()
	p.breaker.reset()
	p.spec.Disabled = false
	running := p.run != nil && (p.state == StateRunning || p.state == StateStarting)
	p.mu.Unlock()
	if running {
		return p.status(), nil
	}
	p.stop(ctx, StateStopped, "")
	return p.start(ctx), nil
}

// Disable stops the plugin with the ladder and keeps it configured but not running: no restart
// happens until [Host.Enable].
func (h *Host) Disable(ctx context.Context, name string) (Status, error) {
	p, err := h.lookup(name)
	if err != nil {
		return Status{}, err
	}
	p.op.Lock()
	defer p.op.Unlock()
	p.mu.Lock()
	p.spec.Disabled = true
	p.mu.Unlock()
	return p.stop(ctx, StateDisabled, "disabled"), nil
}

// Restart stops the plugin with the ladder (not a crash) and starts it again, waiting (bounded
// by ctx) for the start attempt. A restart is the owner's decision, so like [Host.Enable] it
// resets the breaker.
func (h *Host) Restart(ctx context.Context, name string) (Status, error) {
	p, err := h.lookup(name)
	if err != nil {
		return Status{}, err
	}
	if h.isClosed() {
		return Status{}, ErrClosed
	}
	p.op.Lock()
	defer p.op.Unlock()
	p.stop(ctx, StateStopped, "restart")
	p.mu.Lock()
	p.breaker.reset()
	p.spec.Disabled = false
	p.mu.Unlock()
	return p.start(ctx), nil
}

// List returns every plugin's status, sorted by name.
func (h *Host) List() []Status {
	h.mu.Lock()
	ps := make([]*plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		ps = append(ps, p)
	}
	h.mu.Unlock()
	out := make([]Status, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the named plugin's status or [ErrNotFound].
func (h *Host) Get(name string) (Status, error) {
	p, err := h.lookup(name)
	if err != nil {
		return Status{}, err
	}
	return p.status(), nil
}

// Logs returns the last n lines the plugin wrote to stderr, oldest first (all kept lines when
// n <= 0). The lines survive restarts and stops.
func (h *Host) Logs(name string, n int) ([]LogLine, error) {
	p, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	return p.logs.last(n), nil
}

// Close stops every plugin with the ladder, in parallel, and refuses further starts. Plugins end
// in state stopped. If ctx ends first, the remaining ladders jump to SIGKILL; Close still waits
// for the processes to be reaped and returns ctx's error.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	ps := make([]*plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		ps = append(ps, p)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.op.Lock()
			defer p.op.Unlock()
			p.stop(ctx, StateStopped, "host closed")
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// isClosed reports whether Close has been called.
func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}
