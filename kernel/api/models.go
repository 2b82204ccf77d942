package api

import (
	"net/http"
	"strings"

	"github.com/hologramagent/hologram/kernel/client"
)

// The dense-model routes (docs/api.md, "Embedding models"). An install streams its progress as
// server-sent events on the request, like a chat turn: closing the connection stops the
// download (the part downloaded is kept, and installing again resumes it).

// handleEmbedding answers GET /api/v1/embedding.
func (s *Server) handleEmbedding(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	st, err := s.b.Embedding(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// handleEmbeddingModels answers GET /api/v1/embedding/models.
func (s *Server) handleEmbeddingModels(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	ms, err := s.b.EmbeddingModels(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ms == nil {
		ms = []client.EmbeddingModel{}
	}
	for i := range ms {
		if ms[i].Files == nil {
			ms[i].Files = []client.ModelFile{}
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Models []client.EmbeddingModel `json:"models"`
	}{ms})
}

// handleInstallModel answers POST /api/v1/embedding/models/{id}/install with a stream of
// "progress" events and a final "done" (the installed model) or "error" event. A failure
// before the first event is a plain JSON error.
func (s *Server) handleInstallModel(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > 0 {
		s.writeError(w, r, http.StatusBadRequest, "model install takes no body")
		return
	}
	id := r.PathValue("id")
	st := newSSE(w)
	stop := s.keepAlive(st)
	m, err := s.b.InstallModel(r.Context(), id, func(p client.ModelProgress) {
		st.event(client.ModelEventProgress, p)
	})
	stop()
	switch {
	case err != nil && !st.isStarted():
		st.close()
		s.fail(w, r, err)
		return
	case err != nil:
		status, msg := errorStatus(err)
		s.log.Debug("api: model install failed", "model", id, "err", err)
		st.event(client.ModelEventError, client.Error{Status: status, Message: msg})
	default:
		if m.Files == nil {
			m.Files = []client.ModelFile{}
		}
		st.event(client.ModelEventDone, m)
	}
	st.close()
}

// handleImportModel answers POST /api/v1/embedding/models/{id}/import {"dir": "/abs"}.
func (s *Server) handleImportModel(w http.ResponseWriter, r *http.Request) {
	var in client.ImportModelRequest
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if strings.TrimSpace(in.Dir) == "" {
		s.writeError(w, r, http.StatusBadRequest, `field "dir" (an absolute directory on the kernel's machine) is required`)
		return
	}
	m, err := s.b.ImportModel(r.Context(), r.PathValue("id"), in.Dir)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if m.Files == nil {
		m.Files = []client.ModelFile{}
	}
	writeJSON(w, http.StatusCreated, m)
}

// handleUseModelID answers POST /api/v1/embedding/models/{id}/use.
func (s *Server) handleUseModelID(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > 0 {
		s.writeError(w, r, http.StatusBadRequest, "model use takes no body")
		return
	}
	s.useModel(w, r, r.PathValue("id"))
}

// handleUseModel answers POST /api/v1/embedding/use {"model": "id"}; "" returns to sparse mode.
func (s *Server) handleUseModel(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model *string `json:"model"`
	}
	if err := s.decodeJSON(w, r, &in, decodeOptions{}); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if in.Model == nil {
		s.writeError(w, r, http.StatusBadRequest, `field "model" is required ("" returns to sparse mode)`)
		return
	}
	s.useModel(w, r, *in.Model)
}

func (s *Server) useModel(w http.ResponseWriter, r *http.Request, id string) {
	st, err := s.b.UseModel(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// handleRemoveModel answers DELETE /api/v1/embedding/models/{id} with 204.
func (s *Server) handleRemoveModel(w http.ResponseWriter, r *http.Request) {
	if err := s.b.RemoveModel(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
