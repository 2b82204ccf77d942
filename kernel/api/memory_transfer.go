package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/hologramagent/hologram/kernel/client"
)

// Memory's bulk routes: garbage collection, export, import and block thumbnails.

// handleMemoryGC answers POST /api/v1/memory/gc with a [client.GCReport].
func (s *Server) handleMemoryGC(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	if err := noBody(r, "memory gc"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	rep, err := s.b.MemoryGC(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// exportWriter starts the export answer (status 200 and the format's headers) on the first
// write, so that a backend failing before it wrote anything can still answer a JSON error.
type exportWriter struct {
	w           http.ResponseWriter
	contentType string
	file        string
	started     bool
	n           int64
}

func (ew *exportWriter) start() {
	if ew.started {
		return
	}
	ew.started = true
	h := ew.w.Header()
	h.Set("Content-Type", ew.contentType)
	h.Set("Content-Disposition", `attachment; filename="`+ew.file+`"`)
	ew.w.WriteHeader(http.StatusOK)
}

func (ew *exportWriter) Write(p []byte) (int, error) {
	ew.start()
	n, err := ew.w.Write(p)
	ew.n += int64(n)
	return n, err
}

// handleExport answers GET /api/v1/memory/export?format=…&include_secrets=… with the export
// streamed in the format's content type (format absent: json). A failure after the first byte
// aborts the connection, so that a client never takes a truncated export for a whole one.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "format", "include_secrets"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	req := client.ExportRequest{Format: client.FormatJSON}
	if q.Has("format") {
		req.Format = q.Get("format")
	}
	f, ok := exportFormats[req.Format]
	if !ok {
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("format must be json, jsonl or markdown, got %q", req.Format))
		return
	}
	var rerr *requestError
	if req.IncludeSecrets, rerr = parseBool(q, "include_secrets"); rerr != nil {
		s.writeError(w, r, rerr.status, rerr.msg)
		return
	}
	if req.IncludeSecrets && req.Format != client.FormatJSON {
		s.writeError(w, r, http.StatusBadRequest, "include_secrets is only for the json format")
		return
	}
	if err := noBody(r, "memory export"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	ew := &exportWriter{w: w, contentType: f.contentType, file: f.file}
	err := s.b.ExportMemory(r.Context(), req, ew)
	switch {
	case err == nil:
		ew.start()
	case !ew.started:
		s.fail(w, r, err)
	default:
		s.log.Warn("api: export failed after it started; aborting the answer", "format", req.Format,
			"written", ew.n, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// handleImport answers POST /api/v1/memory/import?format=json|jsonl|chatgpt|openwebui (absent:
// json) with a [client.ImportReport]; the body is the file, up to MaxImportBytes.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := checkQuery(q, "format"); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	format := client.FormatJSON
	if q.Has("format") {
		format = q.Get("format")
	}
	switch format {
	case client.FormatJSON, client.FormatJSONL, client.FormatChatGPT, client.FormatOpenWebUI:
	case client.FormatMarkdown:
		s.writeError(w, r, http.StatusBadRequest, "markdown is an export format only: import json, jsonl, chatgpt or openwebui")
		return
	default:
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("format must be json, jsonl, chatgpt or openwebui, got %q", format))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, importLimit.Load())
	rep, err := s.b.ImportMemory(r.Context(), format, r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge,
				fmt.Sprintf("import is larger than %d bytes", tooBig.Limit))
			return
		}
		s.fail(w, r, err)
		return
	}
	s.log.Info("api: memory imported", slog.String("format", format), slog.Int("events", rep.Events),
		slog.Int("entities", rep.Entities), slog.Int("triples", rep.Triples), slog.Int("skipped", rep.Skipped))
	writeJSON(w, http.StatusOK, rep)
}

// handleThumbnail answers GET /api/v1/memory/blocks/{id}/thumbnail with an image block's
// thumbnail (image/png, at most client.MaxThumbnailSide pixels on its longer side).
func (s *Server) handleThumbnail(w http.ResponseWriter, r *http.Request) {
	if err := checkQuery(r.URL.Query()); err != nil {
		s.writeError(w, r, err.status, err.msg)
		return
	}
	id := r.PathValue("id")
	if !validBlockID(id) {
		s.writeError(w, r, http.StatusBadRequest, "block id must be 1 to 64 letters, digits, - or _, got "+quote(id))
		return
	}
	data, err := s.b.Thumbnail(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Cache-Control", "private, max-age=3600") // a block's image never changes
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// validBlockID reports whether id can be a block id (the store's are 32 hex digits; imported
// ones may be any short word).
func validBlockID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
