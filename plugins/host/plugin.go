package host

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// plugin is one configured plugin and its supervisor state.
type plugin struct {
	h    *Host
	prep *prepared
	log  *slog.Logger
	logs *ring

	op sync.Mutex // serializes start/stop operations (Add, Enable, Disable, Restart, Remove, Close)

	mu      sync.Mutex // guards the fields below
	spec    Spec
	state   string
	pid     int
	starts  int
	lastErr string
	started time.Time
	breaker breaker
	run     *runner   // the current supervisor; nil when none
	inst    *instance // the instance that passed its handshake and has not died; nil otherwise
	toolsMu sync.Mutex
	tools   []string  // model-visible names, guarded by toolsMu
	toolsOf *instance // the instance whose tools are attached, guarded by toolsMu
	hooksOf *instance // the instance whose hooks are attached, guarded by toolsMu
}

// runner is one supervisor goroutine: it starts the process, restarts it after crashes and
// runs the stop ladder when asked.
type runner struct {
	stopOnce  sync.Once
	stopCh    chan struct{} // closed to ask the supervisor to stop
	killCh    chan struct{} // closed to make a running ladder jump to SIGKILL
	killOnce  sync.Once
	firstOnce sync.Once
	first     chan struct{} // closed when the first start attempt has finished
	done      chan struct{} // closed when the supervisor has returned
}

func newRunner() *runner {
	return &runner{
		stopCh: make(chan struct{}),
		killCh: make(chan struct{}),
		first:  make(chan struct{}),
		done:   make(chan struct{}),
	}
}

func (r *runner) stop()      { r.stopOnce.Do(func() { close(r.stopCh) }) }
func (r *runner) kill()      { r.killOnce.Do(func() { close(r.killCh) }) }
func (r *runner) firstDone() { r.firstOnce.Do(func() { close(r.first) }) }
func (r *runner) stopping() bool {
	select {
	case <-r.stopCh:
		return true
	default:
		return false
	}
}

// newPlugin returns a plugin in state disabled or stopped (not yet started).
func newPlugin(h *Host, prep *prepared) *plugin {
	p := &plugin{
		h:       h,
		prep:    prep,
		spec:    prep.spec,
		log:     h.log.With("plugin", prep.spec.Name),
		logs:    newRing(h.opts.LogLines),
		breaker: breaker{window: h.opts.BreakerWindow, max: h.opts.BreakerCrashes},
		state:   StateStopped,
	}
	if prep.spec.Disabled {
		p.state = StateDisabled
	}
	return p
}

// name is the plugin's name.
func (p *plugin) name() string { return p.prep.spec.Name }

// native reports whether this is a native plugin.
func (p *plugin) native() bool { return p.prep.spec.Kind == KindNative }

// toolVisibility is who may call t (ARCHITECTURE.md §5). An MCP server's tools have the
// visibility the owner gave the server (owner-only unless added with "any"); what the server
// says of them is ignored. A native plugin's tool has what its plugin.json declares for it, else
// what the plugin declares over the protocol; a tool nobody declares is owner-only.
func (p *plugin) toolVisibility(t protocol.Tool) string {
	if !p.native() {
		if p.prep.spec.Visibility == VisibilityAny {
			return VisibilityAny
		}
		return VisibilityOwner
	}
	if m := p.prep.manifest; m != nil {
		if d, ok := m.Tools[t.Name]; ok {
			return d.Visibility
		}
	}
	if t.Visibility == protocol.VisibilityAny {
		return VisibilityAny
	}
	return VisibilityOwner
}

// status snapshots the plugin's Status.
func (p *plugin) status() Status {
	p.toolsMu.Lock()
	tools := append([]string{}, p.tools...)
	p.toolsMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{
		Name:      p.spec.Name,
		Kind:      p.spec.Kind,
		State:     p.state,
		PID:       p.pid,
		LastError: p.lastErr,
		Tools:     tools,
		Started:   p.started,
		Command:   append([]string(nil), p.spec.Command...),
		Dir:       p.spec.Dir,
	}
	if p.starts > 1 {
		st.Restarts = p.starts - 1
	}
	if p.prep.manifest != nil {
		st.Permissions = p.prep.perms
	}
	return st
}

// setState sets the state if r is still the current runner.
func (p *plugin) setState(r *runner, state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == r {
		p.state = state
	}
}

// start launches a supervisor and waits, bounded by ctx, for its first start attempt. The caller
// holds p.op and has stopped any previous supervisor.
func (p *plugin) start(ctx context.Context) Status {
	r := newRunner()
	p.mu.Lock()
	p.run = r
	p.state = StateStarting
	p.mu.Unlock()
	go p.supervise(r)
	select {
	case <-r.first:
	case <-ctx.Done():
	}
	return p.status()
}

