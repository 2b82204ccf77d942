package gui

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"sync"
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

// Service returns svc wrapped so that every failed call is reported to c (see Report). The
// view-models get this wrapper, so a failure anywhere updates the banner at once.
func (c *Conn) Service() client.Service { return &reporting{s: c.svc, c: c} }

// reporting is a client.Service that reports its calls' errors to a Conn. It embeds nothing,
// so a method added to client.Service fails to compile here until it is wrapped too.
type reporting struct {
	s client.Service
	c *Conn
}

func (r *reporting) Health(ctx context.Context) (client.Health, error) {
	v, err := r.s.Health(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Status(ctx context.Context) (client.Status, error) {
	v, err := r.s.Status(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Chat(ctx context.Context, req client.ChatRequest, emit func(client.ChatEvent)) (client.ChatResult, error) {
	v, err := r.s.Chat(ctx, req, emit)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Cancel(ctx context.Context, turnID string) error {
	err := r.s.Cancel(ctx, turnID)
	r.c.Report(err)
	return err
}
func (r *reporting) Sessions(ctx context.Context) ([]client.Session, error) {
	v, err := r.s.Sessions(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) CreateSession(ctx context.Context, s client.Session) (client.Session, error) {
	v, err := r.s.CreateSession(ctx, s)
	r.c.Report(err)
	return v, err
}
func (r *reporting) SetInstructions(ctx context.Context, id string, in client.Instructions) (client.Session, error) {
	v, err := r.s.SetInstructions(ctx, id, in)
	r.c.Report(err)
	return v, err
}
func (r *reporting) History(ctx context.Context, id string, limit int) ([]client.Message, error) {
	v, err := r.s.History(ctx, id, limit)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Providers(ctx context.Context) ([]client.Provider, error) {
	v, err := r.s.Providers(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) AddProvider(ctx context.Context, p client.ProviderConfig) (client.Provider, error) {
	v, err := r.s.AddProvider(ctx, p)
	r.c.Report(err)
	return v, err
}
func (r *reporting) RemoveProvider(ctx context.Context, name string) error {
	err := r.s.RemoveProvider(ctx, name)
	r.c.Report(err)
	return err
}
func (r *reporting) Tools(ctx context.Context) ([]client.Tool, error) {
	v, err := r.s.Tools(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Window(ctx context.Context, id string) (client.Window, error) {
	v, err := r.s.Window(ctx, id)
	r.c.Report(err)
	return v, err
}
func (r *reporting) SearchMemory(ctx context.Context, q client.MemoryQuery) ([]client.MemoryHit, error) {
	v, err := r.s.SearchMemory(ctx, q)
	r.c.Report(err)
	return v, err
}
func (r *reporting) SetPaused(ctx context.Context, paused bool) error {
	err := r.s.SetPaused(ctx, paused)
	r.c.Report(err)
	return err
}
func (r *reporting) TestProvider(ctx context.Context, p client.ProviderConfig) (client.ProviderCheck, error) {
	v, err := r.s.TestProvider(ctx, p)
	r.c.Report(err)
	return v, err
}
func (r *reporting) DetectProviders(ctx context.Context) ([]client.ProviderConfig, error) {
	v, err := r.s.DetectProviders(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Plugins(ctx context.Context) ([]client.Plugin, error) {
	v, err := r.s.Plugins(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) AddPlugin(ctx context.Context, p client.PluginConfig) (client.Plugin, error) {
	v, err := r.s.AddPlugin(ctx, p)
	r.c.Report(err)
	return v, err
}
func (r *reporting) PluginAction(ctx context.Context, name, action string) (client.Plugin, error) {
	v, err := r.s.PluginAction(ctx, name, action)
	r.c.Report(err)
	return v, err
}
func (r *reporting) PluginLogs(ctx context.Context, name string, n int) ([]client.LogLine, error) {
	v, err := r.s.PluginLogs(ctx, name, n)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Graph(ctx context.Context, q client.GraphQuery) (client.GraphPage, error) {
	v, err := r.s.Graph(ctx, q)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Entity(ctx context.Context, id int64) (client.EntityDetail, error) {
	v, err := r.s.Entity(ctx, id)
	r.c.Report(err)
	return v, err
}
func (r *reporting) EventContext(ctx context.Context, id int64, radius int) ([]client.MemoryHit, error) {
	v, err := r.s.EventContext(ctx, id, radius)
	r.c.Report(err)
	return v, err
}
func (r *reporting) PutEntity(ctx context.Context, e client.Entity) (client.Entity, error) {
	v, err := r.s.PutEntity(ctx, e)
	r.c.Report(err)
	return v, err
}
func (r *reporting) AddTriple(ctx context.Context, t client.TripleInput) (client.Triple, error) {
	v, err := r.s.AddTriple(ctx, t)
	r.c.Report(err)
	return v, err
}
func (r *reporting) EditTriple(ctx context.Context, id int64, t client.TripleInput) (client.Triple, error) {
	v, err := r.s.EditTriple(ctx, id, t)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Pin(ctx context.Context, p client.PinRequest) error {
	err := r.s.Pin(ctx, p)
	r.c.Report(err)
	return err
}
func (r *reporting) MergeEntities(ctx context.Context, into, from int64) (client.Entity, error) {
	v, err := r.s.MergeEntities(ctx, into, from)
	r.c.Report(err)
	return v, err
}
func (r *reporting) DeleteEntity(ctx context.Context, id int64) error {
	err := r.s.DeleteEntity(ctx, id)
	r.c.Report(err)
	return err
}
func (r *reporting) Forget(ctx context.Context, ids []int64) (client.ForgetResult, error) {
	v, err := r.s.Forget(ctx, ids)
	r.c.Report(err)
	return v, err
}
func (r *reporting) Scenes(ctx context.Context) ([]client.Scene, error) {
	v, err := r.s.Scenes(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) MemoryGC(ctx context.Context) (client.GCReport, error) {
	v, err := r.s.MemoryGC(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) ExportMemory(ctx context.Context, req client.ExportRequest, w io.Writer) error {
	err := r.s.ExportMemory(ctx, req, w)
	r.c.Report(err)
	return err
}
func (r *reporting) ImportMemory(ctx context.Context, format string, rd io.Reader) (client.ImportReport, error) {
	v, err := r.s.ImportMemory(ctx, format, rd)
	r.c.Report(err)
	return v, err
}

func (r *reporting) Embedding(ctx context.Context) (client.EmbeddingStatus, error) {
	v, err := r.s.Embedding(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) EmbeddingModels(ctx context.Context) ([]client.EmbeddingModel, error) {
	v, err := r.s.EmbeddingModels(ctx)
	r.c.Report(err)
	return v, err
}
func (r *reporting) InstallModel(ctx context.Context, id string, progress func(client.ModelProgress)) (client.EmbeddingModel, error) {
	v, err := r.s.InstallModel(ctx, id, progress)
	r.c.Report(err)
	return v, err
}
func (r *reporting) ImportModel(ctx context.Context, id, dir string) (client.EmbeddingModel, error) {
	v, err := r.s.ImportModel(ctx, id, dir)
	r.c.Report(err)
	return v, err
}
func (r *reporting) UseModel(ctx context.Context, id string) (client.EmbeddingStatus, error) {
	v, err := r.s.UseModel(ctx, id)
	r.c.Report(err)
	return v, err
}
func (r *reporting) RemoveModel(ctx context.Context, id string) error {
	err := r.s.RemoveModel(ctx, id)
	r.c.Report(err)
	return err
}
func (r *reporting) RenameSession(ctx context.Context, id, title string) (client.Session, error) {
	v, err := r.s.RenameSession(ctx, id, title)
	r.c.Report(err)
	return v, err
}
func (r *reporting) DeleteSession(ctx context.Context, id string, forget bool) (client.SessionDeleted, error) {
	v, err := r.s.DeleteSession(ctx, id, forget)
	r.c.Report(err)
	return v, err
}

var _ client.Service = (*reporting)(nil)
