package host

// What a running instance says over its JSON-RPC pipe: the handshake, its tools and their calls,
// the plugin's requests and notifications, and the relist and ping loops.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// timeoutCtx returns a context cancelled after d on the host's After timer (or when parent ends
// or stop closes), and a func reporting whether the timer fired.
func (in *instance) timeoutCtx(parent context.Context, d time.Duration, stop <-chan struct{}) (context.Context, context.CancelFunc, func() bool) {
	ctx, cancel := context.WithCancel(parent)
	var fired atomic.Bool
	timer := in.p.h.opts.After(d)
	go func() {
		select {
		case <-timer:
			fired.Store(true)
			cancel()
		case <-stop:
			cancel()
		case <-in.dead:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel, fired.Load
}

// noAnswerError is a handshake step the plugin never answered: a process that is alive but
// silent (a server waiting on something that never comes, a wrapper whose child never started).
// Restarting it would only repeat the wait, so the supervisor marks the plugin failed instead.
type noAnswerError struct {
	step    string
	timeout time.Duration
}

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("handshake: %s: no answer within %s", e.step, e.timeout)
}

// handshake runs initialize, notifications/initialized and the tools listing within
// HandshakeTimeout, then attaches the tools.
func (in *instance) handshake(r *runner) error {
	timeout := in.p.h.opts.HandshakeTimeout
	ctx, cancel, timedOut := in.timeoutCtx(in.ctx, timeout, r.stopCh)
	defer cancel()
	wrap := func(step string, err error) error {
		switch {
		case timedOut():
			return &noAnswerError{step: step, timeout: timeout}
		case in.isDead():
			return fmt.Errorf("handshake: %s: %w", step, in.cause())
		}
		return fmt.Errorf("handshake: %s: %w", step, err)
	}
	var res protocol.InitializeResult
	params := protocol.InitializeParams{
		ProtocolVersion: protocol.LatestVersion,
		ClientInfo:      in.p.h.opts.ClientInfo,
	}
	if in.p.native() {
		hello, err := json.Marshal(in.hello())
		if err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		params.Capabilities.Experimental = map[string]json.RawMessage{protocol.ExtensionName: hello}
	}
	if err := in.conn.Call(ctx, protocol.MethodInitialize, params, &res); err != nil {
		return wrap("initialize", err)
	}
	if !slices.Contains(protocol.SupportedVersions, res.ProtocolVersion) {
		return fmt.Errorf("handshake: initialize: unsupported protocol version %q (supported: %s)",
			res.ProtocolVersion, strings.Join(protocol.SupportedVersions, ", "))
	}
	in.p.log.Debug("plugin initialized", "server", res.ServerInfo.Name, "version", res.ServerInfo.Version,
		"protocol", res.ProtocolVersion)
	if in.p.native() {
		offer, _, err := protocol.OfferFrom(res.Capabilities)
		if err == nil {
			err = in.acceptOffer(offer)
		}
		if err != nil {
			return fmt.Errorf("handshake: initialize: native extensions: %w", err)
		}
	}
	if err := in.conn.Notify(protocol.NotifInitialized, nil); err != nil {
		return wrap("initialized", err)
	}
	var tools []protocol.Tool
	if res.Capabilities.Tools != nil {
		var err error
		if tools, err = in.listTools(ctx); err != nil {
			return wrap("tools/list", err)
		}
	}
	if err := in.attach(tools); err != nil {
		return err
	}
	return in.attachHooks()
}

// listTools lists every page of the plugin's tools.
func (in *instance) listTools(ctx context.Context) ([]protocol.Tool, error) {
	var all []protocol.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("more than %d pages", maxPages)
		}
		var res protocol.ListToolsResult
		if err := in.conn.Call(ctx, protocol.MethodToolsList, protocol.ListToolsParams{Cursor: cursor}, &res); err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("cursor %q repeated", res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// attach replaces the plugin's tools in the Registry with tools, unless this instance is dead.
func (in *instance) attach(tools []protocol.Tool) error {
	p := in.p
	p.toolsMu.Lock()
	defer p.toolsMu.Unlock()
	// Never wait for the death while holding toolsMu: die takes it to detach the tools.
	if in.isDead() {
		return fmt.Errorf("handshake: %w", in.cause()) // dead is closed: cause returns at once
	}
	if in.detached {
		return errors.New("handshake: the plugin is being stopped")
	}
	var infos []ToolInfo
	var calls []CallFunc
	for _, t := range tools {
		if t.Name == "" {
			p.log.Warn("plugin offered a tool without a name; skipped")
			continue
		}
		info := ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		if info.Description == "" {
			info.Description = t.Title
		}
		if len(info.InputSchema) == 0 || string(info.InputSchema) == "null" {
			info.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if a := t.Annotations; a != nil && a.ReadOnlyHint != nil {
			info.ReadOnly = *a.ReadOnlyHint
		}
		info.Visibility = p.toolVisibility(t)
		infos = append(infos, info)
		calls = append(calls, in.callFunc(t.Name))
	}
	if ts, ok := p.h.opts.Registry.(ToolSetter); ok {
		names, err := ts.SetTools(p.name(), infos, calls)
		if err == nil {
			p.tools, p.toolsOf = names, in
			return nil
		}
		p.log.Warn("tools not replaced at once; attaching one by one", "err", err)
	}
	if p.toolsOf != nil || len(p.tools) > 0 {
		p.h.opts.Registry.RemoveTools(p.name())
	}
	p.tools, p.toolsOf = nil, in
	for i, info := range infos {
		name, err := p.h.opts.Registry.AddTool(p.name(), info, calls[i])
		if err != nil {
			p.log.Warn("tool not attached", "tool", info.Name, "err", err)
			continue
		}
		p.tools = append(p.tools, name)
	}
	return nil
}

// callFunc returns the CallFunc of the plugin's tool named tool on this instance.
func (in *instance) callFunc(tool string) CallFunc {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		if in.isDead() {
			return "", fmt.Errorf("plugin %s is not running", in.p.name())
		}
		if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
			args = json.RawMessage("{}")
		}
		var res protocol.CallToolResult
		params := protocol.CallToolParams{Name: tool, Arguments: args}
		if turnOf := in.p.h.opts.TurnOf; turnOf != nil && in.p.native() {
			if turn, session := turnOf(ctx); turn != "" {
				params.Meta = &protocol.RequestMeta{Turn: turn, Session: session}
			}
		}
		err := in.conn.Call(ctx, protocol.MethodToolsCall, params, &res)
		if err != nil {
			if errors.Is(err, protocol.ErrClosed) {
				return "", in.diedDuringCall()
			}
			var rpc *protocol.Error
			if errors.As(err, &rpc) {
				return "", fmt.Errorf("plugin %s: tool %s: %s", in.p.name(), tool, rpc.Message)
			}
			return "", fmt.Errorf("plugin %s: tool %s: %w", in.p.name(), tool, err)
		}
		if err := in.resolveRefs(&res); err != nil {
			return "", fmt.Errorf("plugin %s: tool %s: %w", in.p.name(), tool, err)
		}
		text := resultText(&res)
		if read := in.p.h.opts.ImageText; read != nil && !res.IsError {
			text += imageTexts(ctx, read, res.Content)
		}
		if res.IsError {
			if text == "" {
				text = fmt.Sprintf("tool %s reported an error", tool)
			}
			return "", errors.New(text)
		}
		sinkImages(ctx, res.Content)
		return text, nil
	}
}

// diedDuringCall is the error of a call whose connection went away: it waits (bounded) for the
// process to be reaped so the error can say how it ended.
func (in *instance) diedDuringCall() error {
	t := time.NewTimer(in.p.h.opts.StopGrace + time.Second)
	defer t.Stop()
	select {
	case <-in.exited:
	case <-t.C:
	}
	if in.stopping.Load() {
		return fmt.Errorf("plugin %s was stopped during the call", in.p.name())
	}
	why := in.exitString()
	if why == "" && in.isDead() {
		why = in.cause().Error()
	}
	if why == "" {
		why = "connection closed"
	}
	return fmt.Errorf("plugin %s died during the call (%s)", in.p.name(), why)
}

// handle answers requests from the plugin: ping for everyone; for a native plugin the kernel
// methods of the native extensions, each only when the manifest declares its capability
// ([CodeCapability] with the capability named otherwise); an MCP server is told the method is
// not supported by this client.
func (in *instance) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == protocol.MethodPing {
		return struct{}{}, nil
	}
	if !in.p.native() {
		return nil, &protocol.Error{Code: protocol.MethodNotFound,
			Message: fmt.Sprintf("method %s is not supported by this client", method)}
	}
	capability := protocol.CapabilityFor(method)
	if capability == "" {
		return nil, &protocol.Error{Code: protocol.MethodNotFound, Message: "method not found: " + method}
	}
	if !in.hasCap(capability) {
		return nil, protocol.CapabilityError(method, capability)
	}
	return in.serveNative(ctx, method, params)
}

