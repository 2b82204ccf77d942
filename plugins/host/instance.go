package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// CodeCapability is the JSON-RPC error code of a request refused because the plugin's manifest
// does not declare the capability the method needs.
const CodeCapability = protocol.CodeCapability

// maxLogLine bounds one stderr line kept in the ring; the rest of a longer line is dropped.
const maxLogLine = 16 << 10

// maxPages bounds a tools/list pagination loop.
const maxPages = 1000

// errStdoutClosed is the cause of a crash where the plugin closed its stdout.
var errStdoutClosed = errors.New("plugin closed its stdout")

// instance is one running process of a plugin and its connection.
type instance struct {
	p      *plugin
	cmd    *exec.Cmd
	pid    int
	conn   *protocol.Conn
	stdin  *os.File // our write end of the child's stdin
	ctx    context.Context
	cancel context.CancelFunc

	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // cmd.Wait's result, set before exited is closed
	cleaned chan struct{} // closed once the pipes are closed and the goroutines done

	dead     chan struct{} // closed on the first sign of death (exit, stdout closed, failed ping)
	deadOnce sync.Once
	deadErr  error // set before dead is closed

	stopping atomic.Bool   // the stop ladder is running: death is not a crash
	detached bool          // guarded by p.toolsMu: never attach tools again
	relist   chan struct{} // tools/list_changed arrived (capacity 1)

	cgroup *cgroup // the process's own cgroup; nil when cgroups are unavailable

	fromPlugin, toPlugin counter // bytes over the protocol pipes
	nativeState                  // native extensions (native.go)
}

