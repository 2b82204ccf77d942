package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Bounds of the bridge connection.
const (
	maxFrame        = 8 << 20 // bytes of one message from the bridge (a group list can be long)
	defaultCallWait = 20 * time.Second
	eventQueue      = 256
	maxBackoff      = 30 * time.Second
)

// ErrNotConnected is the error of an API call while no bridge is connected.
var ErrNotConnected = errors.New("not connected to the OneBot bridge")

// Bridge is the plugin's link to a OneBot v11 bridge (NapCat, Lagrange, go-cqhttp …) over one
// WebSocket in the "universal" role: events arrive on it, API calls go out on it and their
// answers come back matched by echo. The WebSocket is either dialed by the plugin (forward:
// [Bridge.RunForward]) or accepted from the bridge (reverse: [Bridge.RunReverse]); a newer
// connection replaces an older one. Events are handed to OnEvent one at a time, in order, from
// one goroutine ([Bridge.Events]), so the read loop never blocks on the kernel. Safe for
// concurrent use.
type Bridge struct {
	log *slog.Logger
	// wait sleeps between reconnections (injected in tests).
	wait func(ctx context.Context, d time.Duration) error
	// callWait bounds one API call.
	callWait time.Duration
	events   chan Event

	seq atomic.Uint64

	mu       sync.Mutex
	conn     *websocket.Conn
	pending  map[string]pendingCall
	self     ID
	peer     string // who is connected (the bridge's address)
	connects int
	dropped  int
	lastErr  string
	changed  chan struct{} // closed and replaced at every (dis)connection
}

// pendingCall is an API call waiting for its answer on conn.
type pendingCall struct {
	conn *websocket.Conn
	ch   chan Response
}

// NewBridge returns a bridge that is not connected yet.
func NewBridge(log *slog.Logger) *Bridge {
	return &Bridge{log: log, wait: sleep, callWait: defaultCallWait, events: make(chan Event, eventQueue),
		pending: map[string]pendingCall{}, changed: make(chan struct{})}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Events returns the events received, in order.
func (b *Bridge) Events() <-chan Event { return b.events }

// BridgeStatus is the state of the connection, for qq_status.
type BridgeStatus struct {
	Connected bool   `json:"connected"`
	Peer      string `json:"peer,omitempty"`
	SelfID    ID     `json:"self_id,omitempty"`
	Connects  int    `json:"connects"`
	Dropped   int    `json:"events_dropped"`
	LastError string `json:"last_error,omitempty"`
}

// Status returns the connection's state.
func (b *Bridge) Status() BridgeStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BridgeStatus{Connected: b.conn != nil, Peer: b.peer, SelfID: b.self, Connects: b.connects, Dropped: b.dropped, LastError: b.lastErr}
}

// Self returns the bot's own QQ number, once known.
func (b *Bridge) Self() ID {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.self
}

// setSelf records the bot's QQ number.
func (b *Bridge) setSelf(id ID) {
	if id == "" {
		return
	}
	b.mu.Lock()
	b.self = id
	b.mu.Unlock()
}

// Changed returns a channel closed at the next connection or disconnection (tests wait on it).
func (b *Bridge) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// notifyLocked wakes the waiters of Changed; b.mu is held.
func (b *Bridge) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Call makes an API call and returns its data, or the bridge's failure.
func (b *Bridge) Call(ctx context.Context, action string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	c := b.conn
	b.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("%s: %w", action, ErrNotConnected)
	}
	echo := "hologram-" + strconv.FormatUint(b.seq.Add(1), 10)
	msg, err := json.Marshal(Request{Action: action, Params: params, Echo: echo})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", action, err)
	}
	ch := make(chan Response, 1)
	b.mu.Lock()
	b.pending[echo] = pendingCall{conn: c, ch: ch}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.pending, echo)
		b.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(ctx, b.callWait)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, fmt.Errorf("%s: sending to the bridge: %w", action, err)
	}
	select {
	case r := <-ch:
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", action, err)
		}
		return r.Data, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer from the bridge within %s: %w", action, b.callWait, ctx.Err())
	}
}

// serve runs one connection until it closes or ctx ends: it becomes the current connection
// (closing an older one), events go to the queue, answers to their callers.
func (b *Bridge) serve(ctx context.Context, c *websocket.Conn, peer string, self ID) error {
	c.SetReadLimit(maxFrame)
	b.mu.Lock()
	old := b.conn
	b.conn, b.peer, b.lastErr = c, peer, ""
	b.connects++
	if self != "" {
		b.self = self
	}
	b.notifyLocked()
	b.mu.Unlock()
	if old != nil {
		old.Close(websocket.StatusGoingAway, "replaced by a newer connection")
	}
	b.log.Info("connected to the OneBot bridge", "peer", peer)
	var learning sync.WaitGroup
	learning.Add(1)
	go func() { // owned by this connection: its answer, or the connection's end, ends it
		defer learning.Done()
		b.learnSelf(ctx)
	}()
	err := b.readLoop(ctx, c)
	b.mu.Lock()
	if b.conn == c {
		b.conn = nil
		if ctx.Err() == nil {
			b.lastErr = err.Error()
		}
	}
	for echo, p := range b.pending {
		if p.conn == c {
			p.ch <- Response{Status: "failed", RetCode: -1, Message: "the connection to the bridge closed before it answered"}
			delete(b.pending, echo)
		}
	}
	b.notifyLocked()
	b.mu.Unlock()
	c.CloseNow()
	learning.Wait()
	b.log.Info("disconnected from the OneBot bridge", "peer", peer, "err", err)
	return err
}

