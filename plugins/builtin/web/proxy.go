package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"time"
)

// RefusedHeader marks an answer of the [Proxy] that refused a request, so web_browse can tell a
// refused navigation from a page that answered 403 itself.
const RefusedHeader = "X-Hologram-Web-Refused"

// Proxy is the HTTP proxy the headless browser must use: every request it makes, plain HTTP
// or a CONNECT tunnel (HTTPS, WebSocket), is dialed through the [Guard], so the browser reaches
// nothing the guard refuses, redirects included (each is a new request), and it never resolves
// names itself (no DNS rebinding). It listens on a loopback port for one browse and records
// what it refused. Safe for concurrent use.
type Proxy struct {
	guard *Guard
	log   *slog.Logger
	ln    net.Listener
	srv   *http.Server
	rp    *httputil.ReverseProxy
	tr    *http.Transport
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	refused []string
	tunnels sync.WaitGroup
	conns   map[net.Conn]struct{}
	closed  bool
}

// StartProxy listens on 127.0.0.1 (a free port) and serves until Close.
func StartProxy(g *Guard, log *slog.Logger) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy for the browser: %w", err)
	}
	p := &Proxy{guard: g, log: log, ln: ln, dial: g.DialContext(10 * time.Second), conns: map[net.Conn]struct{}{}}
	tr := &http.Transport{Proxy: nil, DialContext: p.dial, ForceAttemptHTTP2: false, MaxIdleConns: 8,
		IdleConnTimeout: 10 * time.Second, ResponseHeaderTimeout: time.Minute}
	p.tr = tr
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL // a proxy request's URL is absolute
			pr.Out.Host = pr.In.Host
		},
		Transport:    tr,
		ErrorHandler: p.upstreamError,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go p.srv.Serve(ln) // owned by the Proxy: ends at Close
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Refused returns what the proxy refused so far, in order.
func (p *Proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}

// Close stops the proxy and ends its tunnels.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.tunnels.Wait()
	p.tr.CloseIdleConnections()
	return err
}

// refuse records a refusal.
func (p *Proxy) refuse(what string, err error) string {
	msg := fmt.Sprintf("%s: %v", what, err)
	p.mu.Lock()
	p.refused = append(p.refused, msg)
	p.mu.Unlock()
	p.log.Info("browser request refused", "request", what, "err", err)
	return msg
}

// ServeHTTP proxies one request of the browser.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "only proxy requests for http:// URLs", http.StatusBadRequest)
		return
	}
	if err := p.guard.PreCheck(r.URL.Hostname(), port(r.URL)); err != nil {
		p.refused403(w, r.Method+" "+r.URL.Redacted(), err)
		return
	}
	p.rp.ServeHTTP(w, r)
}

// refused403 answers a refused request.
func (p *Proxy) refused403(w http.ResponseWriter, what string, err error) {
	msg := p.refuse(what, err)
	w.Header().Set(RefusedHeader, "1")
	http.Error(w, "HologramAgent web: "+msg, http.StatusForbidden)
}

// upstreamError answers a request that could not be forwarded: 403 when the guard refused it,
// 502 otherwise.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var refused *RefusedError
	if errors.As(err, &refused) {
		p.refused403(w, r.Method+" "+r.URL.Redacted(), refused)
		return
	}
	p.log.Debug("browser request failed", "url", r.URL.Redacted(), "err", err)
	http.Error(w, "HologramAgent web: "+err.Error(), http.StatusBadGateway)
}

// connect opens a tunnel (HTTPS, WebSocket) to a guarded connection.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, portStr, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	what := "CONNECT " + r.Host
	pn, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || pn == 0 {
		http.Error(w, "CONNECT needs a port from 1 to 65535", http.StatusBadRequest)
		return
	}
	if err := p.guard.PreCheck(host, uint16(pn)); err != nil {
		p.refused403(w, what, err)
		return
	}
	up, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			p.refused403(w, what, refused)
			return
		}
		http.Error(w, "HologramAgent web: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "no tunnel support", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		p.untrack(up, down)
		return
	}
	p.tunnels.Add(1)
	go func() { // owned by the Proxy: Close ends the connections
		defer p.tunnels.Done()
		done := make(chan struct{}, 2)
		go func() {
			if n := buf.Reader.Buffered(); n > 0 {
				b, _ := buf.Reader.Peek(n)
				up.Write(b)
			}
			io.Copy(up, down)
			done <- struct{}{}
		}()
		go func() { io.Copy(down, up); done <- struct{}{} }()
		<-done
		p.untrack(up, down) // ends the other direction
		<-done
	}()
}

// track registers a tunnel's connections (false, and both closed, once the proxy is closed).
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

// untrack closes and forgets a tunnel's connections.
func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}
