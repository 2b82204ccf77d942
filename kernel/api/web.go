package api

import (
	"errors"
	"net/http"
	"strings"
)

// Web is the web UI (kernel/webui) the TCP listener serves at / (docs/web.md): its page and
// assets, its sign-in at /api/v1/web/session, and its device sessions, whose cookie makes a
// same-origin request the owner's.
type Web interface {
	// ServeHTTP serves the page, its assets and the /api/v1/web routes.
	http.Handler
	// Authorize returns nil when r carries a live device session (and, on writes, its CSRF
	// token); ErrNoWebSession (errors.Is) when it carries no session cookie at all.
	Authorize(r *http.Request) error
	// Public reports whether r is for a web UI path that needs no token (the page, its assets,
	// sign-in).
	Public(r *http.Request) bool
	// NoSession is the error Authorize returns for a request without a session cookie.
	NoSession() error
}

// webSameOrigin reports whether every Origin and Referer of a TCP request is the listener's own
// origin (scheme://Host of the request): the web UI's page calling the API.
func (s *Server) webSameOrigin(r *http.Request) bool {
	if s.web == nil || r.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	own := strings.ToLower(scheme + "://" + r.Host)
	seen := false
	for _, name := range []string{"Origin", "Referer"} {
		for _, v := range r.Header.Values(name) {
			n, ok := normalizeOrigin(v)
			if !ok || n != own {
				return false
			}
			seen = true
		}
	}
	return seen
}

// webAuthorized reports whether a TCP request without a bearer token carries a live web device
// session; msg says why not when it carries a cookie that does not sign in, and status is the
// answer's (401, or 403 for a write without the CSRF token: an error with HTTPStatus() int).
func (s *Server) webAuthorized(r *http.Request) (ok bool, status int, msg string) {
	if s.web == nil {
		return false, 0, ""
	}
	err := s.web.Authorize(r)
	if err == nil {
		return true, 0, ""
	}
	if errors.Is(err, s.web.NoSession()) {
		return false, 0, ""
	}
	var se interface{ HTTPStatus() int }
	if errors.As(err, &se) {
		return false, se.HTTPStatus(), err.Error()
	}
	return false, http.StatusUnauthorized, err.Error()
}

func (s *Server) webRoutes() {
	if s.web != nil {
		s.mux.Handle("/api/v1/web/", s.web)
	}
}