// launch starts a process for p and runs the handshake. On error the returned instance, if not
// nil, is the started process, which the caller must reap.
func (p *plugin) launch(r *runner) (*instance, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		rd, wr, err := os.Pipe()
		if err == nil {
			files = append(files, rd, wr)
		}
		return rd, wr, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	var reg region
	if p.native() && p.h.opts.Shm != nil {
		if reg, err = newRegion(*p.h.opts.Shm); err != nil {
			closeAll()
			return nil, fmt.Errorf("shared memory: %w", err)
		}
	}
	closeReg := func() {
		if reg != nil {
			reg.Close()
		}
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		closeReg()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		closeReg()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	argv := p.prep.argv
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.prep.dir
	cmd.Env = append(os.Environ(), p.prep.spec.Env...)
	if p.native() && p.prep.perms.EnvOnly {
		cmd.Env = append(declaredEnv(os.Environ(), p.prep.perms.Env), p.prep.spec.Env...)
	}
	if p.native() {
		perms, _ := json.Marshal(p.prep.perms) // plain data: cannot fail
		cmd.Env = append(cmd.Env, protocol.EnvPermissions+"="+string(perms))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if reg != nil {
		cmd.ExtraFiles = reg.ChildFiles() // fds 3, 4, 5
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{
		p: p, cmd: cmd, stdin: inW, ctx: ctx, cancel: cancel,
		exited: make(chan struct{}), cleaned: make(chan struct{}),
		dead: make(chan struct{}), relist: make(chan struct{}, 1),
	}
	in.region = reg
	in.cgroup = p.h.cg.create(p.h, p.name())
	in.cgroup.into(cmd)
	started := make(chan error, 1)
	startLocked(cmd, started, func(err error) {
		in.waitErr = err
		close(in.exited)
	})
	err = <-started
	// The child's ends belong to the child now (or to nobody).
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		closeReg()
		cancel()
		_ = in.cgroup.remove(0)
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	in.pid = cmd.Process.Pid
	in.cgroup.closeFD()
	maxFrame := p.prep.spec.MaxFrame
	if maxFrame == 0 {
		maxFrame = protocol.DefaultMCPMaxFrame
		if p.native() {
			maxFrame = protocol.DefaultNativeMaxFrame
		}
	}
	in.conn = protocol.NewConn(countingReader{outR, &in.fromPlugin}, countingWriter{inW, &in.toPlugin}, protocol.ConnOptions{
		MaxFrame:       maxFrame,
		Handler:        protocol.HandlerFunc(in.handle),
		Logger:         p.log,
		OnNotification: in.notification,
	})
	runDone := make(chan struct{})
	errDone := make(chan struct{})
	go func() {
		defer close(runDone)
		err := in.conn.Run(ctx)
		if err == nil {
			err = errStdoutClosed
		}
		in.die(err)
	}()
	go func() {
		defer close(errDone)
		in.readStderr(errR)
	}()
	go in.reap(runDone, errDone, errR)
	if err := in.handshake(r); err != nil {
		return in, err
	}
	p.mu.Lock()
	p.inst = in
	p.mu.Unlock()
	go in.pinger()
	go in.relister()
	return in, nil
}

// reap waits for the process to exit, declares the instance dead and kills what is left of its
// process group (the children a plugin started die with it: stop and crash alike), then gives
// the connection and the stderr reader one grace, together, to drain what was written before
// closing them (a descendant that left the group may still hold the pipes open), and finally
// closes cleaned.
func (in *instance) reap(runDone, errDone <-chan struct{}, errR *os.File) {
	defer close(in.cleaned)
	<-in.exited
	if err := signalGroup(in.pid, syscall.SIGKILL); err != nil {
		in.p.log.Warn("killing the plugin's process group", "pgid", in.pid, "err", err)
	}
	if err := in.cgroup.kill(); err != nil { // also those that left the group (setsid)
		in.p.log.Warn("killing the plugin's cgroup", "err", err)
	}
	in.die(fmt.Errorf("exited: %s", in.exitString()))
	// One timer for both waits: a timer's channel fires once, so a second select on it would
	// wait for errDone forever when the first one consumed the tick (a grandchild holding
	// stderr then wedged the plugin in "starting" and every later add/remove behind it).
	grace := time.NewTimer(in.p.h.opts.StopGrace)
	defer grace.Stop()
	expired := false
	select {
	case <-runDone:
	case <-grace.C:
		expired = true
	}
	in.conn.Close()
	if !expired {
		select {
		case <-errDone:
		case <-grace.C:
		}
	}
	errR.Close()
	<-runDone
	<-errDone
	in.cancel()
	in.endNative()
	if err := in.cgroup.remove(in.p.h.opts.StopGrace); err != nil {
		in.p.log.Warn("removing the plugin's cgroup", "cgroup", in.cgroup.path, "err", err)
	}
	if in.region != nil {
		if err := in.region.Close(); err != nil {
			in.p.log.Warn("closing the shared-memory region", "err", err)
		}
	}
}

// die records the first cause of death: it detaches the plugin's tools before anything else
// (the model is never offered a dead tool), then wakes the supervisor.
func (in *instance) die(err error) {
	in.deadOnce.Do(func() {
		in.p.detach(in)
		in.p.mu.Lock()
		if in.p.inst == in {
			in.p.inst = nil
		}
		in.p.mu.Unlock()
		in.deadErr = err
		close(in.dead)
	})
}

// cause returns why the instance died.
func (in *instance) cause() error {
	<-in.dead
	return in.deadErr
}

// isDead reports whether the instance has died.
func (in *instance) isDead() bool {
	select {
	case <-in.dead:
		return true
	default:
		return false
	}
}

// killNow sends SIGKILL to the plugin's process group, and to the process itself unless it has
// been reaped.
func (in *instance) killNow() {
	in.signal(syscall.SIGKILL)
}

// signal sends sig to the plugin's process group and to the process itself unless it has been
// reaped (the group is signalled even then: its other members outlive the leader).
func (in *instance) signal(sig syscall.Signal) {
	if err := signalGroup(in.pid, sig); err != nil {
		in.p.log.Debug("signalling the plugin's process group", "signal", sig.String(), "err", err)
	}
	if sig == syscall.SIGKILL {
		_ = in.cgroup.kill()
	}
	select {
	case <-in.exited:
	default:
		_ = in.cmd.Process.Signal(sig)
	}
}

// exitString describes how the process ended ("exit status 3", "signal: killed"), or "" while
// it runs.
func (in *instance) exitString() string {
	select {
	case <-in.exited:
	default:
		return ""
	}
	if ps := in.cmd.ProcessState; ps != nil {
		return ps.String()
	}
	if in.waitErr != nil {
		return in.waitErr.Error()
	}
	return ""
}

// exitInfo adds exit_code or signal to an event payload once the process has been reaped.
func (in *instance) exitInfo(payload map[string]any) {
	select {
	case <-in.exited:
	default:
		return
	}
	ps := in.cmd.ProcessState
	if ps == nil {
		return
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		payload["signal"] = ws.Signal().String()
		return
	}
	payload["exit_code"] = ps.ExitCode()
}

// readStderr reads the plugin's stderr line by line into the ring and the log. It drains the
// pipe to the end whatever the line lengths, so the plugin never blocks on a full pipe.
func (in *instance) readStderr(f *os.File) {
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxLogLine - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			s := strings.ToValidUTF8(strings.TrimRight(string(line), "\r\n"), "\uFFFD")
			in.p.logs.add(LogLine{Time: in.p.h.opts.Clock(), Line: s})
			in.p.log.Info("plugin stderr", "line", s)
			line = line[:0]
		}
		if err != nil {
			return
		}
	}
}

// stopLadder stops the process: a shutdown request (native plugins only), then closing stdin,
// then SIGTERM, then SIGKILL (both signals to its whole process group), waiting StopGrace after each rung for the process to exit. A
// closed kill channel skips straight to SIGKILL. It returns once everything is cleaned up.
func (in *instance) stopLadder(kill <-chan struct{}) {
	in.stopping.Store(true)
	grace := in.p.h.opts.StopGrace
	waitExit := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-in.exited:
			return true
		case <-t.C:
			return false
		case <-kill:
			return false
		}
	}
	killed := func() bool {
		select {
		case <-kill:
			return true
		default:
			return false
		}
	}
	exited := func() bool {
		select {
		case <-in.exited:
			return true
		default:
			return false
		}
	}
	step := func(name string, do func(), d time.Duration) bool {
		if exited() || killed() {
			return exited()
		}
		do()
		if waitExit(d) {
			in.p.log.Debug("plugin stopped", "rung", name)
			return true
		}
		return false
	}
	done := false
	if in.p.native() {
		deadline := time.Now().Add(grace)
		done = step("shutdown", func() {
			ctx, cancel := context.WithDeadline(in.ctx, deadline)
			defer cancel()
			go func() {
				select {
				case <-kill:
					cancel()
				case <-ctx.Done():
				}
			}()
			if err := in.conn.Call(ctx, protocol.MethodShutdown, nil, nil); err != nil && !in.isDead() {
				in.p.log.Debug("shutdown request", "err", err)
			}
		}, time.Until(deadline))
	}
	if !done {
		done = step("close stdin", func() { in.stdin.Close() }, grace)
	}
	if !done {
		done = step("SIGTERM", func() { in.signal(syscall.SIGTERM) }, grace)
	}
	if !done && !exited() {
		in.p.log.Warn("plugin ignored the stop ladder; killing it")
		in.killNow()
	}
	<-in.exited
	<-in.cleaned
}
