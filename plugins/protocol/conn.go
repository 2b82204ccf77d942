package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Handler serves incoming requests. It returns the result (marshalled to
// JSON; nil is sent as {}) or an error: an *[Error] (also when wrapped) is
// sent as it is, any other error as InternalError with its message. Unknown
// methods should be answered with &Error{Code: MethodNotFound}. ctx is
// cancelled when the peer sends notifications/cancelled for the request or
// when [Conn.Run] returns. Handle is called concurrently, one goroutine per
// request.
type Handler interface {
	Handle(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, method string, params json.RawMessage) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return f(ctx, method, params)
}

// ConnOptions configures a [Conn]. The zero value is usable.
type ConnOptions struct {
	// MaxFrame bounds frames in both directions; <= 0 means
	// [DefaultNativeMaxFrame].
	MaxFrame int
	// Handler serves incoming requests; nil answers every request with
	// MethodNotFound.
	Handler Handler
	// Logger receives protocol problems (bad frames, unroutable responses);
	// nil discards them.
	Logger *slog.Logger
	// OnNotification receives incoming notifications, notifications/cancelled
	// included (which the Conn also applies itself). It is called from the
	// read loop, one at a time: it must not block and must not wait for a
	// [Conn.Call] on the same Conn.
	OnNotification func(method string, params json.RawMessage)
	// OnResponded, when set, is called after the response to a request has been written (or
	// failed to be), from the goroutine that served it: e.g. a plugin exits once its answer to
	// shutdown is on the wire.
	OnResponded func(method string, err error)
}

// Conn is one JSON-RPC endpoint over a reader and a writer: it serves the
// peer's requests through a [Handler] and makes its own calls. Call, Notify
// and Close are safe for concurrent use; Run must be called once.
//
// Lifecycle: NewConn, then Run in a goroutine (calls may be issued before, their
// responses are read by Run), then Close or end of input. Once Run has
// returned or Close was called, pending and new calls fail with [ErrClosed].
type Conn struct {
	r    io.Reader
	w    io.Writer
	dec  *Decoder
	enc  *Encoder
	opts ConnOptions
	log  *slog.Logger

	nextID  atomic.Int64
	started atomic.Bool

	mu       sync.Mutex
	pending  map[ID]chan reply
	incoming map[ID]*inflight
	cause    error // why the connection closed

	done      chan struct{}
	closeOnce sync.Once
	ioOnce    sync.Once
	wg        sync.WaitGroup // request handlers
}

// reply is what a pending call receives: a response or a frame error.
type reply struct {
	msg Message
	err error
}

// inflight is an incoming request being served.
type inflight struct {
	cancel    context.CancelFunc
	cancelled bool // by the peer: no response is sent
}

// NewConn returns a Conn reading frames from r and writing them to w. If r or
// w implement io.Closer, Close (and Run when its ctx is cancelled) closes
// them.
func NewConn(r io.Reader, w io.Writer, opts ConnOptions) *Conn {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Conn{
		r:        r,
		w:        w,
		dec:      NewDecoder(r, opts.MaxFrame),
		enc:      NewEncoder(w, opts.MaxFrame),
		opts:     opts,
		log:      log,
		pending:  make(map[ID]chan reply),
		incoming: make(map[ID]*inflight),
		done:     make(chan struct{}),
	}
}

// decoded is one Decode outcome handed from the reader goroutine to Run.
type decoded struct {
	msg Message
	err error
}

// Run reads and dispatches frames until end of input (returns nil), a read
// error (returned), Close (returns nil) or ctx's end (returns ctx.Err() and
// closes the Conn). Requests are served concurrently; responses complete
// pending calls; notifications go to OnNotification; bad frames are answered
// with ParseError or InvalidRequest (id null when unknown) and reading goes
// on. Before returning, Run fails every pending call with [ErrClosed], cancels
// the handlers' contexts and waits for them.
func (c *Conn) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("protocol: Conn.Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	frames := make(chan decoded)
	go func() { // owned by Run; exits at end of input or once the Conn is closed
		for {
			m, err := c.dec.Decode()
			select {
			case frames <- decoded{m, err}:
			case <-c.done:
				return
			}
			var de *DecodeError
			if err != nil && !errors.As(err, &de) {
				return
			}
		}
	}()

	var result error
loop:
	for {
		select {
		case <-ctx.Done():
			result = ctx.Err()
			c.closeIO()
			break loop
		case <-c.done:
			break loop
		case d := <-frames:
			if d.err == nil {
				c.dispatch(ctx, d.msg)
				continue
			}
			var de *DecodeError
			if errors.As(d.err, &de) {
				c.badFrame(de)
				continue
			}
			if !errors.Is(d.err, io.EOF) {
				result = fmt.Errorf("protocol: read: %w", d.err)
			}
			break loop
		}
	}
	cause := result
	if cause == nil {
		cause = io.EOF
	}
	c.markClosed(cause)
	cancel()
	c.wg.Wait()
	return result
}

// dispatch routes one valid message.
func (c *Conn) dispatch(ctx context.Context, m Message) {
	switch {
	case m.IsRequest():
		c.serve(ctx, m)
	case m.IsNotification():
		if m.Method == NotifCancelled {
			var p CancelledParams
			if err := json.Unmarshal(m.Params, &p); err == nil {
				c.mu.Lock()
				if in := c.incoming[p.RequestID]; in != nil {
					in.cancelled = true
					in.cancel()
				}
				c.mu.Unlock()
			}
		}
		if c.opts.OnNotification != nil {
			c.opts.OnNotification(m.Method, m.Params)
		}
	default: // response
		if m.ID == nil {
			c.log.Warn("peer reported an error without an id", "err", m.Error)
			return
		}
		c.deliver(*m.ID, reply{msg: m})
	}
}

// deliver completes the pending call id, if any.
func (c *Conn) deliver(id ID, r reply) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch == nil {
		c.log.Warn("response for an unknown request", "id", id.String())
		return
	}
	ch <- r
}

