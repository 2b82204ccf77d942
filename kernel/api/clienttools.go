package api

import (
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// handleAnswerToolCall answers POST /api/v1/turns/{id}/tools/{call} {"content": …, "is_error":
// bool}: the client's result of a call of one of its tools (docs/api.md, "Client-executed
// tools"); 204, or 404 when no such call waits.
func (s *Server) handleAnswerToolCall(w http.ResponseWriter, r *http.Request) {
	var in client.ToolAnswer
	if rerr := s.decodeJSON(w, r, &in, decodeOptions{}); rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	if err := s.b.AnswerToolCall(r.Context(), r.PathValue("id"), r.PathValue("call"), in); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
