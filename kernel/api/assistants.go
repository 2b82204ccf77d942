package api

import (
	"fmt"
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// assistantRoutes serves the owner's assistants (chat presets) when the backend keeps them:
// GET/POST /api/v1/assistants, DELETE /api/v1/assistants/{id} and
// POST /api/v1/assistants/{id}/sessions (a new chat from a preset), and a session's tool filter,
// GET /api/v1/sessions/{id}/tools.
func (s *Server) assistantRoutes() {
	s.mux.HandleFunc("GET /api/v1/assistants", s.handleAssistants)
	s.mux.HandleFunc("POST /api/v1/assistants", s.handleSaveAssistant)
	s.mux.HandleFunc("DELETE /api/v1/assistants/{id}", s.handleRemoveAssistant)
	s.mux.HandleFunc("POST /api/v1/assistants/{id}/sessions", s.handleStartAssistant)
	s.mux.HandleFunc("GET /api/v1/sessions/{id}/tools", s.handleSessionTools)
}

// handleSessionTools answers GET /api/v1/sessions/{id}/tools: client.SessionTools.
func (s *Server) handleSessionTools(w http.ResponseWriter, r *http.Request) {
	as, ok := s.assistants(w, r)
	if !ok {
		return
	}
	out, err := as.SessionTools(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

var errNoAssistants = fmt.Errorf("%w: this kernel keeps no assistants", client.ErrUnavailable)

// assistants is the backend's AssistantService, or a 503 written.
func (s *Server) assistants(w http.ResponseWriter, r *http.Request) (client.AssistantService, bool) {
	as, ok := s.b.(client.AssistantService)
	if !ok {
		s.fail(w, r, errNoAssistants)
	}
	return as, ok
}

// handleAssistants answers GET /api/v1/assistants: {"assistants": […]} by name.
func (s *Server) handleAssistants(w http.ResponseWriter, r *http.Request) {
	as, ok := s.assistants(w, r)
	if !ok {
		return
	}
	out, err := as.Assistants(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]client.Assistant{"assistants": out})
}

// handleSaveAssistant answers POST /api/v1/assistants {"id"?, "name", "instructions", "model",
// "tools"} with the preset as saved.
func (s *Server) handleSaveAssistant(w http.ResponseWriter, r *http.Request) {
	as, ok := s.assistants(w, r)
	if !ok {
		return
	}
	var in client.Assistant
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	out, err := as.SaveAssistant(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRemoveAssistant answers DELETE /api/v1/assistants/{id} with 204.
func (s *Server) handleRemoveAssistant(w http.ResponseWriter, r *http.Request) {
	as, ok := s.assistants(w, r)
	if !ok {
		return
	}
	if err := as.RemoveAssistant(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleStartAssistant answers POST /api/v1/assistants/{id}/sessions {"title"?} with the new
// session (201).
func (s *Server) handleStartAssistant(w http.ResponseWriter, r *http.Request) {
	as, ok := s.assistants(w, r)
	if !ok {
		return
	}
	var in struct {
		Title string `json:"title"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{allowEmpty: true}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	out, err := as.StartAssistant(r.Context(), r.PathValue("id"), in.Title)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}
