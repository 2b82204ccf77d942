package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// branchRoutes registers the branch routes: POST /api/v1/sessions/{id}/branch; paged history is
// GET /api/v1/sessions/{id}/history with before= or page=1 (handleHistory).
func (s *Server) branchRoutes() {
	s.mux.HandleFunc("POST /api/v1/sessions/{id}/branch", s.handleSwitchBranch)
	s.mux.HandleFunc("GET /api/v1/prompt", s.handleBasePrompt)
	s.mux.HandleFunc("PUT /api/v1/prompt", s.handleSetBasePrompt)
}

// handleBasePrompt answers GET /api/v1/prompt: the base system prompt.
func (s *Server) handleBasePrompt(w http.ResponseWriter, r *http.Request) {
	p, err := s.b.BasePrompt(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// handleSetBasePrompt answers PUT /api/v1/prompt {"template", "default", "owner"}.
func (s *Server) handleSetBasePrompt(w http.ResponseWriter, r *http.Request) {
	var in client.BasePrompt
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Preview != "" {
		s.writeError(w, r, http.StatusBadRequest, "preview is read only")
		return
	}
	p, err := s.b.SetBasePrompt(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// handleHistoryPage answers GET /api/v1/sessions/{id}/history?page=1&before=ID&limit=N: one page
// of the session's current branch ({"messages": […], "more": bool}).
func (s *Server) handleHistoryPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "page", "before", "limit"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	hq := client.HistoryQuery{Session: r.PathValue("id")}
	for _, p := range []struct {
		name string
		set  func(int64)
	}{
		{"before", func(v int64) { hq.Before = v }},
		{"limit", func(v int64) { hq.Limit = int(v) }},
	} {
		vs, ok := q[p.name]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
		if err != nil || n < 0 || len(vs) > 1 || (p.name == "limit" && n > client.MaxHistoryPage) {
			msg := p.name + " must be one integer >= 0"
			if p.name == "limit" {
				msg += " and <= " + strconv.Itoa(client.MaxHistoryPage)
			}
			s.writeError(w, r, http.StatusBadRequest, msg+", got "+quote(strings.Join(vs, ",")))
			return
		}
		p.set(n)
	}
	page, err := s.b.HistoryPage(r.Context(), hq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if page.Messages == nil {
		page.Messages = []client.Message{}
	}
	writeJSON(w, http.StatusOK, page)
}

// handleSwitchBranch answers POST /api/v1/sessions/{id}/branch {"message": ID}: the branch
// through that message becomes current (204).
func (s *Server) handleSwitchBranch(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Message int64 `json:"message"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Message <= 0 {
		s.writeError(w, r, http.StatusBadRequest, "message must be a message id (> 0)")
		return
	}
	if err := s.b.SwitchBranch(r.Context(), r.PathValue("id"), in.Message); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
