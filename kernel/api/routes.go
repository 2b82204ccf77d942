package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// routes registers every route of docs/api.md.
func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /api/v1/health", s.handleHealth)
	m.HandleFunc("GET /api/v1/status", s.handleStatus)
	m.HandleFunc("POST /api/v1/chat", s.handleChat)
	m.HandleFunc("POST /api/v1/turns/{id}/cancel", s.handleCancel)
	m.HandleFunc("POST /api/v1/turns/{id}/tools/{call}", s.handleAnswerToolCall) // clienttools.go
	m.HandleFunc("GET /api/v1/sessions", s.handleSessions)
	m.HandleFunc("POST /api/v1/sessions", s.handleCreateSession)
	m.HandleFunc("PATCH /api/v1/sessions/{id}", s.handleRenameSession)
	m.HandleFunc("DELETE /api/v1/sessions/{id}", s.handleDeleteSession)
	m.HandleFunc("PUT /api/v1/sessions/{id}/instructions", s.handleInstructions)
	m.HandleFunc("GET /api/v1/sessions/{id}/history", s.handleHistory)
	m.HandleFunc("GET /api/v1/providers", s.handleProviders)
	m.HandleFunc("POST /api/v1/providers", s.handleAddProvider)
	m.HandleFunc("DELETE /api/v1/providers/{name}", s.handleRemoveProvider)
	m.HandleFunc("POST /api/v1/providers/test", s.handleTestProvider)
	m.HandleFunc("GET /api/v1/providers/detect", s.handleDetectProviders)
	m.HandleFunc("POST /api/v1/pause", s.handlePause)
	m.HandleFunc("GET /api/v1/tools", s.handleTools)
	m.HandleFunc("GET /api/v1/window", s.handleWindow)
	m.HandleFunc("GET /api/v1/memory/search", s.handleSearchMemory)
	m.HandleFunc("GET /api/v1/memory/graph", s.handleGraph)
	m.HandleFunc("GET /api/v1/memory/starmap", s.handleStarMap) // starmap.go
	m.HandleFunc("GET /api/v1/memory/entities/{id}", s.handleEntity)
	m.HandleFunc("GET /api/v1/memory/events/{id}", s.handleEventContext)
	m.HandleFunc("GET /api/v1/memory/blocks/{id}/thumbnail", s.handleThumbnail) // graph.go
	m.HandleFunc("POST /api/v1/memory/entities", s.handleCreateEntity)
	m.HandleFunc("PUT /api/v1/memory/entities/{id}", s.handlePutEntity)
	m.HandleFunc("DELETE /api/v1/memory/entities/{id}", s.handleDeleteEntity)
	m.HandleFunc("POST /api/v1/memory/entities/{id}/merge", s.handleMergeEntities)
	m.HandleFunc("POST /api/v1/memory/triples", s.handleAddTriple)
	m.HandleFunc("PUT /api/v1/memory/triples/{id}", s.handleEditTriple)
	m.HandleFunc("POST /api/v1/memory/pin", s.handlePin)
	m.HandleFunc("POST /api/v1/memory/forget", s.handleForget)
	m.HandleFunc("GET /api/v1/memory/scenes", s.handleScenes)
	m.HandleFunc("POST /api/v1/memory/gc", s.handleMemoryGC)
	m.HandleFunc("POST /api/v1/memory/cool-all", s.handleCoolAll)
	m.HandleFunc("GET /api/v1/memory/export", s.handleExport)
	m.HandleFunc("POST /api/v1/memory/import", s.handleImport)
	m.HandleFunc("GET /api/v1/plugins", s.handlePlugins)
	m.HandleFunc("POST /api/v1/plugins", s.handleAddPlugin)
	m.HandleFunc("POST /api/v1/plugins/{name}/{action}", s.handlePluginAction)
	m.HandleFunc("GET /api/v1/plugins/{name}/logs", s.handlePluginLogs)
	m.HandleFunc("GET /api/v1/embedding", s.handleEmbedding)
	m.HandleFunc("GET /api/v1/embedding/models", s.handleEmbeddingModels)
	m.HandleFunc("POST /api/v1/embedding/models/{id}/install", s.handleInstallModel)
	m.HandleFunc("POST /api/v1/embedding/models/{id}/import", s.handleImportModel)
	m.HandleFunc("POST /api/v1/embedding/models/{id}/use", s.handleUseModelID)
	m.HandleFunc("DELETE /api/v1/embedding/models/{id}", s.handleRemoveModel)
	m.HandleFunc("POST /api/v1/embedding/use", s.handleUseModel)
	s.assistantRoutes()
	s.approvalRoutes() // GET /api/v1/approvals, POST /api/v1/approvals/{id}
	s.a2aRoutes()      // GET, POST /api/v1/a2a/peers, DELETE /api/v1/a2a/peers/{name}
	s.branchRoutes()   // POST /api/v1/sessions/{id}/branch, GET/PUT /api/v1/prompt
	s.pluginSettingsRoutes()
	s.tokenRoutes()  // GET, POST /api/v1/tokens, DELETE /api/v1/tokens/{name} (v1tokens.go)
	s.webRoutes()    // /api/v1/web/… when the web UI is on (web.go)
	s.speechRoutes() // POST /api/v1/speech (speech.go)
	s.uploadRoutes() // POST /api/v1/uploads (uploads.go)
	m.HandleFunc("GET /v1/models", s.handleModels)
	m.HandleFunc("GET /v1/models/{id...}", s.handleModel)
	m.HandleFunc("POST /v1/chat/completions", s.handleCompletions)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h, err := s.b.Health(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if h.Version == "" {
		h.Version = s.version
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.b.Status(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if st.Version == "" {
		st.Version = s.version
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if err := s.b.Cancel(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	ss, err := s.b.Sessions(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ss == nil {
		ss = []client.Session{}
	}
	writeJSON(w, http.StatusOK, struct {
		Sessions []client.Session `json:"sessions"`
	}{ss})
}

func (s *Server) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	var in client.Session
	if err := s.decodeJSON(w, r, &in, decodeOptions{allowEmpty: true}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Scope != "" && client.CheckScope(in.Scope) != nil {
		s.writeError(w, r, http.StatusBadRequest, "scope must be private, public or group:<id>, got "+quote(in.Scope))
		return
	}
	out, err := s.b.CreateSession(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleInstructions(w http.ResponseWriter, r *http.Request) {
	var in client.Instructions
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	out, err := s.b.SetInstructions(r.Context(), r.PathValue("id"), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query(); q.Has("page") || q.Has("before") {
		s.handleHistoryPage(w, r) // paged (branches.go)
		return
	}
	limit := 0
	if v, ok := r.URL.Query()["limit"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v[0]))
		if err != nil || n < 0 || len(v) > 1 {
			s.writeError(w, r, http.StatusBadRequest, "limit must be one integer >= 0, got "+quote(strings.Join(v, ",")))
			return
		}
		limit = n
	}
	msgs, err := s.b.History(r.Context(), r.PathValue("id"), limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if msgs == nil {
		msgs = []client.Message{}
	}
	writeJSON(w, http.StatusOK, struct {
		Messages []client.Message `json:"messages"`
	}{msgs})
}

func (s *Server) handleProviders(w http.ResponseWriter, r *http.Request) {
	ps, err := s.b.Providers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []client.Provider{}
	}
	writeJSON(w, http.StatusOK, struct {
		Providers []client.Provider `json:"providers"`
	}{ps})
}

// decodeProvider reads a provider configuration body; false when it answered an error.
func (s *Server) decodeProvider(w http.ResponseWriter, r *http.Request) (client.ProviderConfig, bool) {
	var in client.ProviderConfig
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return in, false
	}
	if strings.TrimSpace(in.Name) == "" {
		s.writeError(w, r, http.StatusBadRequest, "provider name is empty")
		return in, false
	}
	return in, true
}

func (s *Server) handleAddProvider(w http.ResponseWriter, r *http.Request) {
	in, ok := s.decodeProvider(w, r)
	if !ok {
		return
	}
	out, err := s.b.AddProvider(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleRemoveProvider(w http.ResponseWriter, r *http.Request) {
	if err := s.b.RemoveProvider(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	ts, err := s.b.Tools(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ts == nil {
		ts = []client.Tool{}
	}
	writeJSON(w, http.StatusOK, struct {
		Tools []client.Tool `json:"tools"`
	}{ts})
}