// stop asks the current supervisor (if any) to stop, waits for the ladder to finish (jumping
// to SIGKILL if ctx ends first), detaches the tools and sets the final state. A stop is never a
// crash. The caller holds p.op. reason, if not empty, is published with plugin_stopped.
func (p *plugin) stop(ctx context.Context, final, reason string) Status {
	p.mu.Lock()
	r := p.run
	p.run = nil
	p.mu.Unlock()
	if r != nil {
		r.stop()
		select {
		case <-r.done:
		case <-ctx.Done():
			r.kill()
			<-r.done
		}
	}
	p.detach(nil)
	p.mu.Lock()
	p.state = final
	p.pid = 0
	p.mu.Unlock()
	if r != nil && reason != "" {
		p.h.publish("plugin_stopped", map[string]any{"plugin": p.name(), "reason": reason})
	}
	return p.status()
}

// detach removes the plugin's tools from the Registry. With a non-nil inst it only does so if
// inst's tools are the ones attached, and marks inst so that it never attaches tools again.
func (p *plugin) detach(inst *instance) {
	p.toolsMu.Lock()
	defer p.toolsMu.Unlock()
	if inst != nil {
		inst.detached = true
	}
	if p.hooksOf != nil && (inst == nil || p.hooksOf == inst) {
		if err := p.h.opts.Services.SetHooks(p.name(), nil); err != nil {
			p.log.Warn("removing the plugin's hooks", "err", err)
		}
		p.hooksOf = nil
	}
	if inst != nil && p.toolsOf != inst {
		return
	}
	if p.toolsOf != nil || len(p.tools) > 0 {
		p.h.opts.Registry.RemoveTools(p.name())
	}
	p.tools = nil
	p.toolsOf = nil
}

// supervise is the supervisor loop: start, wait for a crash or a stop, account the crash,
// back off or trip. It returns when asked to stop or when the breaker trips.
func (p *plugin) supervise(r *runner) {
	defer close(r.done)
	defer r.firstDone()
	for {
		p.mu.Lock()
		p.starts++
		p.mu.Unlock()
		p.setState(r, StateStarting)
		inst, err := p.launch(r)
		if err == nil {
			p.mu.Lock()
			if p.run == r {
				p.state = StateRunning
				p.pid = inst.pid
				p.started = p.h.opts.Clock()
				p.lastErr = ""
			}
			p.mu.Unlock()
			p.h.publish("plugin_started", map[string]any{"plugin": p.name(), "pid": inst.pid, "tools": p.status().Tools})
			r.firstDone()
			select {
			case <-inst.dead:
				err = inst.cause()
			case <-r.stopCh:
			}
		}
		if r.stopping() {
			if inst != nil {
				p.detach(inst)
				inst.stopLadder(r.killCh)
			}
			return
		}
		// A crash. inst.die has already detached the tools (the model is never offered a dead
		// tool); make sure of it, then reap the process for its exit status.
		if inst != nil {
			inst.die(err)
			p.detach(inst)
			inst.killNow()
			<-inst.cleaned
		}
		p.crashed(r, inst, err)
		if na := (*noAnswerError)(nil); errors.As(err, &na) {
			// Alive but silent: not a crash loop, and another attempt would wait as long again.
			p.mu.Lock()
			if p.run == r {
				p.pid = 0
			}
			p.mu.Unlock()
			p.setState(r, StateFailed)
			r.firstDone()
			p.log.Error("plugin never answered its handshake; not restarting until restarted or re-enabled", "error", p.lastError())
			p.h.publish("plugin_failed", map[string]any{"plugin": p.name(), "error": p.lastError()})
			return
		}
		p.mu.Lock()
		n, tripped := p.breaker.record(p.h.opts.Clock())
		if p.run == r {
			p.pid = 0
		}
		p.mu.Unlock()
		payload := map[string]any{"plugin": p.name(), "error": p.lastError(), "crashes": n}
		if inst != nil {
			inst.exitInfo(payload)
		}
		p.h.publish("plugin_crashed", payload)
		if tripped {
			p.setState(r, StateTripped)
			r.firstDone()
			p.log.Error("plugin crash breaker tripped; not restarting until re-enabled",
				"crashes", n, "window", p.h.opts.BreakerWindow, "error", p.lastError())
			p.h.publish("plugin_tripped", map[string]any{"plugin": p.name(), "crashes": n, "error": p.lastError()})
			return
		}
		delays := p.h.opts.RestartDelays
		delay := delays[min(n-1, len(delays)-1)]
		p.setState(r, StateBackoff)
		r.firstDone()
		p.log.Warn("plugin crashed; restarting", "error", p.lastError(), "crashes", n, "delay", delay)
		select {
		case <-p.h.opts.After(delay):
		case <-r.stopCh:
			return
		}
	}
}

// crashed records err as the last error.
func (p *plugin) crashed(r *runner, inst *instance, err error) {
	msg := "crashed"
	if err != nil {
		msg = err.Error()
	}
	if errors.Is(err, errStdoutClosed) && inst != nil && inst.exitString() != "" {
		msg = "exited: " + inst.exitString()
	}
	if inst != nil {
		if e := inst.exitString(); e != "" && !containsFold(msg, e) {
			msg += " (" + e + ")"
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == r {
		p.lastErr = msg
	}
}

// lastError returns the last error recorded.
func (p *plugin) lastError() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
