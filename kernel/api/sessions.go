package api

import (
	"net/http"
	"strconv"
	"strings"
)

// handleRenameSession is PATCH /api/v1/sessions/{id}: {"title": "…"} renames the session.
func (s *Server) handleRenameSession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title *string `json:"title"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Title == nil {
		s.writeError(w, r, http.StatusBadRequest, `nothing to change: send {"title": "…"}`)
		return
	}
	out, err := s.b.RenameSession(r.Context(), r.PathValue("id"), *in.Title)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleDeleteSession is DELETE /api/v1/sessions/{id}[?forget=true]: the session leaves the
// list; its memory is kept unless forget.
func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	forget := false
	if v, ok := r.URL.Query()["forget"]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v[0]))
		if err != nil || len(v) > 1 {
			s.writeError(w, r, http.StatusBadRequest, "forget must be true or false, got "+quote(strings.Join(v, ",")))
			return
		}
		forget = b
	}
	out, err := s.b.DeleteSession(r.Context(), r.PathValue("id"), forget)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
