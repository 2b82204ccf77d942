package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// handlePlugins answers GET /api/v1/plugins.
func (s *Server) handlePlugins(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	ps, err := s.b.Plugins(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []client.Plugin{}
	}
	for i := range ps {
		if ps[i].Tools == nil {
			ps[i].Tools = []string{}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Plugins []client.Plugin `json:"plugins"`
	}{ps})
}

// handleAddPlugin answers POST /api/v1/plugins with the added plugin (201).
func (s *Server) handleAddPlugin(w http.ResponseWriter, r *http.Request) {
	var in client.PluginConfig
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	switch {
	case strings.TrimSpace(in.Name) == "":
		s.writeError(w, r, http.StatusBadRequest, "plugin name is empty")
		return
	case len(in.Command) == 0 && in.Dir == "":
		s.writeError(w, r, http.StatusBadRequest, "plugin "+quote(in.Name)+": give a command (an MCP stdio server) or a dir (a native plugin)")
		return
	case len(in.Command) > 0 && in.Dir != "":
		s.writeError(w, r, http.StatusBadRequest, "plugin "+quote(in.Name)+": give a command or a dir, not both")
		return
	}
	out, err := s.b.AddPlugin(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if out.Tools == nil {
		out.Tools = []string{}
	}
	writeJSON(w, http.StatusCreated, out)
}

// handlePluginAction answers POST /api/v1/plugins/{name}/{action}.
func (s *Server) handlePluginAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	switch action {
	case client.PluginRestart, client.PluginEnable, client.PluginDisable, client.PluginRemove:
	default:
		s.writeError(w, r, http.StatusNotFound, "unknown plugin action "+quote(action)+" (restart, enable, disable, remove)")
		return
	}
	if r.ContentLength > 0 {
		s.writeError(w, r, http.StatusBadRequest, "plugin "+action+" takes no body")
		return
	}
	out, err := s.b.PluginAction(r.Context(), r.PathValue("name"), action)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if out.Tools == nil {
		out.Tools = []string{}
	}
	writeJSON(w, http.StatusOK, out)
}

// handlePluginLogs answers GET /api/v1/plugins/{name}/logs?n=N.
func (s *Server) handlePluginLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "n"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	n := 0
	if q.Has("n") {
		v, err := strconv.Atoi(strings.TrimSpace(q.Get("n")))
		if err != nil || v < 0 {
			s.writeError(w, r, http.StatusBadRequest, "n must be an integer >= 0, got "+quote(q.Get("n")))
			return
		}
		n = v
	}
	lines, err := s.b.PluginLogs(r.Context(), r.PathValue("name"), n)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if lines == nil {
		lines = []client.LogLine{}
	}
	writeJSON(w, http.StatusOK, struct {
		Lines []client.LogLine `json:"lines"`
	}{lines})
}
