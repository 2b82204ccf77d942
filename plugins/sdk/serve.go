package sdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hologramagent/hologram/plugins/protocol"
)

// region is the plugin's side of its shared-memory region (plugins/shm.Region).
type region interface {
	// Put copies p into the plugin→kernel arena.
	Put(p []byte) (protocol.Ref, error)
	// Copy returns a copy of the bytes at ref in the kernel→plugin arena.
	Copy(ref protocol.Ref) ([]byte, error)
	// Release frees ref once read.
	Release(ref protocol.Ref) error
	// NextEvent waits for the next kernel event in the ring.
	NextEvent(ctx context.Context) ([]byte, uint64, error)
	Close() error
}

// Serve runs p as a native plugin on the process's stdin and stdout until the kernel asks it
// to shut down (shutdown request, or stdin closed) or ctx ends. It first protects stdout (see
// the package documentation) and, when the kernel announces one in initialize, opens the
// shared-memory region it passed as fds 3, 4 and 5. It returns nil on a requested shutdown.
func Serve(ctx context.Context, p Plugin) error {
	out, err := protectStdout()
	if err != nil {
		return fmt.Errorf("sdk: protecting stdout: %w", err)
	}
	return serve(ctx, p, os.Stdin, out, openRegion)
}

// ServeConn runs p over r and w instead of the process's stdin and stdout, without a
// shared-memory region and without touching stdout (see plugins/sdk/sdktest, whose in-memory
// pair it serves in tests). It returns like [Serve]; r and w are closed on return when they
// are closers.
func ServeConn(ctx context.Context, p Plugin, r io.Reader, w io.Writer) error {
	return serve(ctx, p, r, w, nil)
}

// server is one running plugin.
type server struct {
	p        Plugin
	log      *slog.Logger
	conn     *protocol.Conn
	k        *Kernel
	tools    map[string]*Tool
	hooks    map[string]*Hook
	channels map[string]*Channel
	open     func() (region, error)

	ctx    context.Context // ends at shutdown
	cancel context.CancelFunc

	mu       sync.Mutex
	hello    protocol.NativeHello
	native   bool
	region   region
	inited   bool
	shutdown bool
	subTypes []string // the kernel events subscribed to
	ringRead bool     // a goroutine reads the event ring

	queue chan func() // events and pause notifications, run in order by one worker
	wg    sync.WaitGroup
}

// serve validates p and runs it over r and w.
func serve(ctx context.Context, p Plugin, r io.Reader, w io.Writer, open func() (region, error)) error {
	s, err := newServer(p, open)
	if err != nil {
		return err
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	s.conn = protocol.NewConn(r, w, protocol.ConnOptions{
		MaxFrame:       protocol.DefaultNativeMaxFrame,
		Handler:        protocol.HandlerFunc(s.handle),
		Logger:         s.log,
		OnNotification: s.notification,
		OnResponded: func(method string, _ error) {
			if method == protocol.MethodShutdown {
				s.cancel()
			}
		},
	})
	s.k = &Kernel{s: s}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.worker()
	}()
	err = s.conn.Run(s.ctx)
	s.cancel()
	s.conn.Close()
	s.wg.Wait()
	s.mu.Lock()
	reg, down := s.region, s.shutdown
	s.region = nil
	s.mu.Unlock()
	if reg != nil {
		if cerr := reg.Close(); cerr != nil {
			s.log.Warn("closing the shared-memory region", "err", cerr)
		}
	}
	if down || (errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sdk: %w", err)
	}
	return nil
}

