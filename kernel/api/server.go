// Package api serves the kernel's HTTP API (docs/api.md): the versioned /api/v1 routes over a
// [client.Service], and the OpenAI-compatible /v1 routes over a [client.CompletionService].
//
// A [Server] is an http.Handler. It listens on a unix socket ([Server.ServeUnix]: 0600 socket in a
// 0700 directory, peer uid checked, no token) and optionally on TCP ([Server.ServeTCP]: bearer
// token on every route but health, TLS or loopback, Host checked on loopback). Requests carrying
// Origin or Referer are refused unless the origin is allowed.
//
// Lifecycle: [New], then any number of ServeUnix/ServeTCP calls (each blocks until its ctx is
// done), then [Server.Shutdown]. All methods are safe for concurrent use.
package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/security"
	"github.com/hologramagent/hologram/kernel/speech"
)

// Backend is what the API serves: the kernel's [client.Service] and its OpenAI-compatible
// [client.CompletionService].
type Backend interface {
	client.Service
	client.CompletionService
}

// DefaultMaxBodyBytes is the request body limit when [Options.MaxBodyBytes] is zero.
const DefaultMaxBodyBytes = 4 << 20

// Options configure a [Server]. The zero value is usable for unix sockets only.
type Options struct {
	// Logger receives request and connection logs; nil discards them.
	Logger *slog.Logger
	// Token is the bearer token TCP requests must carry. Empty: [Server.ServeTCP] refuses to start.
	Token string
	// MaxBodyBytes bounds request bodies (larger ones get 413); <= 0 means [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// AllowedOrigins are the origins (scheme://host[:port]) whose requests may carry Origin or
	// Referer; every other request carrying them is refused with 403.
	AllowedOrigins []string
	// Version fills the version of health and status answers when the backend leaves it empty.
	Version string
	// A2A, when set, is served on TCP at /.well-known/agent-card.json and /a2a (a2a.go).
	A2A A2A
	// Settings keeps the /v1 client tokens (v1tokens.go); nil: none can be added.
	Settings Settings
	// Web, when set, is the web UI served on TCP at / (web.go).
	Web Web
}

// Server serves the API. It is an http.Handler; create it with [New].
type Server struct {
	b       Backend
	log     *slog.Logger
	token   string
	maxBody int64
	origins map[string]bool
	version string
	mux     *http.ServeMux
	a2a     A2A
	web     Web
	speech  speech.Synth // POST /api/v1/speech (speech.go)

	// uid is the owner the socket directory must have; peerUID the uid a unix peer must have.
	// Both are the process's effective uid; tests change them.
	uid, peerUID int
	// pingEvery is the SSE keep-alive interval.
	pingEvery time.Duration
	// maxUnauth and maxAuth are the per-IP connection caps of TCP listeners (limit.go).
	maxUnauth, maxAuth int
	// testHookListening, when set, is called once a listener is ready.
	testHookListening func(addr string)

	creds credentials // the approval credentials of the owner's clients (approval.go)

	mu      sync.Mutex
	servers map[*http.Server]struct{}
	closed  bool
	// replay answers retried /v1 requests from their first attempt (replay.go).
	replay replayCache
	// v1turns are the /v1 turns waiting for their client's tool results (v1tools.go).
	v1turns v1Turns
	// tokens are the /v1 client tokens (v1tokens.go).
	tokens apiTokens
}

