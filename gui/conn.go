package gui

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2/data/binding"

	"github.com/hologramagent/hologram/kernel/client"
)

// ConnState is the state of the connection to the kernel as the GUI sees it.
type ConnState int

// Connection states. Every state but ConnConnecting, ConnConnected and ConnRestarted shows a
// banner with a retry countdown.
const (
	// ConnConnecting: no check has finished yet.
	ConnConnecting ConnState = iota
	// ConnConnected: the kernel answers and accepts the token.
	ConnConnected
	// ConnRestarted: the kernel answers, but it is not the process seen before (its start time or
	// pid changed): a turn that was running is lost. The next check says ConnConnected.
	ConnRestarted
	// ConnWrongToken: the kernel refuses the token (HTTP 401/403).
	ConnWrongToken
	// ConnWrongFingerprint: the server's TLS certificate does not match the pinned fingerprint
	// (or, without a pin, is not trusted).
	ConnWrongFingerprint
	// ConnGone: no kernel answers (connection refused, reset, timed out, socket missing).
	ConnGone
)

var connStateNames = [...]string{"connecting", "connected", "restarted", "wrong_token", "wrong_fingerprint", "gone"}

// String returns the state's name as written in traces ("wrong_token", …).
func (s ConnState) String() string {
	if s < 0 || int(s) >= len(connStateNames) {
		return "unknown"
	}
	return connStateNames[s]
}

// Failed reports whether s is a state in which calls to the kernel fail.
func (s ConnState) Failed() bool {
	return s == ConnWrongToken || s == ConnWrongFingerprint || s == ConnGone
}

// Connection check timing defaults.
const (
	DefaultConnInterval   = 5 * time.Second
	DefaultConnMinBackoff = 1 * time.Second
	DefaultConnMaxBackoff = 30 * time.Second
	defaultConnTimeout    = 10 * time.Second
)

// ConnOptions configure NewConn. Zero values pick the defaults.
type ConnOptions struct {
	// Target names the kernel in banners: the remote URL or the socket ("" for the kernel
	// in-process).
	Target string
	// Interval is the time between checks while connected (DefaultConnInterval).
	Interval time.Duration
	// MinBackoff and MaxBackoff bound the retry delay after a failed check: it starts at
	// MinBackoff and doubles up to MaxBackoff (1 s … 30 s).
	MinBackoff, MaxBackoff time.Duration
	// Timeout bounds one check (Health then Status), 10 s by default.
	Timeout time.Duration
	// After returns a channel that delivers after d (nil: time.After); tests inject a fake
	// clock here.
	After func(d time.Duration) <-chan time.Time
	// OnChange, when set, is called from the watching goroutine after each change of state or
	// banner text.
	OnChange func(state ConnState, banner string)
	// OnStatus, when set, is called from the watching goroutine with the kernel's status after
	// each successful check.
	OnStatus func(client.Status)
}

// Conn watches the kernel connection: it checks Health and Status every Interval (and at once
// when a view-model reports a failed call through Report or the Service wrapper), classifies
// failures into states, retries with exponential backoff, and keeps a banner text in a
// binding for the views. Its methods are safe for concurrent use.
type Conn struct {
	// Banner is the text to show above the window's content; "" when all is well.
	Banner binding.String

	svc  client.Service
	o    ConnOptions
	wake chan struct{}

	mu      sync.Mutex
	state   ConnState
	detail  string // the last failure's message
	banner  string
	status  client.Status
	seen    bool // status holds a kernel's identity
	backoff time.Duration
}

// NewConn returns a Conn watching svc; call Run to start watching.
func NewConn(svc client.Service, o ConnOptions) *Conn {
	if o.Interval <= 0 {
		o.Interval = DefaultConnInterval
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultConnMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultConnMaxBackoff, o.MinBackoff)
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultConnTimeout
	}
	if o.After == nil {
		o.After = time.After
	}
	return &Conn{Banner: binding.NewString(), svc: svc, o: o, wake: make(chan struct{}, 1)}
}

// Run checks the connection until ctx ends: at once, then every Interval while connected, or
// after the backoff delay while not.
func (c *Conn) Run(ctx context.Context) {
	for {
		delay := c.Check(ctx)
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-c.o.After(delay):
		}
	}
}

