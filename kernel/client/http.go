package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultTimeout bounds every non-streaming call when [Options].Timeout is zero.
const DefaultTimeout = 30 * time.Second

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 1 << 20

// Options configures [Dial]. Exactly one of Socket and URL is set.
type Options struct {
	// Socket is the kernel's unix socket path (local mode).
	Socket string
	// URL is a remote kernel's base URL, e.g. https://host:7878 (remote mode).
	URL string
	// Token is the bearer token sent on every request (remote mode).
	Token string
	// Fingerprint pins the SHA-256 of the server's leaf certificate (hex; colons, case and a
	// "sha256:" prefix are accepted). With a pin the system roots are not consulted.
	Fingerprint string
	// Insecure allows plain http:// to a host that is not loopback.
	Insecure bool
	// Timeout bounds each non-streaming call; zero means [DefaultTimeout]. Chat streams have no
	// overall timeout: cancel their context instead.
	Timeout time.Duration
	// Client names this client to the kernel ("waiter", "hologram"; default: the program's
	// name), e.g. for the approval credential it holds.
	Client string
	// OnError, when set, is called (from the calling goroutine) with the error of every request
	// that fails: transport failures and the kernel's error answers. Cross-cutting behaviour
	// such as a connection banner belongs here, not in a wrapper of every method.
	OnError func(error)
}

// HTTP is the [Service] implementation that talks to a kernel over its HTTP API (docs/api.md),
// on a unix socket or over TCP. It is safe for concurrent use.
type HTTP struct {
	clientName string
	credMu     sync.Mutex
	cred       string // the approval credential, once asked for

	base    string // base URL without a trailing slash
	socket  string // set in local mode, for error messages
	token   string
	timeout time.Duration
	hc      *http.Client
	onError func(error)
}

// Dial validates opts and returns a client. It does no network I/O: an unreachable kernel shows up
// on the first call.
func Dial(opts Options) (*HTTP, error) {
	if (opts.Socket == "") == (opts.URL == "") {
		return nil, fmt.Errorf("dial: set exactly one of a socket path and a remote URL")
	}
	c := &HTTP{token: opts.Token, timeout: opts.Timeout, onError: opts.OnError, clientName: opts.Client}
	if c.clientName == "" {
		c.clientName = filepath.Base(os.Args[0])
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if strings.ContainsAny(opts.Token, "\r\n") {
		return nil, fmt.Errorf("dial: token contains a line break")
	}
	if opts.Socket != "" {
		if opts.Fingerprint != "" {
			return nil, fmt.Errorf("dial: a certificate fingerprint needs a remote https URL, not a socket")
		}
		socket := opts.Socket
		c.socket = socket
		c.base = "http://hologram"
		c.hc = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socket)
			},
			MaxIdleConns:    4,
			IdleConnTimeout: 90 * time.Second,
			// An upload asks first (Expect: 100-continue): one over the limit is refused
			// before its body is sent.
			ExpectContinueTimeout: 5 * time.Second,
		}}
		return c, nil
	}

	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("dial: parse remote URL: %w", err)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("dial: remote URL %q has no host", opts.URL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("dial: remote URL %q must be scheme://host:port with no user, query or fragment", opts.URL)
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		// An upload asks first (Expect: 100-continue): one over the limit is refused before
		// its body is sent.
		ExpectContinueTimeout: 5 * time.Second,
	}
	switch u.Scheme {
	case "http":
		if opts.Fingerprint != "" {
			return nil, fmt.Errorf("dial: a certificate fingerprint needs https, not %s", opts.URL)
		}
		if !opts.Insecure && !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("refusing plain HTTP to %s: use https or --insecure", u.Hostname())
		}
	case "https":
		if opts.Fingerprint != "" {
			pin, err := NormalizeFingerprint(opts.Fingerprint)
			if err != nil {
				return nil, fmt.Errorf("dial: %w", err)
			}
			tr.TLSClientConfig = pinnedTLS(pin)
		}
	default:
		return nil, fmt.Errorf("dial: remote URL %q: scheme must be https or http", opts.URL)
	}
	c.base = strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/")
	c.hc = &http.Client{Transport: tr}
	return c, nil
}