// New returns a Server for b. It does not listen; see [Server.ServeUnix] and [Server.ServeTCP].
func New(b Backend, opts Options) *Server {
	s := &Server{
		b:         b,
		log:       opts.Logger,
		token:     opts.Token,
		maxBody:   opts.MaxBodyBytes,
		origins:   make(map[string]bool),
		version:   opts.Version,
		mux:       http.NewServeMux(),
		a2a:       opts.A2A,
		web:       opts.Web,
		uid:       os.Geteuid(),
		peerUID:   os.Geteuid(),
		pingEvery: 15 * time.Second,
		maxUnauth: MaxUnauthConnsPerIP,
		maxAuth:   MaxAuthConnsPerIP,
		servers:   make(map[*http.Server]struct{}),
		tokens:    apiTokens{settings: opts.Settings},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	for _, o := range opts.AllowedOrigins {
		if n, ok := normalizeOrigin(o); ok {
			s.origins[n] = true
		}
	}
	s.routes()
	return s
}

// transport says how a connection reached the server; it is stored in the connection's context.
type transport int

const (
	transportTCP transport = iota
	transportUnix
)

type transportKey struct{}

// listenAddrKey holds the listener's address for the Host check.
type listenAddrKey struct{}

// peerPIDKey holds a unix connection's *peer.
type peerPIDKey struct{}

// peer is a unix connection's peer: its pid (SO_PEERCRED, fixed when it connected) and whether
// pluginPeer has let it through. That verdict cannot change for the connection's life: a process
// gains no new ancestors but its subreaper, and the kernel, a child subreaper, adopts only its
// own descendants, which are refused either way. So it is checked on a connection's first request,
// not on each (reading every ancestor's /proc entry cost ≈ 0.2 ms a request).
type peer struct {
	pid     int
	allowed atomic.Bool
}

// pluginPeer refuses a unix peer that is one of the kernel's plugins or a process one of them
// started (security.CheckPeer: the kernel is a child subreaper and starts nothing else), naming
// the plugin when it can. ARCHITECTURE.md §5: plugins are never the owner.
func (s *Server) pluginPeer(ctx context.Context, pid int) error {
	self := os.Getpid()
	if pid == self {
		return nil
	}
	plugins := map[int]string{}
	if ps, err := s.b.Plugins(ctx); err == nil {
		for _, p := range ps {
			if p.PID > 0 {
				plugins[p.PID] = p.Name
			}
		}
	}
	return security.CheckPeer(pid, self, plugins)
}

// ServeHTTP applies the security checks (Origin/Referer, Host, bearer token), then routes the
// request. Requests that did not arrive through [Server.ServeUnix] are treated as TCP requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	h := sw.Header()
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("api: handler panic", "method", r.Method, "path", r.URL.Path,
				"panic", v, "stack", string(debug.Stack()))
			if !sw.wrote {
				s.writeError(sw, r, http.StatusInternalServerError, "internal error")
			}
		}
		s.log.Debug("api: request", "method", r.Method, "path", r.URL.Path, "status", sw.status(),
			"duration", time.Since(start))
	}()

	if s.cors(sw, r) { // a preflight from an allowed origin (cors.go)
		return
	}
	if !s.originAllowed(r) && !s.webSameOrigin(r) {
		s.writeError(sw, r, http.StatusForbidden, "requests from browsers are refused (Origin or Referer not allowed)")
		return
	}
	if p, ok := r.Context().Value(peerPIDKey{}).(*peer); ok && !p.allowed.Load() {
		if err := s.pluginPeer(r.Context(), p.pid); err == nil {
			p.allowed.Store(true)
		} else {
			s.log.Warn("api: refused a plugin's request", "method", r.Method, "path", r.URL.Path, "err", err)
			s.writeError(sw, r, http.StatusForbidden, "plugins are never the owner: "+err.Error()+"; a plugin reaches the kernel only over its stdio, with the capabilities its manifest declares")
			return
		}
	}
	if tr, _ := r.Context().Value(transportKey{}).(transport); tr != transportUnix {
		rc := http.NewResponseController(w)
		// A refused request's connection is closed at once, its body unread: a client without
		// the token cannot hold a connection open by trickling a body.
		refuse := func() {
			sw.Header().Set("Connection", "close")
			_ = rc.SetReadDeadline(time.Now())
		}
		if !s.hostAllowed(r) {
			refuse()
			s.writeError(sw, r, http.StatusForbidden, "host "+quote(r.Host)+" is not allowed on a loopback listener")
			return
		}
		if s.a2a != nil && a2aPath(r.URL.Path) { // other agents: their own tokens (a2a.go)
			s.serveA2A(sw, r)
			return
		}
		if s.web != nil && s.web.Public(r) { // the web UI's page, assets and sign-in (web.go)
			s.web.ServeHTTP(sw, r)
			return
		}
		if !isHealth(r) {
			var ok bool
			if r, ok = s.authorized(sw, r); !ok {
				refuse()
				return
			}
			if lc := limitedFrom(r); lc != nil && !lc.lim.promote(lc) {
				refuse()
				s.writeError(sw, r, http.StatusServiceUnavailable, fmt.Sprintf("too many connections from %s (at most %d with the token)", lc.ip, lc.lim.maxAuth))
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = &idleBody{ReadCloser: r.Body, rc: rc}
			}
			defer rc.SetReadDeadline(time.Time{})
		}
	}
	s.route(sw, r)
}

// route dispatches to the mux, answering unknown paths and wrong methods with JSON errors.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The mux's own 404, 405 or redirect: record it, answer 404 and 405 as JSON.
	rec := &recorder{header: make(http.Header)}
	h.ServeHTTP(rec, r)
	switch rec.code {
	case http.StatusNotFound:
		s.writeError(w, r, http.StatusNotFound, "no route for "+r.Method+" "+clip(r.URL.Path))
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", rec.header.Get("Allow"))
		s.writeError(w, r, http.StatusMethodNotAllowed, "method "+clip(r.Method)+" not allowed on "+clip(r.URL.Path))
	default:
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.code)
		_, _ = w.Write(rec.body)
	}
}

