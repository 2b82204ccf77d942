//go:build integration

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeTime is an injectable clock and timer source: timers fire only when Advance passes them.
type fakeTime struct {
	mu        sync.Mutex
	now       time.Time
	timers    []*fakeTimer
	requested []time.Duration // every After duration, in order
}

type fakeTimer struct {
	at time.Time
	d  time.Duration
	ch chan time.Time
}

func newFakeTime() *fakeTime {
	return &fakeTime{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	f.timers = append(f.timers, &fakeTimer{at: f.now.Add(d), d: d, ch: ch})
	f.requested = append(f.requested, d)
	return ch
}

// Advance moves the clock by d and fires every timer that is due.
func (f *fakeTime) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.timers[:0]
	for _, t := range f.timers {
		if !t.at.After(f.now) {
			t.ch <- f.now
			continue
		}
		kept = append(kept, t)
	}
	f.timers = kept
}

// pending counts the pending timers of duration d.
func (f *fakeTime) pending(d time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.timers {
		if t.d == d {
			n++
		}
	}
	return n
}

// requestedCount counts how many timers of duration d were ever requested.
func (f *fakeTime) requestedCount(d time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, x := range f.requested {
		if x == d {
			n++
		}
	}
	return n
}

// journal is the ordered record of registry and publisher calls.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.entries = append(j.entries, s)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.entries...)
}

// fakeRegistry records tools per plugin.
type fakeRegistry struct {
	j     *journal
	mu    sync.Mutex
	tools map[string]map[string]CallFunc // plugin → model name → call
	infos map[string]ToolInfo
	added chan string // model names, if not nil (non-blocking)
}

func newFakeRegistry(j *journal) *fakeRegistry {
	return &fakeRegistry{j: j, tools: map[string]map[string]CallFunc{}, infos: map[string]ToolInfo{}}
}

func (r *fakeRegistry) AddTool(plugin string, t ToolInfo, call CallFunc) (string, error) {
	name := plugin + "." + t.Name
	r.mu.Lock()
	if r.tools[plugin] == nil {
		r.tools[plugin] = map[string]CallFunc{}
	}
	r.tools[plugin][name] = call
	r.infos[name] = t
	ch := r.added
	r.mu.Unlock()
	r.j.add("add:" + name)
	if ch != nil {
		select {
		case ch <- name:
		default:
		}
	}
	return name, nil
}

func (r *fakeRegistry) RemoveTools(plugin string) int {
	r.mu.Lock()
	n := len(r.tools[plugin])
	delete(r.tools, plugin)
	r.mu.Unlock()
	r.j.add("remove:" + plugin)
	return n
}

