package api

import (
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// answerImagesBody is what an answer's images may add to the body limit: their bytes in base64.
const answerImagesBody = (client.MaxToolAnswerImagesBytes + 2) / 3 * 4

// handleAnswerToolCall answers POST /api/v1/turns/{id}/tools/{call} {"content": …, "is_error":
// bool, "images": [{"mime", "data" (base64), "name"}]}: the client's result of a call of one of
// its tools (docs/api.md, "Client-executed tools"); 204, 400 for a bad image, or 404 when no
// such call waits. The body may exceed the API's limit by the images' bound.
func (s *Server) handleAnswerToolCall(w http.ResponseWriter, r *http.Request) {
	var in client.ToolAnswer
	if rerr := s.decodeJSON(w, r, &in, decodeOptions{extra: answerImagesBody}); rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	if err := s.b.AnswerToolCall(r.Context(), r.PathValue("id"), r.PathValue("call"), in); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