func isHealth(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/api/v1/health"
}

// authorized checks the bearer token in constant time, answering 401 when it is missing or wrong.
// A /v1 client token (v1tokens.go) returns the request with its client; without a token, the web
// UI's same-origin requests carry its device session instead (web.go).
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	got, ok := bearer(r.Header.Get("Authorization"))
	if ok && s.token != "" && tokenEqual(got, s.token) {
		return r, true
	}
	if ok {
		if r, known, allowed := s.clientToken(w, r, got); known {
			return r, allowed
		}
	}
	w.Header().Set("Connection", "close") // before the answer: the caller's refuse() comes after it
	msg := "missing bearer token"
	if ok {
		msg = "invalid bearer token"
	} else {
		web, status, why := s.webAuthorized(r)
		if web {
			w.Header().Del("Connection")
			return r, true
		}
		if status == http.StatusForbidden {
			s.writeError(w, r, status, why)
			return r, false
		}
		if why != "" {
			msg = why
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="hologram"`)
	s.writeError(w, r, http.StatusUnauthorized, msg)
	return r, false
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// tokenEqual compares tokens in constant time, hashing first so lengths do not leak either.
func tokenEqual(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// originAllowed refuses requests carrying an Origin or Referer that is not configured.
func (s *Server) originAllowed(r *http.Request) bool {
	for _, name := range []string{"Origin", "Referer"} {
		vals, present := r.Header[name]
		if !present {
			continue
		}
		for _, v := range vals {
			n, ok := normalizeOrigin(v)
			if !ok || !s.origins[n] {
				return false
			}
		}
	}
	return true
}

// normalizeOrigin reduces an origin or a referring URL to lower-case scheme://host[:port].
func normalizeOrigin(v string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// hostAllowed is the DNS-rebinding defence: on a connection to a loopback address the Host must
// be localhost, a loopback IP (any port) or the listen address.
func (s *Server) hostAllowed(r *http.Request) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || !isLoopback(local.String()) {
		return true
	}
	if la, _ := r.Context().Value(listenAddrKey{}).(string); la != "" && strings.EqualFold(r.Host, la) {
		return true
	}
	return loopbackHost(r.Host)
}

// loopbackHost reports whether a Host header names localhost or a loopback IP.
func loopbackHost(host string) bool {
	if host == "" {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopback reports whether addr ("host:port" or a bare host) is a loopback address. Unspecified
// addresses (0.0.0.0, ::, empty host) are not: they listen on every interface.
func isLoopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// serve runs srv on ln until ctx is done, then shuts srv down gracefully (bounded by
// shutdownGrace, after which connections are closed).
func (s *Server) serve(ctx context.Context, srv *http.Server, ln net.Listener, tls bool) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return http.ErrServerClosed
	}
	s.servers[srv] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.servers, srv)
		s.mu.Unlock()
	}()

	errc := make(chan error, 1)
	go func() {
		if tls {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	if s.testHookListening != nil {
		s.testHookListening(ln.Addr().String())
	}
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}

// shutdownGrace bounds how long a ServeUnix/ServeTCP whose ctx is done waits for in-flight requests.
const shutdownGrace = 10 * time.Second

// newHTTPServer returns an http.Server for s whose connections carry tr and listenAddr.
func (s *Server) newHTTPServer(tr transport, listenAddr string) *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if pc, ok := c.(*peerConn); ok {
				ctx = context.WithValue(ctx, peerPIDKey{}, &peer{pid: pc.pid})
			}
			if lc := unwrapLimited(c); lc != nil {
				ctx = context.WithValue(ctx, limitedConnKey{}, lc)
			}
			ctx = context.WithValue(ctx, transportKey{}, tr)
			return context.WithValue(ctx, listenAddrKey{}, listenAddr)
		},
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Shutdown stops every listener of s and waits for in-flight requests (chat streams end when
// their turn ends). When ctx expires first, the remaining connections are closed, which cancels
// their turns, and ctx's error is returned. Serve calls after Shutdown fail.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	srvs := make([]*http.Server, 0, len(s.servers))
	for srv := range s.servers {
		srvs = append(srvs, srv)
	}
	s.mu.Unlock()

	var wg sync.WaitGroup
	errs := make([]error, len(srvs))
	for i, srv := range srvs {
		wg.Go(func() {
			if err := srv.Shutdown(ctx); err != nil {
				_ = srv.Close()
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("api shutdown: %w", err)
	}
	return nil
}

// statusWriter records whether and with which status a response was started.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.code, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if !w.wrote {
		return 0
	}
	return w.code
}

// recorder captures the mux's built-in answers (404, 405, redirects).
type recorder struct {
	header http.Header
	code   int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