// badFrame answers or routes a frame the decoder refused.
func (c *Conn) badFrame(de *DecodeError) {
	if de.Response {
		if de.ID != nil {
			c.deliver(*de.ID, reply{err: de})
			return
		}
		c.log.Warn("invalid response frame", "err", de)
		return
	}
	c.log.Debug("invalid frame", "err", de)
	c.wg.Add(1)
	go func() { // never block the read loop on a write: the peer may be writing too
		defer c.wg.Done()
		if err := c.enc.Encode(Message{ID: de.ID, Error: de.RPCError()}); err != nil {
			c.log.Warn("answering an invalid frame", "err", err)
		}
	}()
}

// serve runs the handler for request m in its own goroutine.
func (c *Conn) serve(ctx context.Context, m Message) {
	id := *m.ID
	c.mu.Lock()
	if c.incoming[id] != nil {
		c.mu.Unlock()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.respond(id, nil, &Error{Code: InvalidRequest, Message: "invalid request: id " + id.String() + " is already in use"})
		}()
		return
	}
	hctx, cancel := context.WithCancel(ctx)
	in := &inflight{cancel: cancel}
	c.incoming[id] = in
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		res, err := c.call(hctx, m)
		c.mu.Lock()
		delete(c.incoming, id)
		skip := in.cancelled
		c.mu.Unlock()
		cancel()
		if !skip {
			werr := c.respond(id, res, err)
			if c.opts.OnResponded != nil {
				c.opts.OnResponded(m.Method, werr)
			}
		}
	}()
}

// call invokes the handler, turning a panic into an error.
func (c *Conn) call(ctx context.Context, m Message) (res any, err error) {
	if c.opts.Handler == nil {
		return nil, &Error{Code: MethodNotFound, Message: "method not found: " + m.Method}
	}
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("handler panicked", "method", m.Method, "panic", p)
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return c.opts.Handler.Handle(ctx, m.Method, m.Params)
}

// respond sends the response for request id and returns the write error, if any.
func (c *Conn) respond(id ID, res any, err error) error {
	m := Message{ID: &id}
	if err == nil {
		raw, merr := marshal(res)
		switch {
		case merr != nil:
			err = fmt.Errorf("encoding result: %w", merr)
		case raw == nil || string(raw) == "null":
			m.Result = json.RawMessage("{}")
		default:
			m.Result = raw
		}
	}
	if err != nil {
		m.Error = toError(err)
		m.Result = nil
	}
	err = c.enc.Encode(m)
	if errors.Is(err, ErrFrameTooLarge) {
		err = c.enc.Encode(Message{ID: &id, Error: &Error{Code: InternalError, Message: err.Error()}})
	}
	if err != nil {
		c.log.Warn("sending a response", "id", id.String(), "err", err)
	}
	return err
}