// newServer checks p.
func newServer(p Plugin, open func() (region, error)) (*server, error) {
	if p.Name == "" {
		return nil, errors.New("sdk: Plugin.Name is required")
	}
	s := &server{p: p, log: p.Logger, open: open, tools: map[string]*Tool{}, hooks: map[string]*Hook{},
		channels: map[string]*Channel{}, queue: make(chan func(), 256)}
	if s.log == nil {
		s.log = NewLogger(os.Stderr, slog.LevelInfo)
	}
	for i := range p.Tools {
		t := &p.Tools[i]
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("sdk: tool %d has no name", i)
		case t.Run == nil:
			return nil, fmt.Errorf("sdk: tool %s has no Run", t.Name)
		case s.tools[t.Name] != nil:
			return nil, fmt.Errorf("sdk: tool %s is declared twice", t.Name)
		case len(t.InputSchema) > 0 && !json.Valid(t.InputSchema):
			return nil, fmt.Errorf("sdk: tool %s: InputSchema is not valid JSON", t.Name)
		}
		s.tools[t.Name] = t
	}
	for i := range p.Hooks {
		h := &p.Hooks[i]
		switch {
		case h.Name == "":
			return nil, fmt.Errorf("sdk: hook %d has no name", i)
		case !h.Stage.valid():
			return nil, fmt.Errorf("sdk: hook %s: unknown stage %q", h.Name, h.Stage)
		case h.Run == nil:
			return nil, fmt.Errorf("sdk: hook %s has no Run", h.Name)
		case s.hooks[h.Name] != nil:
			return nil, fmt.Errorf("sdk: hook %s is declared twice", h.Name)
		case h.Timeout < 0:
			return nil, fmt.Errorf("sdk: hook %s: negative timeout", h.Name)
		}
		s.hooks[h.Name] = h
	}
	for i := range p.Channels {
		c := &p.Channels[i]
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("sdk: channel %d has no name", i)
		case c.Send == nil:
			return nil, fmt.Errorf("sdk: channel %s has no Send", c.Name)
		case s.channels[c.Name] != nil:
			return nil, fmt.Errorf("sdk: channel %s is declared twice", c.Name)
		}
		s.channels[c.Name] = c
	}
	return s, nil
}

// worker runs queued event and pause callbacks in order until shutdown.
func (s *server) worker() {
	for {
		select {
		case f := <-s.queue:
			f()
		case <-s.ctx.Done():
			return
		}
	}
}

// enqueue queues f for the worker; when the queue is full the item is dropped and logged (the
// read loop never blocks).
func (s *server) enqueue(what string, f func()) {
	select {
	case s.queue <- f:
	default:
		s.log.Warn("callback queue full; dropped", "what", what)
	}
}

// handle answers the kernel's requests.
func (s *server) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case protocol.MethodInitialize:
		return s.initialize(params)
	case protocol.MethodPing:
		return struct{}{}, nil
	case protocol.MethodShutdown:
		s.mu.Lock()
		s.shutdown = true
		s.mu.Unlock()
		return struct{}{}, nil
	case protocol.MethodToolsList:
		return s.listTools(), nil
	case protocol.MethodToolsCall:
		return s.callTool(ctx, params)
	case protocol.MethodHookRun:
		return s.runHook(ctx, params)
	case protocol.MethodChannelSend:
		return s.channelSend(ctx, params)
	}
	return nil, &protocol.Error{Code: protocol.MethodNotFound, Message: "method not found: " + method}
}

// initialize answers initialize: the tools capability and, when the kernel offers native
// extensions, the hooks and channels.
func (s *server) initialize(params json.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	hello, native, err := protocol.HelloFrom(p.Capabilities)
	if err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inited {
		return nil, &protocol.Error{Code: protocol.InvalidRequest, Message: "initialize was already called"}
	}
	s.inited = true
	s.hello, s.native = hello, native
	if native && hello.Shm != nil && s.open != nil && s.region == nil {
		reg, err := s.open()
		if err != nil {
			// Without the region the plugin still works; large payloads are refused.
			s.log.Error("opening the shared-memory region", "err", err)
		} else {
			s.region = reg
		}
	}
	res := protocol.InitializeResult{
		ProtocolVersion: protocol.NegotiateVersion(p.ProtocolVersion),
		Capabilities:    protocol.ServerCapabilities{Tools: &protocol.ToolsCapability{}},
		ServerInfo:      protocol.Implementation{Name: s.p.Name, Version: s.p.Version},
		Instructions:    s.p.Instructions,
	}
	if native {
		offer := protocol.NativeOffer{Version: protocol.NativeVersion}
		for _, h := range s.p.Hooks {
			offer.Hooks = append(offer.Hooks, protocol.HookDecl{Name: h.Name, Stage: string(h.Stage), Priority: h.Priority,
				TimeoutMS: int(h.Timeout / time.Millisecond)})
		}
		for _, c := range s.p.Channels {
			offer.Channels = append(offer.Channels, c.Name)
		}
		raw, err := json.Marshal(offer)
		if err != nil {
			return nil, err
		}
		res.Capabilities.Experimental = map[string]json.RawMessage{protocol.ExtensionName: raw}
	} else if len(s.p.Hooks) > 0 || len(s.p.Channels) > 0 {
		s.log.Warn("the host offers no native extensions: hooks and channels are inactive")
	}
	return res, nil
}