func (r *fakeRegistry) names(plugin string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for n := range r.tools[plugin] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (r *fakeRegistry) call(name string) CallFunc {
	r.mu.Lock()
	defer r.mu.Unlock()
	plugin, _, _ := strings.Cut(name, ".")
	return r.tools[plugin][name]
}

// fakePublisher records events.
type fakePublisher struct {
	j      *journal
	mu     sync.Mutex
	events []event
}

type event struct {
	name    string
	payload map[string]any
}

func (p *fakePublisher) Publish(name string, payload map[string]any) {
	p.mu.Lock()
	p.events = append(p.events, event{name, payload})
	p.mu.Unlock()
	p.j.add("publish:" + name)
}

// of returns the events named name.
func (p *fakePublisher) of(name string) []event {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []event
	for _, e := range p.events {
		if e.name == name {
			out = append(out, e)
		}
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for concurrent use (the log sink).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is one test's host and its fakes.
type env struct {
	h    *Host
	reg  *fakeRegistry
	pub  *fakePublisher
	ft   *fakeTime
	j    *journal
	logs *syncBuffer
	opts Options
}

// newEnv returns a host with fake registry, publisher and time. Pings are effectively off
// unless mut sets PingInterval.
func newEnv(t testing.TB, mut func(*Options)) *env {
	t.Helper()
	j := &journal{}
	e := &env{reg: newFakeRegistry(j), pub: &fakePublisher{j: j}, ft: newFakeTime(), j: j, logs: &syncBuffer{}}
	e.opts = Options{
		Registry:     e.reg,
		Publisher:    e.pub,
		Logger:       slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Clock:        e.ft.Now,
		After:        e.ft.After,
		PingInterval: 1000 * time.Hour,
		StopGrace:    300 * time.Millisecond,
	}
	if mut != nil {
		mut(&e.opts)
	}
	e.h = New(e.opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// helperCommand is the argv that re-executes this test binary as a plugin.
func helperCommand(t testing.TB) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^TestHelperProcess$"}
}

// helperEnvVars is the environment of a helper process in mode. A race-enabled binary sleeps
// GORACE atexit_sleep_ms (1 s by default) before exiting, which would blur every stop and
// crash timing.
func helperEnvVars(mode string) []string {
	return []string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}
}

// mcpSpec is an MCP plugin running the fake server in mode.
func mcpSpec(t testing.TB, name, mode string) Spec {
	return Spec{Name: name, Command: helperCommand(t), Env: helperEnvVars(mode)}
}

// nativeSpec is a native plugin directory whose entry script runs the fake server in mode.
func nativeSpec(t testing.TB, name, mode string, capabilities ...string) Spec {
	argv := helperCommand(t)
	script := fmt.Sprintf("#!/bin/sh\nexec '%s' '%s'\n", argv[0], argv[1])
	m, _ := json.Marshal(Manifest{Name: name, Version: "1.0.0", Entry: "run.sh", Capabilities: capabilities,
		Permissions: Permissions{Paths: []PathPermission{{Path: "~/notes", Access: "write"}}, Network: true}})
	dir := t.(interface{ TempDir() string }).TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Spec{Name: name, Dir: dir, Env: helperEnvVars(mode)}
}

// waitFor polls cond (real processes take real time) until it holds or 20 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// state returns the plugin's state.
func (e *env) state(t testing.TB, name string) Status {
	t.Helper()
	st, err := e.h.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitState waits until the plugin is in state.
func (e *env) waitState(t testing.TB, name, state string) Status {
	t.Helper()
	var st Status
	waitFor(t, name+" "+state, func() bool { st = e.state(t, name); return st.State == state })
	return st
}

// add adds spec and requires no error.
func (e *env) add(t testing.TB, spec Spec) Status {
	t.Helper()
	st, err := e.h.Add(context.Background(), spec)
	if err != nil {
		t.Fatalf("Add %s: %v", spec.Name, err)
	}
	return st
}

// call calls a tool by model name.
func (e *env) call(t testing.TB, name, args string) (string, error) {
	t.Helper()
	f := e.reg.call(name)
	if f == nil {
		t.Fatalf("no tool %s (have %v)", name, e.reg.names(strings.Split(name, ".")[0]))
	}
	return f(context.Background(), json.RawMessage(args))
}

// processGone reports whether pid no longer exists.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

var allTools = []string{"p.add", "p.ask", "p.crash", "p.echo", "p.fail", "p.image", "p.relist", "p.slow"}

func TestToolsListAndCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	st := e.add(t, mcpSpec(t, "p", "normal,stderr,log"))
	if st.State != StateRunning || st.PID == 0 || st.Kind != KindMCP || st.Restarts != 0 || len(st.Command) != 2 {
		t.Fatalf("status %+v", st)
	}
	if got := e.reg.names("p"); !slices.Equal(got, allTools) {
		t.Fatalf("tools (two pages) %v, want %v", got, allTools)
	}
	if got := slices.Sorted(slices.Values(st.Tools)); !slices.Equal(got, allTools) {
		t.Fatalf("status tools %v", got)
	}
	if !e.reg.infos["p.echo"].ReadOnly || e.reg.infos["p.add"].ReadOnly || e.reg.infos["p.echo"].Description != "echo tool" {
		t.Fatalf("infos %+v %+v", e.reg.infos["p.echo"], e.reg.infos["p.add"])
	}
	tests := []struct {
		tool, args, want, wantErr string
	}{
		{"p.echo", `{"text":"你好 world"}`, "你好 world", ""},
		{"p.add", `{"a":2,"b":3}`, "5", ""},
		{"p.add", ``, "0", ""},
		{"p.fail", `{}`, "", "it failed"},
		{"p.image", `{}`, "here\n[image image/png, 10 bytes]\n[resource file:///tmp/x.txt]", ""},
		{"p.ask", `{"method":"sampling/createMessage"}`, "error -32601: method sampling/createMessage is not supported by this client", ""},
		{"p.ask", `{"method":"ping"}`, "result: {}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			got, err := e.call(t, tt.tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	// stderr: ring and re-logged under the plugin's name; notifications/message at its level.
	waitFor(t, "stderr lines", func() bool { l, _ := e.h.Logs("p", 0); return len(l) == 3 })
	lines, _ := e.h.Logs("p", 2)
	if len(lines) != 2 || lines[0].Line != "stderr line 1" || lines[1].Line != "stderr line 2" || lines[1].Time.IsZero() {
		t.Fatalf("Logs: %+v", lines)
	}
	waitFor(t, "relogged lines", func() bool {
		s := e.logs.String()
		return strings.Contains(s, `"plugin":"p","line":"stderr line 0"`) &&
			strings.Contains(s, `"level":"WARN","msg":"plugin log","plugin":"p","data":"hello from fake","logger":"fake"`)
	})
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.add(t, mcpSpec(t, "p", "normal"))
	if _, err := e.call(t, "p.relist", `{}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "p.extra", func() bool { return slices.Contains(e.reg.names("p"), "p.extra") })
	if got := e.state(t, "p").Tools; len(got) != len(allTools)+1 {
		t.Fatalf("status tools %v", got)
	}
	if _, err := e.call(t, "p.relist", `{}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "p.extra gone", func() bool { return !slices.Contains(e.reg.names("p"), "p.extra") })
}

func TestGoSDKPeer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	st := e.add(t, Spec{Name: "sdk", Command: helperCommand(t), Env: helperEnvVars("gosdk")})
	if st.State != StateRunning || !slices.Equal(st.Tools, []string{"sdk.greet"}) {
		t.Fatalf("status %+v", st)
	}
	if s := string(e.reg.infos["sdk.greet"].InputSchema); !strings.Contains(s, `"name"`) {
		t.Fatalf("schema %s", s)
	}
	got, err := e.call(t, "sdk.greet", `{"name":"世界"}`)
	if err != nil || got != "hello, 世界" {
		t.Fatalf("greet: %q %v", got, err)
	}
	if _, err := e.call(t, "sdk.greet", `{"name":12}`); err == nil {
		t.Fatal("a bad argument was accepted")
	}
	st, err = e.h.Disable(context.Background(), "sdk")
	if err != nil || st.State != StateDisabled || len(e.pub.of("plugin_crashed")) != 0 {
		t.Fatalf("Disable: %+v %v", st, err)
	}
}

func TestNativeCapabilitiesAndShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.StopGrace = 5 * time.Second })
	st := e.add(t, nativeSpec(t, "p", "normal", "memory"))
	if st.State != StateRunning || st.Kind != KindNative || !st.Permissions.Network || st.Permissions.Paths[0] != (PathPermission{Path: filepath.Join(os.Getenv("HOME"), "notes"), Access: "write"}) {
		t.Fatalf("status %+v", st)
	}
	for method, want := range map[string]string{
		"sampling/createMessage": `error -32001: method sampling/createMessage needs capability "llm" (not declared in the manifest)`,
		"owner/notify":           `error -32001: method owner/notify needs capability "notify" (not declared in the manifest)`,
		"memory/search":          `error -32601: method memory/search is not available: this host has no kernel services`,
		"frob":                   `error -32601: method not found: frob`,
	} {
		got, err := e.call(t, "p.ask", fmt.Sprintf(`{"method":%q}`, method))
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", method, got, err, want)
		}
	}
	// The stop ladder's first rung for a native plugin is the shutdown request; the plugin
	// exits at once, well within the (long) grace.
	start := time.Now()
	st, err := e.h.Disable(context.Background(), "p")
	if err != nil || st.State != StateDisabled || st.PID != 0 || len(st.Tools) != 0 {
		t.Fatalf("Disable: %+v %v", st, err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	lines, _ := e.h.Logs("p", 0)
	if len(lines) == 0 || lines[len(lines)-1].Line != "shutdown received" {
		t.Fatalf("logs %+v", lines)
	}
}

func TestCrashDuringCallAndRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	first := e.add(t, mcpSpec(t, "p", "normal"))
	_, err := e.call(t, "p.crash", `{}`)
	if err == nil || err.Error() != "plugin p died during the call (exit status 3)" {
		t.Fatalf("call error %v", err)
	}
	st := e.waitState(t, "p", StateBackoff)
	if len(e.reg.names("p")) != 0 || len(st.Tools) != 0 || st.PID != 0 || !strings.Contains(st.LastError, "exit status 3") {
		t.Fatalf("after crash: tools %v status %+v", e.reg.names("p"), st)
	}
	// The tools were removed before anything was published.
	j := e.j.list()
	ri, ci := slices.Index(j, "remove:p"), slices.Index(j, "publish:plugin_crashed")
	if ri < 0 || ci < 0 || ri > ci {
		t.Fatalf("journal %v: remove must precede plugin_crashed", j)
	}
	crash := e.pub.of("plugin_crashed")[0].payload
	if crash["exit_code"] != 3 || crash["crashes"] != 1 || crash["plugin"] != "p" {
		t.Fatalf("payload %v", crash)
	}
	waitFor(t, "1s restart timer", func() bool { return e.ft.pending(time.Second) == 1 })
	e.ft.Advance(time.Second)
	st = e.waitState(t, "p", StateRunning)
	if st.PID == first.PID || st.Restarts != 1 || len(e.reg.names("p")) != len(allTools) {
		t.Fatalf("restarted: %+v", st)
	}
	if got, err := e.call(t, "p.echo", `{"text":"back"}`); err != nil || got != "back" {
		t.Fatalf("echo after restart: %q %v", got, err)
	}
	// A call in flight when the process is killed from outside.
	slow := e.reg.call("p.slow")
	done := make(chan error, 1)
	go func() { _, err := slow(context.Background(), json.RawMessage(`{"ms":60000}`)); done <- err }()
	time.Sleep(50 * time.Millisecond) // let the request reach the plugin; not supervision timing
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || err.Error() != "plugin p died during the call (signal: killed)" {
		t.Fatalf("in-flight call: %v", err)
	}
	e.waitState(t, "p", StateBackoff)
	if c := e.pub.of("plugin_crashed"); len(c) != 2 || c[1].payload["signal"] != "killed" || c[1].payload["crashes"] != 2 {
		t.Fatalf("second crash %v", c)
	}
	waitFor(t, "2s restart timer", func() bool { return e.ft.pending(2*time.Second) == 1 })
}

// TestBreakerNeverReloaded is the upstream bug (seed-design.md §3.7): a plugin that was never
// reloaded crashes four times quickly; the breaker trips and stays tripped however much time
// passes, and only Enable resets it.
func TestBreakerNeverReloaded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.add(t, mcpSpec(t, "p", "crash-after-start"))
	for i, delay := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		waitFor(t, fmt.Sprintf("crash %d", i+1), func() bool {
			return len(e.pub.of("plugin_crashed")) == i+1 && e.ft.pending(delay) == 1
		})
		if st := e.state(t, "p"); st.State != StateBackoff {
			t.Fatalf("after crash %d: %+v", i+1, st)
		}
		e.ft.Advance(delay)
	}
	st := e.waitState(t, "p", StateTripped)
	waitFor(t, "plugin_tripped", func() bool { return len(e.pub.of("plugin_tripped")) == 1 })
	if c := e.pub.of("plugin_crashed"); len(c) != 4 || c[3].payload["crashes"] != 4 || c[3].payload["exit_code"] != 2 {
		t.Fatalf("crashes %v", c)
	}
	if tr := e.pub.of("plugin_tripped"); len(tr) != 1 || tr[0].payload["crashes"] != 4 {
		t.Fatalf("tripped events %v", tr)
	}
	if len(st.Tools) != 0 || st.PID != 0 || len(e.reg.names("p")) != 0 || st.Restarts != 3 {
		t.Fatalf("tripped status %+v", st)
	}
	// The supervisor has returned: nothing is left that could restart the plugin.
	p, _ := e.h.lookup("p")
	p.mu.Lock()
	r := p.run
	p.mu.Unlock()
	<-r.done
	started := len(e.pub.of("plugin_started"))
	restartTimers := e.ft.requestedCount(time.Second) + e.ft.requestedCount(2*time.Second) + e.ft.requestedCount(3*time.Second)
	for _, d := range []time.Duration{time.Second, 31 * time.Second, 10 * time.Minute, 24 * time.Hour} {
		e.ft.Advance(d)
	}
	if st := e.state(t, "p"); st.State != StateTripped || len(e.pub.of("plugin_started")) != started ||
		len(e.pub.of("plugin_crashed")) != 4 {
		t.Fatalf("after a day: %+v", st)
	}
	if n := e.ft.requestedCount(time.Second) + e.ft.requestedCount(2*time.Second) + e.ft.requestedCount(3*time.Second); n != restartTimers {
		t.Fatalf("restart timers requested after tripping: %d -> %d", restartTimers, n)
	}
	// Enable resets the breaker: the next crash is the first again.
	if _, err := e.h.Enable(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "crash after Enable", func() bool { return len(e.pub.of("plugin_crashed")) == 5 })
	if c := e.pub.of("plugin_crashed")[4].payload; c["crashes"] != 1 {
		t.Fatalf("after Enable: %v", c)
	}
	st = e.waitState(t, "p", StateBackoff)
	if len(e.pub.of("plugin_tripped")) != 1 {
		t.Fatalf("tripped again: %+v", st)
	}
}

