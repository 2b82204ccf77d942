package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// ServeUnix serves the API on a unix socket at path until ctx is done, then shuts down
// gracefully and removes the socket file. Requests over the socket need no token.
//
// The parent directory is created with mode 0700; an existing one must be owned by the process's
// uid, and its mode is tightened to 0700 when group or others have access. A stale socket is
// replaced, but a socket some process still answers on is an error. The socket is made 0600, and
// each connection's peer uid (SO_PEERCRED) must equal the process's: others are closed and logged.
func (s *Server) ServeUnix(ctx context.Context, path string) error {
	ln, err := s.ListenUnix(ctx, path)
	if err != nil {
		return err
	}
	return s.ServeUnixListener(ctx, ln)
}

// ListenUnix prepares and opens the socket of [Server.ServeUnix] without serving it yet, so a
// caller can report readiness only once connections are accepted. Serve the listener with
// [Server.ServeUnixListener].
func (s *Server) ListenUnix(ctx context.Context, path string) (net.Listener, error) {
	if s.isClosed() {
		return nil, http.ErrServerClosed
	}
	if err := s.prepareSocketDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := removeStaleSocket(ctx, path); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return &peerListener{Listener: ln, uid: s.peerUID, s: s}, nil
}

// ServeUnixListener serves a listener from [Server.ListenUnix] until ctx is done, then shuts down
// gracefully and removes the socket file.
func (s *Server) ServeUnixListener(ctx context.Context, ln net.Listener) error {
	path := ln.Addr().String()
	defer func() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("api: remove socket", "path", path, "err", err)
		}
	}()
	srv := s.newHTTPServer(transportUnix, "")
	s.log.Info("api: serving", "socket", path)
	return s.serve(ctx, srv, ln, false)
}

// prepareSocketDir creates dir 0700 when it is missing, or checks that an existing one is safe
// to serve from. It never changes an existing directory's mode: a root kernel given
// --socket /run/x.sock once made /run 0700 and broke the machine's other services. An existing
// directory must belong to us (or to root, for system dirs such as /run) and be writable by
// nobody else, unless it has the sticky bit (as /tmp): anyone else who could write there could
// replace the socket. Privacy comes from the socket's own 0600 and the peer-uid check.
func (s *Server) prepareSocketDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create socket dir %s: %w", dir, err)
		}
		if err := os.Chmod(dir, 0o700); err != nil { // the umask may have taken bits from ours
			return fmt.Errorf("create socket dir %s: %w", dir, err)
		}
		fi, err = os.Stat(dir)
	}
	if err != nil {
		return fmt.Errorf("socket dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket dir %s is not a directory", dir)
	}
	owner, err := fileOwner(fi)
	if err != nil {
		return fmt.Errorf("socket dir %s: %w", dir, err)
	}
	if owner != s.uid && owner != 0 {
		return fmt.Errorf("socket dir %s is owned by uid %d, not by us (uid %d): choose a socket in a directory of yours (--socket)", dir, owner, s.uid)
	}
	if perm := fi.Mode(); perm.Perm()&0o022 != 0 && perm&fs.ModeSticky == 0 {
		return fmt.Errorf("socket dir %s is writable by others (mode %04o) without the sticky bit: another user could replace the socket; "+
			"choose a socket in a private directory (--socket), e.g. under $XDG_RUNTIME_DIR", dir, perm.Perm())
	}
	return nil
}

// removeStaleSocket removes a socket nobody answers on. A live socket or a non-socket file is an
// error.
func removeStaleSocket(ctx context.Context, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	d := net.Dialer{Timeout: time.Second}
	if c, err := d.DialContext(ctx, "unix", path); err == nil {
		_ = c.Close()
		return fmt.Errorf("another process is serving on %s", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// peerListener accepts only connections whose peer has uid; others are closed and logged.
type peerListener struct {
	net.Listener
	uid int
	s   *Server
}

// Accept returns the next connection from a permitted peer.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		pid, err := checkPeer(c, l.uid)
		if err != nil {
			l.s.log.Warn("api: refused unix connection", "err", err)
			_ = c.Close()
			continue
		}
		return &peerConn{Conn: c, pid: pid}, nil
	}
}

// peerConn is an accepted unix connection with its peer's pid, which decides whether the
// peer may act as the owner ([Server.pluginPeer]).
type peerConn struct {
	net.Conn
	pid int
}

// checkPeer checks that the peer of a unix connection runs as uid and returns its pid.
func checkPeer(c net.Conn, uid int) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("not a unix connection: %T", c)
	}
	got, pid, err := peerCred(uc)
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if got != uid {
		return 0, fmt.Errorf("peer uid %d is not %d", got, uid)
	}
	return pid, nil
}

// ServeTCP serves the API on ln until ctx is done, then shuts down gracefully. ln is closed.
// Every route but GET /api/v1/health needs the bearer token of [Options.Token]; without a token
// ServeTCP refuses to start. With tlsConf the listener serves TLS. Without it, a non-loopback
// address is refused unless insecure is set (and then a warning is logged). On loopback
// connections the Host header must be localhost, a loopback IP or the listen address.
func (s *Server) ServeTCP(ctx context.Context, ln net.Listener, tlsConf *tls.Config, insecure bool) error {
	addr := ln.Addr().String()
	if s.token == "" {
		_ = ln.Close()
		return fmt.Errorf("refusing to serve on %s without a token", addr)
	}
	if tlsConf == nil && !isLoopback(addr) {
		if !insecure {
			_ = ln.Close()
			return fmt.Errorf("refusing plain HTTP on non-loopback address %s: give a certificate or --insecure", addr)
		}
		s.log.Warn("api: INSECURE: serving plain HTTP on a non-loopback address; the token and all traffic are readable on the network",
			"addr", addr)
	}
	srv := s.newHTTPServer(transportTCP, addr)
	if tlsConf != nil {
		srv.TLSConfig = tlsConf.Clone()
	}
	s.log.Info("api: serving", "addr", addr, "tls", tlsConf != nil)
	ln = &limitListener{Listener: ln, lim: newConnLimiter(s.maxUnauth, s.maxAuth)}
	return s.serve(ctx, srv, ln, tlsConf != nil)
}
