package api

import (
	"fmt"
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// pluginSettingsRoutes serves the built-in plugins' settings when the backend has them.
func (s *Server) pluginSettingsRoutes() {
	s.mux.HandleFunc("GET /api/v1/plugins/{name}/settings", s.handlePluginSettings)
	s.mux.HandleFunc("PUT /api/v1/plugins/{name}/settings", s.handleSetPluginSettings)
}

var errNoPluginSettings = fmt.Errorf("%w: this kernel has no plugin settings", client.ErrUnavailable)

// handlePluginSettings answers GET /api/v1/plugins/{name}/settings.
func (s *Server) handlePluginSettings(w http.ResponseWriter, r *http.Request) {
	ps, ok := s.b.(client.PluginSettingsService)
	if !ok {
		s.fail(w, r, errNoPluginSettings)
		return
	}
	out, err := ps.PluginSettings(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleSetPluginSettings answers PUT /api/v1/plugins/{name}/settings with the settings as
// written.
func (s *Server) handleSetPluginSettings(w http.ResponseWriter, r *http.Request) {
	ps, ok := s.b.(client.PluginSettingsService)
	if !ok {
		s.fail(w, r, errNoPluginSettings)
		return
	}
	var in client.SetPluginSettingsRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Values == nil {
		s.writeError(w, r, http.StatusBadRequest, `give the settings as {"values": {...}} ({} for the plugin's defaults)`)
		return
	}
	out, err := ps.SetPluginSettings(r.Context(), r.PathValue("name"), in.Values)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
