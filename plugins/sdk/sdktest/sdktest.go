// Package sdktest helps plugin authors test plugins built on plugins/sdk without a running
// HologramAgent: [Kernel] is a test double of the kernel that speaks the host's side of the
// protocol to one plugin, either in memory ([Start], over [Pipe]) or as a real child process
// ([Launch], the helper-process pattern: the test binary re-executes itself and
// [RunHelper] serves the plugin in the child).
//
// The double performs the handshake like the kernel (initialize with the native extensions,
// notifications/initialized, tools/list), enforces the manifest's capabilities like the kernel
// (an undeclared call gets an error naming the capability), and answers the plugin's kernel
// calls with the functions of [Options]. It imports only the standard library and the plugin
// packages; import it only from tests.
package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
	"github.com/hologramagent/hologram/plugins/sdk"
)

// HelperEnv is the environment variable that turns a test binary into a plugin ([RunHelper]);
// its value is the mode passed to [Launch].
const HelperEnv = "HOLOGRAM_SDKTEST_HELPER"

// AllCapabilities are every capability a manifest may declare.
var AllCapabilities = []string{protocol.CapHooks, protocol.CapChannels, protocol.CapMemory, protocol.CapEvents,
	protocol.CapNotify, protocol.CapLLM, protocol.CapLifecycle}

// Options configure a [Kernel]. Each function answers the plugin's call of one kernel method;
// a nil one answers "method not found".
type Options struct {
	// Plugin is the plugin's name in the hello; default "test".
	Plugin string
	// Capabilities are those the (pretend) manifest declares; nil: none.
	Capabilities []string
	// MCP makes the double a plain MCP client: no native extensions are offered.
	MCP bool
	// Paused starts the plugin with the kernel paused.
	Paused bool
	// Timeout bounds the handshake and each helper call; default 10 s.
	Timeout time.Duration

	Input     func(ctx context.Context, p protocol.ChannelInputParams) (protocol.ChannelInputResult, error)
	Recall    func(ctx context.Context, p protocol.MemoryRecallParams) (protocol.MemoryRecallResult, error)
	Commit    func(ctx context.Context, p protocol.MemoryCommitParams) (protocol.MemoryCommitResult, error)
	Notify    func(ctx context.Context, p protocol.NotifyParams) (protocol.NotifyResult, error)
	Complete  func(ctx context.Context, p protocol.CompleteParams) (protocol.CompleteResult, error)
	Subscribe func(ctx context.Context, p protocol.EventsSubscribeParams) (protocol.EventsSubscribeResult, error)
	// Approve answers owner/approve (capability "approve", not in [AllCapabilities]: declare it
	// in Capabilities).
	Approve func(ctx context.Context, p protocol.ApproveParams) (protocol.ApproveResult, error)
}

// Kernel is the test double of the kernel, connected to one plugin. Its methods are safe for
// concurrent use.
type Kernel struct {
	t    testing.TB
	opts Options
	conn *protocol.Conn

	// Init is the plugin's initialize result; Offer its native offer (zero when it made none);
	// Tools its tools.
	Init  protocol.InitializeResult
	Offer protocol.NativeOffer
	Tools []protocol.Tool

	done   chan struct{} // closed when the connection's Run returned
	runErr error

	mu    sync.Mutex
	calls []string // kernel methods the plugin called, in order
	cmd   *exec.Cmd
	errb  *syncBuffer

	exited  chan struct{} // closed when the child process has been reaped (Launch only)
	exitErr error         // cmd.Wait's result, set before exited is closed
}

// Pipe returns the two ends of an in-memory, full-duplex connection: what one end writes the
// other reads. Closing an end ends both directions.
func Pipe() (a, b io.ReadWriteCloser) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return &pipeEnd{r: ar, w: aw}, &pipeEnd{r: br, w: bw}
}

// pipeEnd is one end of [Pipe].
type pipeEnd struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p *pipeEnd) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeEnd) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeEnd) Close() error {
	p.w.Close()
	return p.r.Close()
}

// Start serves p in memory (sdk.ServeConn over [Pipe]) and connects a Kernel to it, handshake
// done. The plugin is shut down in t.Cleanup; a Serve error fails the test.
func Start(t testing.TB, p sdk.Plugin, opts Options) *Kernel {
	t.Helper()
	pluginEnd, kernelEnd := Pipe()
	served := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { served <- sdk.ServeConn(ctx, p, pluginEnd, pluginEnd) }()
	k := connect(t, kernelEnd, kernelEnd, opts)
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), k.opts.Timeout)
		defer scancel()
		_ = k.Shutdown(sctx)
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("sdk.ServeConn: %v", err)
			}
		case <-sctx.Done():
			t.Errorf("the plugin did not stop within %s of shutdown", k.opts.Timeout)
		}
		cancel()
	})
	return k
}