// TestBreakerWindow: three crashes, then a fourth more than BreakerWindow later does not trip
// (the old ones fell out of the window); four within the window do.
func TestBreakerWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.add(t, mcpSpec(t, "p", "normal"))
	crash := func(wantCrashes int) {
		t.Helper()
		before := len(e.pub.of("plugin_crashed"))
		if _, err := e.call(t, "p.crash", `{}`); err == nil || !strings.Contains(err.Error(), "died during the call") {
			t.Fatalf("crash call: %v", err)
		}
		waitFor(t, "crash event", func() bool { return len(e.pub.of("plugin_crashed")) == before+1 })
		c := e.pub.of("plugin_crashed")
		if got := c[len(c)-1].payload["crashes"]; got != wantCrashes {
			t.Fatalf("crashes in window %v, want %d", got, wantCrashes)
		}
	}
	restart := func(delay time.Duration) {
		t.Helper()
		e.waitState(t, "p", StateBackoff)
		waitFor(t, "restart timer", func() bool { return e.ft.pending(delay) == 1 })
		e.ft.Advance(delay)
		e.waitState(t, "p", StateRunning)
		waitFor(t, "tools back", func() bool { return len(e.reg.names("p")) == len(allTools) })
	}
	crash(1)
	restart(time.Second)
	crash(2)
	restart(2 * time.Second)
	crash(3)
	restart(3 * time.Second)
	e.ft.Advance(5*time.Minute + time.Second)
	crash(1) // the three earlier crashes are out of the window
	restart(time.Second)
	crash(2)
	restart(2 * time.Second)
	crash(3)
	restart(3 * time.Second)
	crash(4)
	e.waitState(t, "p", StateTripped)
	waitFor(t, "plugin_tripped", func() bool { return len(e.pub.of("plugin_tripped")) == 1 })
}

func TestPingFailureIsACrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.PingInterval = 30 * time.Second })
	e.add(t, mcpSpec(t, "p", "normal,noping"))
	waitFor(t, "ping timer", func() bool { return e.ft.pending(30*time.Second) == 1 })
	e.ft.Advance(30 * time.Second)
	waitFor(t, "ping timeout timer", func() bool { return e.ft.pending(5*time.Second) == 1 })
	e.ft.Advance(5 * time.Second)
	st := e.waitState(t, "p", StateBackoff)
	if !strings.Contains(st.LastError, "ping failed: no answer within 5s") || !strings.Contains(st.LastError, "killed") {
		t.Fatalf("last error %q", st.LastError)
	}
	if c := e.pub.of("plugin_crashed"); len(c) != 1 || c[0].payload["signal"] != "killed" {
		t.Fatalf("crash %v", c)
	}
}

func TestPingAnswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.PingInterval = 30 * time.Second })
	e.add(t, mcpSpec(t, "p", "normal"))
	for i := range 3 {
		waitFor(t, "ping timer", func() bool { return e.ft.pending(30*time.Second) == 1 })
		e.ft.Advance(30 * time.Second)
		waitFor(t, fmt.Sprintf("ping %d answered", i), func() bool {
			return e.ft.requestedCount(30*time.Second) == i+2
		})
	}
	if st := e.state(t, "p"); st.State != StateRunning {
		t.Fatalf("state %+v", st)
	}
}

