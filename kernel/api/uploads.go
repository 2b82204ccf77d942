package api

import (
	"net/http"

	"github.com/hologramagent/hologram/kernel/client"
)

// POST /api/v1/uploads?name=clip.mp4 streams a file (the raw body, Content-Type its media type)
// ahead of the chat message that sends it: 201 with the client.Upload whose id an attachment
// names ({"kind": "video", "upload": id}). The body is not bound by api.max_body_bytes but by
// api.max_upload_bytes: a Content-Length over it is refused with 413 before the body is read
// (a client that sent "Expect: 100-continue" sends none of it), and a chunked body is cut there.

func (s *Server) uploadRoutes() {
	s.mux.HandleFunc("POST /api/v1/uploads", s.handleUpload)
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "name"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	req := client.UploadRequest{Name: q.Get("name"), MIME: r.Header.Get("Content-Type"), Size: r.ContentLength}
	u, err := s.b.Upload(r.Context(), req, r.Body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, u)
}