// toError maps a handler error to the error object sent to the peer.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, Message: err.Error()}
}

// Call sends a request and waits for its response. An error response is
// returned as an *[Error]; a successful result is unmarshalled into result
// unless result is nil. When ctx ends first, Call sends
// notifications/cancelled (except for initialize, which MCP forbids
// cancelling) and returns ctx.Err() wrapped. When the connection closes first,
// the error wraps [ErrClosed].
func (c *Conn) Call(ctx context.Context, method string, params any, result any) error {
	raw, err := marshal(params)
	if err != nil {
		return fmt.Errorf("protocol: call %s: encoding params: %w", method, err)
	}
	id := IntID(c.nextID.Add(1))
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.cause != nil {
		cause := c.cause
		c.mu.Unlock()
		return c.closedErr(method, cause)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.enc.Encode(Message{ID: &id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return fmt.Errorf("protocol: call %s: %w", method, err)
	}
	select {
	case r := <-ch:
		return decodeReply(method, r, result)
	case <-ctx.Done():
		c.forget(id)
		if method != MethodInitialize {
			if err := c.Notify(NotifCancelled, CancelledParams{RequestID: id, Reason: ctx.Err().Error()}); err != nil {
				c.log.Debug("sending cancellation", "id", id.String(), "err", err)
			}
		}
		return fmt.Errorf("protocol: call %s: %w", method, ctx.Err())
	case <-c.done:
		select { // a response that raced the close still counts
		case r := <-ch:
			return decodeReply(method, r, result)
		default:
		}
		c.forget(id)
		c.mu.Lock()
		cause := c.cause
		c.mu.Unlock()
		return c.closedErr(method, cause)
	}
}

// decodeReply turns a reply into Call's outcome.
func decodeReply(method string, r reply, result any) error {
	if r.err != nil {
		return fmt.Errorf("protocol: call %s: %w", method, r.err)
	}
	if r.msg.Error != nil {
		return r.msg.Error
	}
	if result != nil && len(r.msg.Result) > 0 {
		if err := json.Unmarshal(r.msg.Result, result); err != nil {
			return fmt.Errorf("protocol: call %s: decoding result: %w", method, err)
		}
	}
	return nil
}

// forget drops the pending call id.
func (c *Conn) forget(id ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// closedErr is the error of a call on a closed connection.
func (c *Conn) closedErr(method string, cause error) error {
	if cause == nil || errors.Is(cause, ErrClosed) {
		return fmt.Errorf("protocol: call %s: %w", method, ErrClosed)
	}
	return fmt.Errorf("protocol: call %s: %w (%v)", method, ErrClosed, cause)
}

// Notify sends a notification. It fails with [ErrClosed] once the Conn is closed.
func (c *Conn) Notify(method string, params any) error {
	select {
	case <-c.done:
		return fmt.Errorf("protocol: notify %s: %w", method, ErrClosed)
	default:
	}
	raw, err := marshal(params)
	if err != nil {
		return fmt.Errorf("protocol: notify %s: encoding params: %w", method, err)
	}
	if err := c.enc.Encode(Message{Method: method, Params: raw}); err != nil {
		return fmt.Errorf("protocol: notify %s: %w", method, err)
	}
	return nil
}

// Close closes the Conn: pending calls fail with [ErrClosed], Run returns,
// and the reader and writer are closed if they implement io.Closer (for a
// plugin, closing its stdin is the second step of the stop ladder). Close is
// idempotent and returns the first error from closing them.
func (c *Conn) Close() error {
	c.markClosed(ErrClosed)
	return c.closeIO()
}

// markClosed records why the Conn closed and wakes every waiter, once.
func (c *Conn) markClosed(cause error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.cause = cause
		c.mu.Unlock()
		close(c.done)
	})
}

// closeIO closes r and w if they are closers, once.
func (c *Conn) closeIO() error {
	var err error
	c.ioOnce.Do(func() {
		var errs []error
		if cl, ok := c.w.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
		if cl, ok := c.r.(io.Closer); ok && !same(c.r, c.w) {
			errs = append(errs, cl.Close())
		}
		err = errors.Join(errs...)
	})
	return err
}

// same reports whether r and w are the same object (an io.ReadWriteCloser
// passed twice), without panicking on incomparable dynamic types.
func same(r io.Reader, w io.Writer) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return any(r) == any(w)
}