// listTools answers tools/list (one page).
func (s *server) listTools() protocol.ListToolsResult {
	out := protocol.ListToolsResult{Tools: make([]protocol.Tool, 0, len(s.p.Tools))}
	for _, t := range s.p.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		pt := protocol.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema, Visibility: t.Visibility}
		if t.ReadOnly {
			ro := true
			pt.Annotations = &protocol.ToolAnnotations{ReadOnlyHint: &ro}
		}
		out.Tools = append(out.Tools, pt)
	}
	return out
}

// callTool answers tools/call.
func (s *server) callTool(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.CallToolParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "invalid params: " + err.Error()}
	}
	t := s.tools[p.Name]
	if t == nil {
		return nil, &protocol.Error{Code: protocol.InvalidParams, Message: "unknown tool " + p.Name}
	}
	if p.Meta != nil && p.Meta.Turn != "" {
		ctx = withTurn(ctx, p.Meta.Turn)
	}
	if p.Meta != nil && p.Meta.Session != "" {
		ctx = context.WithValue(ctx, sessionKey{}, p.Meta.Session)
	}
	args := p.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := s.runTool(ctx, t, args)
	if err != nil {
		return protocol.CallToolResult{IsError: true, Content: []protocol.Content{{Type: "text", Text: err.Error()}}}, nil
	}
	out := protocol.CallToolResult{IsError: res.IsError, Content: make([]protocol.Content, 0, len(res.Content))}
	for _, c := range res.Content {
		pc, err := s.content(c)
		if err != nil {
			s.release(out.Content)
			return protocol.CallToolResult{IsError: true, Content: []protocol.Content{{Type: "text",
				Text: fmt.Sprintf("tool %s: %v", t.Name, err)}}}, nil
		}
		out.Content = append(out.Content, pc)
	}
	return out, nil
}

// runTool runs a tool's Run, turning a panic into an error.
func (s *server) runTool(ctx context.Context, t *Tool, args json.RawMessage) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("tool panicked", "tool", t.Name, "panic", r)
			err = fmt.Errorf("tool %s panicked: %v", t.Name, r)
		}
	}()
	return t.Run(ctx, s.k, args)
}

// content converts a result item for the wire: items over protocol.InlineMax go through the
// region.
func (s *server) content(c Content) (protocol.Content, error) {
	switch c.Type {
	case "text", "":
		pc := protocol.Content{Type: "text", Text: c.Text}
		if len(c.Text) > protocol.InlineMax {
			if reg := s.reg(); reg != nil {
				ref, err := reg.Put([]byte(c.Text))
				if err != nil {
					return protocol.Content{}, fmt.Errorf("%d bytes of text through shared memory: %w", len(c.Text), err)
				}
				pc.Text, pc.Ref = "", &ref
			}
		}
		return pc, nil
	case "image", "audio":
		pc := protocol.Content{Type: c.Type, MimeType: c.MIME}
		if len(c.Data) > protocol.InlineMax {
			if reg := s.reg(); reg != nil {
				ref, err := reg.Put(c.Data)
				if err != nil {
					return protocol.Content{}, fmt.Errorf("%d bytes of %s through shared memory: %w", len(c.Data), c.Type, err)
				}
				pc.Ref = &ref
				return pc, nil
			}
		}
		pc.Data = base64.StdEncoding.EncodeToString(c.Data)
		return pc, nil
	}
	return protocol.Content{}, fmt.Errorf("content type %q is not text, image or audio", c.Type)
}

// release frees the region references of items: the kernel is done with them, or they were
// never sent.
func (s *server) release(items []protocol.Content) {
	reg := s.reg()
	if reg == nil {
		return
	}
	for _, c := range items {
		if c.Ref != nil {
			if err := reg.Release(*c.Ref); err != nil {
				s.log.Warn("releasing a shared-memory reference", "ref", c.Ref.String(), "err", err)
			}
		}
	}
}

// reg returns the region, or nil.
func (s *server) reg() region {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.region
}

// readRef copies the bytes at ref, which the kernel put in its arena (the kernel frees them
// once the plugin has answered).
func (s *server) readRef(ref protocol.Ref) ([]byte, error) {
	reg := s.reg()
	if reg == nil {
		return nil, fmt.Errorf("%w: the kernel sent %s", ErrNoRegion, ref)
	}
	b, err := reg.Copy(ref)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return b, nil
}