// pinnedTLS trusts exactly the leaf certificate whose SHA-256 is pin (normalized hex).
func pinnedTLS(pin string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is not verified against roots: the pin replaces that check.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("%w: server presented no certificate (pinned sha256:%s)", ErrFingerprint, pin)
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			got := hex.EncodeToString(sum[:])
			if got != pin {
				return fmt.Errorf("%w: server presented sha256:%s, pinned sha256:%s", ErrFingerprint, got, pin)
			}
			return nil
		},
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrFingerprint is wrapped by the errors of calls to a server whose TLS certificate does not
// match the pinned fingerprint (Options.Fingerprint).
var ErrFingerprint = errors.New("certificate fingerprint mismatch")

// NormalizeFingerprint turns a SHA-256 certificate fingerprint as people write it ("sha256:" prefix
// or not, colons or spaces between bytes, any case) into 64 lowercase hex digits.
func NormalizeFingerprint(s string) (string, error) {
	f := strings.TrimSpace(s)
	if len(f) >= 7 && strings.EqualFold(f[:7], "sha256:") {
		f = f[7:]
	}
	f = strings.ToLower(strings.NewReplacer(":", "", " ", "", "-", "").Replace(f))
	if len(f) != 2*sha256.Size {
		return "", fmt.Errorf("fingerprint %q: want %d hex digits of a SHA-256, got %d", s, 2*sha256.Size, len(f))
	}
	if _, err := hex.DecodeString(f); err != nil {
		return "", fmt.Errorf("fingerprint %q: not hex", s)
	}
	return f, nil
}

// ReadTokenFile reads an API token from path, trimming surrounding white space. An empty file is an
// error.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("token file %s holds more than one line", path)
	}
	return tok, nil
}

// Close releases idle connections. The client stays usable.
func (c *HTTP) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// unreachableError says no kernel answered; it matches ErrUnavailable and the network cause.
type unreachableError struct {
	msg   string
	cause error
}

func (e *unreachableError) Error() string   { return e.msg }
func (e *unreachableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// newRequest builds a request for path (which starts with /api/v1/) with an optional JSON body.
func (c *HTTP) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// send performs req, maps transport failures, and turns non-2xx answers into *Error. On success the
// caller owns resp.Body.
func (c *HTTP) send(req *http.Request) (*http.Response, error) {
	resp, err := c.roundTrip(req)
	if err != nil && c.onError != nil {
		c.onError(err)
	}
	return resp, err
}

// roundTrip is send without the error hook.
func (c *HTTP) roundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, ctxErr)
		}
		if c.socket != "" && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)) {
			return nil, &unreachableError{
				msg:   fmt.Sprintf("no kernel running at %s (start it with `homed`)", c.socket),
				cause: err,
			}
		}
		if c.socket == "" && errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &unreachableError{msg: fmt.Sprintf("no kernel answering at %s: connection refused", c.base), cause: err}
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, decodeError(resp)
}

// decodeError reads an error answer: {"error": {"status", "message"}} or, failing that, the body.
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var env struct {
		Error *Error `json:"error"`
	}
	e := &Error{Status: resp.StatusCode}
	if json.Unmarshal(b, &env) == nil && env.Error != nil && env.Error.Message != "" {
		e.Message = env.Error.Message
	} else if msg := strings.TrimSpace(string(b)); msg != "" && len(msg) < 512 {
		e.Message = msg
	} else {
		e.Message = strings.ToLower(http.StatusText(resp.StatusCode))
	}
	return e
}

// do runs one non-streaming call under the client's timeout, decoding a 2xx body into out (if not
// nil).
func (c *HTTP) do(ctx context.Context, method, path string, in, out any) error {
	return c.doHeader(ctx, method, path, nil, in, out)
}

// doHeader is do with extra request headers.
func (c *HTTP) doHeader(ctx context.Context, method, path string, hdr http.Header, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

// Health reports liveness and readiness (GET /api/v1/health).
func (c *HTTP) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.do(ctx, http.MethodGet, "/api/v1/health", nil, &h)
	return h, err
}