// TestProtocolVersions: the host offers 2025-11-25 and goes on in any supported version a
// server answers with (down to 2024-11-05); an unknown one is refused with the list.
func TestProtocolVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, state, err string }{
		{"normal", StateRunning, ""}, // answers protocol.LatestVersion, 2025-11-25
		{"protocol-2025-06-18", StateRunning, ""},
		{"protocol-2024-11-05", StateRunning, ""},
		{"protocol-2099-01-01", StateBackoff, `unsupported protocol version "2099-01-01" (supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			st := e.add(t, mcpSpec(t, "p", tc.mode))
			if st.State != tc.state || (tc.err != "" && !strings.Contains(st.LastError, tc.err)) || (tc.err == "" && len(st.Tools) == 0) {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

func TestHandshakeFailures(t *testing.T) {
	t.Parallel()
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		got := make(chan Status, 1)
		go func() { st, _ := e.h.Add(context.Background(), mcpSpec(t, "p", "hang-handshake")); got <- st }()
		waitFor(t, "handshake timer", func() bool { return e.ft.pending(10*time.Second) == 1 })
		e.ft.Advance(10 * time.Second)
		st := <-got
		if st.State != StateFailed || !strings.Contains(st.LastError, "handshake: initialize: no answer within 10s") {
			t.Fatalf("status %+v", st)
		}
		// Failed is final: no restart is scheduled (a silent server would only wait again) …
		if n := e.ft.pending(time.Second); n != 0 {
			t.Fatalf("%d restart delays pending after the failure", n)
		}
		// … until the owner restarts it.
		restarted := make(chan Status, 1)
		go func() { st, _ := e.h.Restart(context.Background(), "p"); restarted <- st }()
		waitFor(t, "the second handshake timer", func() bool { return e.ft.pending(10*time.Second) == 1 })
		e.ft.Advance(10 * time.Second)
		if st := <-restarted; st.State != StateFailed {
			t.Fatalf("after restart: %+v", st)
		}
	})
	t.Run("exit at start", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		st := e.add(t, mcpSpec(t, "p", "crash-at-start"))
		if st.State != StateBackoff || !strings.Contains(st.LastError, "exit status 7") {
			t.Fatalf("status %+v", st)
		}
		if l, _ := e.h.Logs("p", 0); len(l) != 1 || l[0].Line != "dying at start" {
			t.Fatalf("logs %+v", l)
		}
	})
	t.Run("no such command", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		st := e.add(t, Spec{Name: "p", Command: []string{"/nonexistent/plugin"}})
		if st.State != StateBackoff || !strings.Contains(st.LastError, "no such file") {
			t.Fatalf("status %+v", st)
		}
	})
}

func TestStopLadder(t *testing.T) {
	t.Parallel()
	const grace = 200 * time.Millisecond
	tests := []struct {
		name     string
		spec     func(t *testing.T) Spec
		min, max time.Duration
		rung     string
	}{
		{"mcp closes on stdin EOF", func(t *testing.T) Spec { return mcpSpec(t, "p", "normal") }, 0, grace, "close stdin"},
		{"mcp ignores stdin and SIGTERM", func(t *testing.T) Spec { return mcpSpec(t, "p", "normal,ignore-term") }, 2 * grace, 10 * grace, "killing"},
		{"native shutdown request", func(t *testing.T) Spec { return nativeSpec(t, "p", "normal") }, 0, grace, "shutdown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(o *Options) { o.StopGrace = grace })
			st := e.add(t, tt.spec(t))
			pid := st.PID
			start := time.Now()
			st, err := e.h.Disable(context.Background(), "p")
			d := time.Since(start)
			if err != nil || st.State != StateDisabled || st.PID != 0 || len(st.Tools) != 0 || len(e.reg.names("p")) != 0 {
				t.Fatalf("Disable: %+v %v", st, err)
			}
			if d < tt.min || d > tt.max {
				t.Fatalf("stop took %v, want %v..%v", d, tt.min, tt.max)
			}
			if !processGone(pid) {
				t.Fatalf("pid %d still exists", pid)
			}
			if !strings.Contains(e.logs.String(), tt.rung) {
				t.Fatalf("log lacks %q", tt.rung)
			}
			e.ft.Advance(time.Hour)
			if st := e.state(t, "p"); st.State != StateDisabled || len(e.pub.of("plugin_crashed")) != 0 ||
				len(e.pub.of("plugin_started")) != 1 || len(e.pub.of("plugin_stopped")) != 1 {
				t.Fatalf("after stop: %+v, events %v", st, e.pub.events)
			}
		})
	}
}

func TestRestartRemoveClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	first := e.add(t, mcpSpec(t, "p", "normal"))
	e.add(t, mcpSpec(t, "q", "normal"))
	st, err := e.h.Restart(ctx, "p")
	if err != nil || st.State != StateRunning || st.PID == first.PID || st.Restarts != 1 || len(st.Tools) != len(allTools) {
		t.Fatalf("Restart: %+v %v", st, err)
	}
	if !processGone(first.PID) {
		t.Fatal("old process survived the restart")
	}
	if got, err := e.call(t, "p.echo", `{"text":"x"}`); err != nil || got != "x" {
		t.Fatalf("echo: %q %v", got, err)
	}
	// Enable of a running plugin changes nothing.
	if st2, err := e.h.Enable(ctx, "p"); err != nil || st2.PID != st.PID {
		t.Fatalf("Enable running: %+v %v", st2, err)
	}
	removed, err := e.h.Remove(ctx, "p")
	if err != nil || removed.State != StateStopped || len(e.reg.names("p")) != 0 || !processGone(st.PID) {
		t.Fatalf("Remove: %+v %v", removed, err)
	}
	if _, err := e.h.Get("p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Remove: %v", err)
	}
	q := e.state(t, "q")
	if err := e.h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := e.state(t, "q"); st.State != StateStopped || !processGone(q.PID) || len(e.pub.of("plugin_crashed")) != 0 {
		t.Fatalf("after Close: %+v", st)
	}
	if _, err := e.h.Enable(ctx, "q"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Enable after Close: %v", err)
	}
}

// TestStopDuringCall: a call in flight when the owner stops the plugin gets an error, not a hang,
// and the stop is not a crash.
func TestStopDuringCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.StopGrace = 100 * time.Millisecond })
	e.add(t, mcpSpec(t, "p", "normal,ignore-term"))
	slow := e.reg.call("p.slow")
	done := make(chan error, 1)
	go func() { _, err := slow(context.Background(), json.RawMessage(`{"ms":60000}`)); done <- err }()
	time.Sleep(50 * time.Millisecond) // let the request reach the plugin
	if _, err := e.h.Disable(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || err.Error() != "plugin p was stopped during the call" {
		t.Fatalf("call: %v", err)
	}
	if len(e.pub.of("plugin_crashed")) != 0 {
		t.Fatal("a stop was counted as a crash")
	}
}