// learnSelf asks the bridge for the bot's own number (get_login_info).
func (b *Bridge) learnSelf(ctx context.Context) {
	data, err := b.Call(ctx, "get_login_info", struct{}{})
	if err != nil {
		b.log.Debug("get_login_info", "err", err)
		return
	}
	var info struct {
		UserID   ID     `json:"user_id"`
		Nickname string `json:"nickname"`
	}
	if err := json.Unmarshal(data, &info); err != nil {
		b.log.Warn("get_login_info: bad answer", "err", err)
		return
	}
	b.setSelf(info.UserID)
	b.log.Info("logged in as", "self_id", info.UserID, "nickname", info.Nickname)
}

// readLoop reads the connection's messages until it fails.
func (b *Bridge) readLoop(ctx context.Context, c *websocket.Conn) error {
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			b.log.Warn("ignored a binary message from the bridge", "bytes", len(data))
			continue
		}
		isEvent, err := classifyFrame(data)
		if err != nil {
			b.log.Warn("ignored a message from the bridge", "err", err, "message", truncate(string(data), 200))
			continue
		}
		if !isEvent {
			var r Response
			if err := json.Unmarshal(data, &r); err != nil {
				b.log.Warn("ignored a bad API answer", "err", err)
				continue
			}
			b.mu.Lock()
			p, ok := b.pending[echoKey(r.Echo)]
			delete(b.pending, echoKey(r.Echo))
			b.mu.Unlock()
			if ok {
				p.ch <- r
			}
			continue
		}
		var ev Event
		if err := json.Unmarshal(data, &ev); err != nil {
			b.log.Warn("ignored a bad event", "err", err, "event", truncate(string(data), 200))
			continue
		}
		b.setSelf(ev.SelfID)
		select {
		case b.events <- ev:
		default:
			b.mu.Lock()
			b.dropped++
			b.mu.Unlock()
			b.log.Warn("event queue full; dropped an event", "post_type", ev.PostType)
		}
	}
}

// RunForward dials the bridge's WebSocket at url (forward mode) and keeps reconnecting, with
// a growing pause (1 s doubling up to 30 s, reset by a successful connection), until ctx ends.
func (b *Bridge) RunForward(ctx context.Context, url, token string) error {
	backoff := time.Second
	for ctx.Err() == nil {
		h := http.Header{}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			backoff = time.Second
			_ = b.serve(ctx, c, url, "")
		} else {
			if ctx.Err() != nil {
				break
			}
			why := err.Error()
			if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
				why = fmt.Sprintf("the bridge refused the access token (HTTP %d): check HOLOGRAM_QQ_TOKEN", resp.StatusCode)
			}
			b.mu.Lock()
			b.lastErr = why
			b.notifyLocked()
			b.mu.Unlock()
			b.log.Warn("cannot reach the OneBot bridge", "url", url, "err", why, "retry_in", backoff.String())
		}
		if err := b.wait(ctx, backoff); err != nil {
			break
		}
		backoff = min(2*backoff, maxBackoff)
	}
	return nil
}

// RunReverse serves the bridge's reverse WebSocket on ln (any path; the bridge's URL is usually
// ws://addr/onebot/v11/ws) until ctx ends, then closes ln.
func (b *Bridge) RunReverse(ctx context.Context, ln net.Listener, token string) error {
	srv := &http.Server{Handler: b.Handler(token), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(b.log.Handler(), slog.LevelDebug)}
	b.log.Info("waiting for the OneBot bridge", "listen", ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("reverse WebSocket: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-done
	return nil
}

// ListenReverse opens the reverse WebSocket's listener on addr (host:port).
func ListenReverse(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("reverse WebSocket: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Handler accepts the bridge's reverse WebSocket: the access token (Authorization: Bearer, or
// the access_token query parameter) must match when one is configured (401 without one, 403
// for a wrong one), and the role must be Universal.
func (b *Bridge) Handler(token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got := r.URL.Query().Get("access_token")
			if a := r.Header.Get("Authorization"); a != "" {
				scheme, v, _ := strings.Cut(a, " ")
				if strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Token") {
					got = strings.TrimSpace(v)
				}
			}
			switch {
			case got == "":
				b.log.Warn("reverse WebSocket without an access token refused", "remote", r.RemoteAddr)
				http.Error(w, "an access token is required", http.StatusUnauthorized)
				return
			case subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1:
				b.log.Warn("reverse WebSocket with a wrong access token refused", "remote", r.RemoteAddr)
				http.Error(w, "wrong access token", http.StatusForbidden)
				return
			}
		}
		if role := r.Header.Get("X-Client-Role"); role != "" && !strings.EqualFold(role, "Universal") {
			http.Error(w, "only the Universal role is served: configure the bridge's reverse WebSocket as universal (one connection for events and API)",
				http.StatusBadRequest)
			return
		}
		var self ID
		if v := strings.TrimSpace(r.Header.Get("X-Self-ID")); v != "" {
			if _, err := ID(v).Int(); err == nil {
				self = ID(v)
			}
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			b.log.Warn("reverse WebSocket handshake failed", "remote", r.RemoteAddr, "err", err)
			return
		}
		_ = b.serve(r.Context(), c, r.RemoteAddr, self)
	})
}

// truncate cuts s at n bytes for logs.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