// Status reports the kernel's state (GET /api/v1/status).
func (c *HTTP) Status(ctx context.Context) (Status, error) {
	var s Status
	err := c.do(ctx, http.MethodGet, "/api/v1/status", nil, &s)
	return s, err
}

// Cancel cancels a running turn (POST /api/v1/turns/{id}/cancel); ErrNotFound when none runs.
func (c *HTTP) Cancel(ctx context.Context, turnID string) error {
	if turnID == "" {
		return fmt.Errorf("cancel: empty turn id: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodPost, "/api/v1/turns/"+url.PathEscape(turnID)+"/cancel", nil, nil)
}

// Sessions lists sessions (GET /api/v1/sessions).
func (c *HTTP) Sessions(ctx context.Context) ([]Session, error) {
	var out struct {
		Sessions []Session `json:"sessions"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/sessions", nil, &out)
	return out.Sessions, err
}

// newSession is the body of POST /api/v1/sessions: only the fields a caller may choose.
type newSession struct {
	ID           string `json:"id,omitempty"`
	Title        string `json:"title,omitempty"`
	SystemPrompt string `json:"system_prompt,omitempty"`
	Model        string `json:"model,omitempty"`
	Channel      string `json:"channel,omitempty"`
	Partner      string `json:"partner,omitempty"`
	Scope        string `json:"scope,omitempty"`
}

// CreateSession creates a session (POST /api/v1/sessions); an empty ID lets the kernel pick one.
func (c *HTTP) CreateSession(ctx context.Context, s Session) (Session, error) {
	var out Session
	err := c.do(ctx, http.MethodPost, "/api/v1/sessions",
		newSession{ID: s.ID, Title: s.Title, SystemPrompt: s.SystemPrompt, Model: s.Model,
			Channel: s.Channel, Partner: s.Partner, Scope: s.Scope}, &out)
	return out, err
}

// SetInstructions replaces a session's system prompt and model
// (PUT /api/v1/sessions/{id}/instructions).
func (c *HTTP) SetInstructions(ctx context.Context, sessionID string, in Instructions) (Session, error) {
	if sessionID == "" {
		return Session{}, fmt.Errorf("set instructions: empty session id: %w", ErrInvalid)
	}
	var out Session
	err := c.do(ctx, http.MethodPut, "/api/v1/sessions/"+url.PathEscape(sessionID)+"/instructions", in, &out)
	return out, err
}

// History returns the last limit messages of a session (GET /api/v1/sessions/{id}/history);
// limit <= 0 asks for all.
func (c *HTTP) History(ctx context.Context, sessionID string, limit int) ([]Message, error) {
	if sessionID == "" {
		return nil, fmt.Errorf("history: empty session id: %w", ErrInvalid)
	}
	path := "/api/v1/sessions/" + url.PathEscape(sessionID) + "/history"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var out struct {
		Messages []Message `json:"messages"`
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Messages, err
}

// Providers lists the configured providers (GET /api/v1/providers).
func (c *HTTP) Providers(ctx context.Context) ([]Provider, error) {
	var out struct {
		Providers []Provider `json:"providers"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/providers", nil, &out)
	return out.Providers, err
}

// AddProvider adds or replaces a provider (POST /api/v1/providers).
func (c *HTTP) AddProvider(ctx context.Context, p ProviderConfig) (Provider, error) {
	var out Provider
	err := c.do(ctx, http.MethodPost, "/api/v1/providers", p, &out)
	return out, err
}

// RemoveProvider deletes a provider (DELETE /api/v1/providers/{name}); ErrNotFound when unknown.
func (c *HTTP) RemoveProvider(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("remove provider: empty name: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/providers/"+url.PathEscape(name), nil, nil)
}

// Tools lists the tools the agent can call (GET /api/v1/tools).
func (c *HTTP) Tools(ctx context.Context) ([]Tool, error) {
	var out struct {
		Tools []Tool `json:"tools"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/tools", nil, &out)
	return out.Tools, err
}

var _ Service = (*HTTP)(nil)