// Launch runs the current test binary as a plugin in a child process (it must call
// [RunHelper] from a TestHelperProcess function) in the given mode, and connects a Kernel to
// it, handshake done. extraEnv is added to the child's environment. The child is stopped
// (shutdown, then killed) in t.Cleanup; its stderr is [Kernel.Stderr].
func Launch(t testing.TB, mode string, extraEnv []string, opts Options) *Kernel {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	return LaunchCommand(t, exec.Command(exe, "-test.run=^TestHelperProcess$"),
		append([]string{HelperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}, extraEnv...), opts)
}

// LaunchCommand runs cmd (a plugin binary, e.g. one go build made) as a plugin and connects a
// Kernel to it, like [Launch].
func LaunchCommand(t testing.TB, cmd *exec.Cmd, extraEnv []string, opts Options) *Kernel {
	t.Helper()
	cmd.Env = append(os.Environ(), extraEnv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("sdktest: starting %s: %v", cmd.Path, err)
	}
	k := &Kernel{cmd: cmd, errb: errb, exited: make(chan struct{})}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if k.conn != nil {
			_ = k.Shutdown(ctx)
		}
		select {
		case <-k.exited:
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-k.exited
		}
	})
	go func() {
		k.exitErr = cmd.Wait()
		close(k.exited)
	}()
	return k.init(t, stdout, stdin, opts)
}

// Stop shuts a launched plugin down and waits for its process to exit (its stderr is then
// complete); it returns the process's exit error (nil for exit status 0).
func (k *Kernel) Stop(ctx context.Context) error {
	if k.exited == nil {
		return errors.New("sdktest: Stop is for launched plugins")
	}
	if err := k.Shutdown(ctx); err != nil {
		return err
	}
	select {
	case <-k.exited:
		return k.exitErr
	case <-ctx.Done():
		return fmt.Errorf("sdktest: the plugin did not exit after shutdown: %w", ctx.Err())
	}
}

// connect makes a Kernel on r and w and runs the handshake.
func connect(t testing.TB, r io.Reader, w io.Writer, opts Options) *Kernel {
	return (&Kernel{}).init(t, r, w, opts)
}

// init connects k and runs the handshake.
func (k *Kernel) init(t testing.TB, r io.Reader, w io.Writer, opts Options) *Kernel {
	t.Helper()
	if opts.Plugin == "" {
		opts.Plugin = "test"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	k.t, k.opts, k.done = t, opts, make(chan struct{})
	k.conn = protocol.NewConn(r, w, protocol.ConnOptions{Handler: protocol.HandlerFunc(k.handle)})
	go func() {
		k.runErr = k.conn.Run(context.Background())
		close(k.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	params := protocol.InitializeParams{ProtocolVersion: protocol.LatestVersion,
		ClientInfo: protocol.Implementation{Name: "sdktest", Version: "1"}}
	if !opts.MCP {
		hello, _ := json.Marshal(protocol.NativeHello{Version: protocol.NativeVersion, Plugin: opts.Plugin,
			Capabilities: slices.Clone(opts.Capabilities), Paused: opts.Paused})
		params.Capabilities.Experimental = map[string]json.RawMessage{protocol.ExtensionName: hello}
	}
	if err := k.conn.Call(ctx, protocol.MethodInitialize, params, &k.Init); err != nil {
		t.Fatalf("sdktest: initialize: %v%s", err, k.stderrNote())
	}
	offer, _, err := protocol.OfferFrom(k.Init.Capabilities)
	if err != nil {
		t.Fatalf("sdktest: initialize result: %v", err)
	}
	k.Offer = offer
	if err := k.conn.Notify(protocol.NotifInitialized, nil); err != nil {
		t.Fatalf("sdktest: initialized: %v", err)
	}
	var tools protocol.ListToolsResult
	if err := k.conn.Call(ctx, protocol.MethodToolsList, protocol.ListToolsParams{}, &tools); err != nil {
		t.Fatalf("sdktest: tools/list: %v%s", err, k.stderrNote())
	}
	k.Tools = tools.Tools
	return k
}

// stderrNote returns the child's stderr for a failure message, if there is a child.
func (k *Kernel) stderrNote() string {
	if k.errb == nil {
		return ""
	}
	return "\nplugin stderr:\n" + k.errb.String()
}

// Stderr returns what the child process wrote to stderr so far ("" in memory).
func (k *Kernel) Stderr() string {
	if k.errb == nil {
		return ""
	}
	return k.errb.String()
}

// Calls returns the kernel methods the plugin called so far, in order (refused ones
// included).
func (k *Kernel) Calls() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.calls)
}

// handle answers the plugin's calls like the kernel: capability first, then Options.
func (k *Kernel) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	k.mu.Lock()
	k.calls = append(k.calls, method)
	k.mu.Unlock()
	if method == protocol.MethodPing {
		return struct{}{}, nil
	}
	if capability := protocol.CapabilityFor(method); capability != "" && !slices.Contains(k.opts.Capabilities, capability) {
		return nil, protocol.CapabilityError(method, capability)
	}
	switch method {
	case protocol.MethodChannelInput:
		return answer(ctx, params, k.opts.Input)
	case protocol.MethodMemoryRecall:
		return answer(ctx, params, k.opts.Recall)
	case protocol.MethodMemoryCommit:
		return answer(ctx, params, k.opts.Commit)
	case protocol.MethodOwnerNotify:
		return answer(ctx, params, k.opts.Notify)
	case protocol.MethodLLMComplete:
		return answer(ctx, params, k.opts.Complete)
	case protocol.MethodEventsSubscribe:
		return answer(ctx, params, k.opts.Subscribe)
	case protocol.MethodOwnerApprove:
		return answer(ctx, params, k.opts.Approve)
	}
	return nil, &protocol.Error{Code: protocol.MethodNotFound, Message: "method not found: " + method}
}

