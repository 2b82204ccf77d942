package api

import (
	"container/list"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of the TCP listener, which anyone who can reach the port may open connections to.
const (
	// MaxUnauthConnsPerIP bounds the connections of one IP (loopback included) on which no
	// request has yet carried the token. When a new one would pass it, the oldest of them is
	// closed: a flood of slow connections only ever holds this many, and a client that sends
	// its request at once is still served.
	MaxUnauthConnsPerIP = 64
	// MaxAuthConnsPerIP bounds one IP's connections that carried the token; past it a request
	// gets 503 and its connection is closed.
	MaxAuthConnsPerIP = 256
	// maxHeaderBytes bounds a request's header block (net/http's default is 1 MiB).
	maxHeaderBytes = 64 << 10
	// bodyIdle is how long an authenticated request's body may go without a byte arriving.
	bodyIdle = 30 * time.Second
	// maxEcho is the most bytes of the caller's own input an error message repeats.
	maxEcho = 200
)

// connLimiter keeps the per-IP connection counts of one TCP listener.
type connLimiter struct {
	maxUnauth, maxAuth int
	mu                 sync.Mutex
	ips                map[string]*ipConns
}

type ipConns struct {
	unauth *list.List // of *limitedConn, oldest first
	auth   int
}

func newConnLimiter(maxUnauth, maxAuth int) *connLimiter {
	return &connLimiter{maxUnauth: maxUnauth, maxAuth: maxAuth, ips: map[string]*ipConns{}}
}

// limitedConn is a TCP connection counted by a connLimiter.
type limitedConn struct {
	net.Conn
	lim    *connLimiter
	ip     string
	elem   *list.Element // in the unauth list while not authenticated; guarded by lim.mu
	authed bool          // guarded by lim.mu
	closed bool          // guarded by lim.mu
}

// admit counts c as unauthenticated, closing the IP's oldest unauthenticated connection when
// the cap is reached.
func (l *connLimiter) admit(c *limitedConn) {
	l.mu.Lock()
	ic := l.ips[c.ip]
	if ic == nil {
		ic = &ipConns{unauth: list.New()}
		l.ips[c.ip] = ic
	}
	var evict *limitedConn
	if ic.unauth.Len() >= l.maxUnauth {
		evict = ic.unauth.Remove(ic.unauth.Front()).(*limitedConn)
		evict.elem = nil
		evict.closed = true
	}
	c.elem = ic.unauth.PushBack(c)
	l.mu.Unlock()
	if evict != nil {
		_ = evict.Conn.Close()
	}
}

// promote moves c to the authenticated count; false when the IP has too many authenticated
// connections already (c stays unauthenticated).
func (l *connLimiter) promote(c *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.authed || c.closed {
		return c.authed
	}
	ic := l.ips[c.ip]
	if ic.auth >= l.maxAuth {
		return false
	}
	if c.elem != nil {
		ic.unauth.Remove(c.elem)
		c.elem = nil
	}
	ic.auth++
	c.authed = true
	return true
}

// Close uncounts the connection and closes it.
func (c *limitedConn) Close() error {
	l := c.lim
	l.mu.Lock()
	if !c.closed {
		c.closed = true
		ic := l.ips[c.ip]
		if c.elem != nil {
			ic.unauth.Remove(c.elem)
			c.elem = nil
		}
		if c.authed {
			ic.auth--
		}
		if ic.auth == 0 && ic.unauth.Len() == 0 {
			delete(l.ips, c.ip)
		}
	}
	l.mu.Unlock()
	return c.Conn.Close()
}

// limitListener counts every accepted connection in its limiter.
type limitListener struct {
	net.Listener
	lim *connLimiter
}

func (ln *limitListener) Accept() (net.Conn, error) {
	c, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ip := c.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(ip); err == nil {
		ip = h
	}
	lc := &limitedConn{Conn: c, lim: ln.lim, ip: ip}
	ln.lim.admit(lc)
	return lc, nil
}

type limitedConnKey struct{}

// limitedFrom returns the counted connection a request arrived on, if any.
func limitedFrom(r *http.Request) *limitedConn {
	c, _ := r.Context().Value(limitedConnKey{}).(*limitedConn)
	return c
}

// unwrapLimited finds the limitedConn under a connection net/http hands to ConnContext.
func unwrapLimited(c net.Conn) *limitedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*limitedConn)
	return lc
}

// idleBody is a request body whose connection must deliver a byte at least every bodyIdle: a
// body that trickles slower ends the request (the read fails) instead of holding it forever.
// At the end of the body the deadline is lifted, so that net/http's background read (which
// notices a client going away during a long answer, e.g. a chat stream) never times out.
type idleBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if !b.done {
		_ = b.rc.SetReadDeadline(time.Now().Add(bodyIdle))
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// clip returns s cut to maxEcho bytes (on a rune boundary), saying how long it was: for error
// messages that repeat what the caller sent.
func clip(s string) string { return cut(s, maxEcho) }

// cut returns s cut to at most n bytes on a rune boundary, followed by its full length.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// maxErrorBytes bounds a whole error message, whatever it quotes.
const maxErrorBytes = 2048

// clipEchoes bounds what an error message repeats of the caller's input: every double-quoted
// or backquoted segment (Go's %q, JSON's unknown field names, the kernel's quoted ids and the
// commands it suggests) keeps at most maxEcho bytes, and the whole message at most
// maxErrorBytes. A 100 KB session id is no longer sent back.
func clipEchoes(msg string) string {
	if len(msg) <= maxEcho {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.IndexAny(msg, "\"`")
		if i < 0 {
			b.WriteString(msg)
			break
		}
		q := msg[i]
		b.WriteString(msg[:i+1])
		msg = msg[i+1:]
		end := closingQuote(msg, q)
		if end < 0 { // unterminated: the rest is one echo
			b.WriteString(clip(msg))
			break
		}
		b.WriteString(clip(msg[:end]))
		b.WriteByte(q)
		msg = msg[end+1:]
	}
	return cut(b.String(), maxErrorBytes)
}

// closingQuote returns the index in s of the quote q that closes a segment ('"' may be
// backslash-escaped inside), or -1.
func closingQuote(s string, q byte) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q == '"':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}
