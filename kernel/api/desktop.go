package api

import (
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// pauseRequest is the body of POST /api/v1/pause. Paused is a pointer so that a missing field
// is an error, not a resume.
type pauseRequest struct {
	Paused *bool `json:"paused"`
}

// handlePause answers POST /api/v1/pause {"paused": bool} with 204.
func (s *Server) handlePause(w http.ResponseWriter, r *http.Request) {
	var in pauseRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Paused == nil {
		s.writeError(w, r, http.StatusBadRequest, `field "paused" (true or false) is required`)
		return
	}
	if err := s.b.SetPaused(r.Context(), *in.Paused); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleTestProvider answers POST /api/v1/providers/test with a client.ProviderCheck.
func (s *Server) handleTestProvider(w http.ResponseWriter, r *http.Request) {
	in, ok := s.decodeProvider(w, r)
	if !ok {
		return
	}
	out, err := s.b.TestProvider(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleDetectProviders answers GET /api/v1/providers/detect with {"providers": [...]}.
func (s *Server) handleDetectProviders(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	ps, err := s.b.DetectProviders(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []client.ProviderConfig{}
	}
	writeJSON(w, http.StatusOK, struct {
		Providers []client.ProviderConfig `json:"providers"`
	}{ps})
}