// answer decodes params and calls f, or answers "method not found" when f is nil.
func answer[P, R any](ctx context.Context, params json.RawMessage, f func(context.Context, P) (R, error)) (any, error) {
	if f == nil {
		return nil, &protocol.Error{Code: protocol.MethodNotFound, Message: "sdktest: no handler for this method (set it in Options)"}
	}
	var p P
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	return f(ctx, p)
}

// ctx returns a context bounded by the options' timeout.
func (k *Kernel) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, k.opts.Timeout)
}

// CallTool calls a tool; turn, if not empty, is the turn the call belongs to.
func (k *Kernel) CallTool(ctx context.Context, name, args, turn string) (protocol.CallToolResult, error) {
	return k.CallToolMeta(ctx, name, args, protocol.RequestMeta{Turn: turn})
}

// CallToolMeta calls a tool with the _meta the kernel sends (the turn and its session).
func (k *Kernel) CallToolMeta(ctx context.Context, name, args string, meta protocol.RequestMeta) (protocol.CallToolResult, error) {
	ctx, cancel := k.ctx(ctx)
	defer cancel()
	p := protocol.CallToolParams{Name: name, Arguments: json.RawMessage(args)}
	if args == "" {
		p.Arguments = nil
	}
	if meta != (protocol.RequestMeta{}) {
		p.Meta = &meta
	}
	var res protocol.CallToolResult
	err := k.conn.Call(ctx, protocol.MethodToolsCall, p, &res)
	return res, err
}

// ToolText calls a tool and returns its text items joined, failing the test on a protocol
// error; a tool-reported error is returned as an error.
func (k *Kernel) ToolText(ctx context.Context, name, args, turn string) (string, error) {
	k.t.Helper()
	res, err := k.CallTool(ctx, name, args, turn)
	if err != nil {
		k.t.Fatalf("sdktest: tools/call %s: %v", name, err)
	}
	var b bytes.Buffer
	for i, c := range res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	if res.IsError {
		return "", errors.New(b.String())
	}
	return b.String(), nil
}

// RunHook runs the plugin's hook on d.
func (k *Kernel) RunHook(ctx context.Context, hook string, d protocol.StageData) (protocol.HookPatch, error) {
	ctx, cancel := k.ctx(ctx)
	defer cancel()
	var patch protocol.HookPatch
	err := k.conn.Call(ctx, protocol.MethodHookRun, protocol.HookRunParams{Hook: hook, Data: &d}, &patch)
	return patch, err
}

// Send asks the plugin to deliver a reply on one of its channels.
func (k *Kernel) Send(ctx context.Context, m protocol.ChannelSendParams) (protocol.ChannelSendResult, error) {
	ctx, cancel := k.ctx(ctx)
	defer cancel()
	var res protocol.ChannelSendResult
	err := k.conn.Call(ctx, protocol.MethodChannelSend, m, &res)
	return res, err
}

// Pause sends kernel/paused (true) or kernel/resumed (false).
func (k *Kernel) Pause(paused bool) error {
	if paused {
		return k.conn.Notify(protocol.NotifPaused, nil)
	}
	return k.conn.Notify(protocol.NotifResumed, nil)
}

// Event sends a kernel event as an events/event notification.
func (k *Kernel) Event(e protocol.EventParams) error {
	return k.conn.Notify(protocol.NotifEvent, e)
}

// Shutdown asks the plugin to stop and waits until it has closed the connection or ctx ends.
func (k *Kernel) Shutdown(ctx context.Context) error {
	err := k.conn.Call(ctx, protocol.MethodShutdown, nil, nil)
	if err != nil && !errors.Is(err, protocol.ErrClosed) {
		k.conn.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	select {
	case <-k.done:
	case <-ctx.Done():
		k.conn.Close()
		return fmt.Errorf("shutdown: the plugin kept the connection open: %w", ctx.Err())
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
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

// RunHelper turns the test binary into a plugin when [HelperEnv] is set: it serves the plugin
// that plugins returns for the mode with sdk.Serve and exits (0 after a shutdown, 1 on an
// error). Without HelperEnv it returns at once. Call it from a TestHelperProcess function.
func RunHelper(plugins func(mode string) (sdk.Plugin, bool)) {
	mode := os.Getenv(HelperEnv)
	if mode == "" {
		return
	}
	p, ok := plugins(mode)
	if !ok {
		fmt.Fprintf(os.Stderr, "sdktest: no plugin for helper mode %q\n", mode)
		os.Exit(2)
	}
	if err := sdk.Serve(context.Background(), p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