// notification handles notifications from the plugin. It runs on the read loop and never blocks.
func (in *instance) notification(method string, params json.RawMessage) {
	switch method {
	case protocol.NotifToolsListChanged:
		select {
		case in.relist <- struct{}{}:
		default:
		}
	case protocol.NotifMessage:
		var m protocol.LoggingMessageParams
		if err := json.Unmarshal(params, &m); err != nil {
			in.p.log.Warn("bad notifications/message", "err", err)
			return
		}
		var data any = string(m.Data)
		var s string
		if json.Unmarshal(m.Data, &s) == nil {
			data = s
		}
		attrs := []any{"data", data}
		if m.Logger != "" {
			attrs = append(attrs, "logger", m.Logger)
		}
		in.p.log.Log(context.Background(), logLevel(m.Level), "plugin log", attrs...)
	}
}

// logLevel maps an MCP (syslog) logging level to slog's.
func logLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// relister re-lists the tools after notifications/tools/list_changed.
func (in *instance) relister() {
	for {
		select {
		case <-in.relist:
		case <-in.dead:
			return
		}
		ctx, cancel, timedOut := in.timeoutCtx(in.ctx, in.p.h.opts.HandshakeTimeout, nil)
		tools, err := in.listTools(ctx)
		cancel()
		if err != nil {
			if !in.isDead() {
				if timedOut() {
					err = fmt.Errorf("no answer within %s", in.p.h.opts.HandshakeTimeout)
				}
				in.p.log.Warn("re-listing tools", "err", err)
			}
			continue
		}
		if err := in.attach(tools); err == nil {
			in.p.log.Info("plugin tools changed", "tools", len(tools))
		}
	}
}

// pinger pings the plugin every PingInterval; a ping that fails or gets no answer within
// PingTimeout kills the instance (a crash).
func (in *instance) pinger() {
	opts := in.p.h.opts
	for {
		select {
		case <-opts.After(opts.PingInterval):
		case <-in.dead:
			return
		}
		ctx, cancel, timedOut := in.timeoutCtx(in.ctx, opts.PingTimeout, nil)
		err := in.conn.Call(ctx, protocol.MethodPing, nil, nil)
		cancel()
		if err == nil {
			continue
		}
		if in.isDead() || in.stopping.Load() {
			return
		}
		if timedOut() {
			err = fmt.Errorf("no answer within %s", opts.PingTimeout)
		}
		in.die(fmt.Errorf("ping failed: %w", err))
		in.killNow()
		return
	}
}