// Check runs one check now, updates the state and banner, and returns the delay until the next
// check.
func (c *Conn) Check(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	// Health needs no token and shows whether anything answers; Status needs the token and
	// says which kernel process answers.
	_, err := c.svc.Health(ctx)
	var status client.Status
	if err == nil {
		status, err = c.svc.Status(ctx)
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return 0 // shutting down: leave the state as it was
	}

	c.mu.Lock()
	var state ConnState
	var delay time.Duration
	if err != nil {
		state, _ = ClassifyError(err)
		if state == ConnConnected { // an API error that is no connection failure
			state = ConnGone
		}
		c.detail = err.Error()
		switch {
		case c.backoff <= 0:
			c.backoff = c.o.MinBackoff
		default:
			c.backoff = min(2*c.backoff, c.o.MaxBackoff)
		}
		delay = c.backoff
	} else {
		state = ConnConnected
		if c.seen && (!status.Started.Equal(c.status.Started) || status.PID != c.status.PID) {
			state = ConnRestarted
		}
		c.status, c.seen, c.detail, c.backoff = status, true, "", 0
		delay = c.o.Interval
	}
	changed := state != c.state
	c.state = state
	banner := c.bannerLocked(delay)
	changed = changed || banner != c.banner
	c.banner = banner
	c.mu.Unlock()

	if changed {
		_ = c.Banner.Set(banner)
		if c.o.OnChange != nil {
			c.o.OnChange(state, banner)
		}
	}
	if err == nil && c.o.OnStatus != nil {
		c.o.OnStatus(status)
	}
	return delay
}

// bannerLocked is the banner text for the current state; delay is the time until the next try.
// Each sentence names the target, or just "the kernel" when it runs in-process.
func (c *Conn) bannerLocked(delay time.Duration) string {
	t, d := c.o.Target, c.detail
	retry := " " + Tf("Retrying in %s.", delay.Round(time.Second))
	switch {
	case c.state == ConnRestarted && t == "":
		return T("The kernel restarted; reconnected. A reply that was running may be lost.")
	case c.state == ConnRestarted:
		return Tf("The kernel at %s restarted; reconnected. A reply that was running may be lost.", t)
	case c.state == ConnWrongToken && t == "":
		return T("The kernel refused the token: check the token file, then reconnect.") + retry
	case c.state == ConnWrongToken:
		return Tf("The kernel at %s refused the token: check the token file, then reconnect.", t) + retry
	case c.state == ConnWrongFingerprint && t == "":
		return Tf("The kernel's server presented a certificate that does not match the pinned fingerprint (%s).", d) + retry
	case c.state == ConnWrongFingerprint:
		return Tf("The server at %s presented a certificate that does not match the pinned fingerprint (%s).", t, d) + retry
	case c.state == ConnGone && t == "":
		return Tf("Cannot reach the kernel (%s).", d) + retry
	case c.state == ConnGone:
		return Tf("Cannot reach the kernel at %s (%s).", t, d) + retry
	}
	return ""
}

// State returns the current state and, in a failed state, the last error's message.
func (c *Conn) State() (ConnState, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.detail
}

// LastStatus returns the kernel's status from the last successful check (ok false before one).
func (c *Conn) LastStatus() (client.Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.seen
}

// RetryNow makes Run check at once instead of waiting out its delay.
func (c *Conn) RetryNow() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Report tells the Conn about a failed call: a connection failure (see ClassifyError) makes it
// check at once. nil and other errors are ignored.
func (c *Conn) Report(err error) {
	if _, conn := ClassifyError(err); conn {
		c.RetryNow()
	}
}

// ClassifyError maps a call's error to the state it implies and whether it is a connection
// failure at all: ErrUnauthorized is ConnWrongToken; a certificate that fails the pin or the
// trust check is ConnWrongFingerprint; an unreachable kernel (refused, reset, timed out, no
// socket) is ConnGone. nil, cancellations and the kernel's own answers (not found, invalid, …)
// are no connection failure (ConnConnected, false).
func ClassifyError(err error) (ConnState, bool) {
	if err == nil || errors.Is(err, context.Canceled) {
		return ConnConnected, false
	}
	if errors.Is(err, client.ErrUnauthorized) {
		return ConnWrongToken, true
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		// The kernel answered: 503 (not ready) is transient, anything else is the call's own
		// failure, not the connection's.
		return ConnConnected, false
	}
	var (
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		certErr     *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuth) || errors.As(err, &hostErr) || errors.As(err, &certErr) || errors.Is(err, client.ErrFingerprint) {
		return ConnWrongFingerprint, true
	}
	return ConnGone, true
}

// Reporter carries the failed calls of an HTTP client (client.Options.OnError) to the Conn of
// the app that uses it, so a failure anywhere updates the banner at once. Make one before
// dialling the kernel and pass it in [Options].Errors; the app attaches its Conn. The zero value
// drops reports until then. Safe for concurrent use.
type Reporter struct {
	to atomic.Pointer[Conn]
}

// Report tells the attached Conn about a failed call (see [Conn.Report]).
func (r *Reporter) Report(err error) {
	if c := r.to.Load(); c != nil {
		c.Report(err)
	}
}

// attach makes c the receiver of the reports.
func (r *Reporter) attach(c *Conn) { r.to.Store(c) }
