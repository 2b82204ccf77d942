package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// A2A is the A2A 1.0 server (kernel/a2a) the TCP listener serves at /.well-known/agent-card.json
// and /a2a, and whose peers the owner manages at /api/v1/a2a/peers.
type A2A interface {
	http.Handler
	client.A2AService
}

// a2aPath reports whether a request is for the A2A server rather than the owner's API.
func a2aPath(p string) bool {
	return p == "/.well-known/agent-card.json" || p == "/a2a" || strings.HasPrefix(p, "/a2a/")
}

// serveA2A hands a TCP request to the A2A server, which checks the peer's token itself. The
// owner's token is refused: the owner's authority never travels to another agent.
func (s *Server) serveA2A(w http.ResponseWriter, r *http.Request) {
	if got, ok := bearer(r.Header.Get("Authorization")); ok && s.token != "" && tokenEqual(got, s.token) {
		s.writeError(w, r, http.StatusForbidden, "the owner's API token is not accepted on A2A: give each agent its own token with `waiter a2a peer add NAME`")
		return
	}
	s.a2a.ServeHTTP(flushWriter{w}, r)
}

// flushWriter lets the A2A server's SSE writer flush through the server's response wrapper.
type flushWriter struct{ http.ResponseWriter }

func (w flushWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (s *Server) a2aRoutes() {
	s.mux.HandleFunc("GET /api/v1/a2a/peers", s.handleA2APeers)
	s.mux.HandleFunc("POST /api/v1/a2a/peers", s.handleAddA2APeer)
	s.mux.HandleFunc("DELETE /api/v1/a2a/peers/{name}", s.handleRemoveA2APeer)
}

var errA2AOff = fmt.Errorf("%w: A2A is off: it is served on the TCP listener (--listen) unless the config says [a2a] enabled = false", client.ErrUnavailable)

func (s *Server) handleA2APeers(w http.ResponseWriter, r *http.Request) {
	if s.a2a == nil {
		s.fail(w, r, errA2AOff)
		return
	}
	ps, err := s.a2a.A2APeers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []client.A2APeer{}
	}
	writeJSON(w, http.StatusOK, struct {
		Peers []client.A2APeer `json:"peers"`
	}{ps})
}

func (s *Server) handleAddA2APeer(w http.ResponseWriter, r *http.Request) {
	if s.a2a == nil {
		s.fail(w, r, errA2AOff)
		return
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	p, err := s.a2a.AddA2APeer(r.Context(), in.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, p)
}

func (s *Server) handleRemoveA2APeer(w http.ResponseWriter, r *http.Request) {
	if s.a2a == nil {
		s.fail(w, r, errA2AOff)
		return
	}
	if err := s.a2a.RemoveA2APeer(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
