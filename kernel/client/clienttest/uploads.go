package clienttest

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// MaxUploadBytes is the fake's upload limit, reported by GET /api/v1/status like the kernel's
// api.max_upload_bytes.
const MaxUploadBytes = 64 << 20

// fakeUpload is a stored upload and its bytes.
type fakeUpload struct {
	client.Upload
	data  []byte
	taken bool // a chat message took it (Uploaded still returns the bytes)
}

// upload implements POST /api/v1/uploads as the kernel does: the name from the query, the
// length from Content-Length, refused with 413 before the body is read when over the limit.
// The request is recorded with a body of "N bytes".
func (f *Fake) upload(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	f.mu.Lock()
	f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.RequestURI(),
		Authorization: r.Header.Get("Authorization"), Body: strconv.FormatInt(r.ContentLength, 10) + " bytes"})
	f.mu.Unlock()
	switch {
	case f.Token != "" && r.Header.Get("Authorization") != "Bearer "+f.Token:
		WriteError(w, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	case name == "":
		WriteError(w, http.StatusBadRequest, "upload: name is required")
		return
	case r.ContentLength > MaxUploadBytes:
		WriteError(w, http.StatusRequestEntityTooLarge, "upload: more than the upload limit")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxUploadBytes+1))
	switch {
	case err != nil:
		WriteError(w, http.StatusBadRequest, "upload: "+err.Error())
		return
	case len(data) > MaxUploadBytes:
		WriteError(w, http.StatusRequestEntityTooLarge, "upload: more than the upload limit")
		return
	case len(data) == 0:
		WriteError(w, http.StatusBadRequest, "upload: the file is empty")
		return
	}
	mime := r.Header.Get("Content-Type")
	kind := "video"
	if d := http.DetectContentType(data); client.VideoMIME(data, name) == "" {
		mime, kind = d, "image"
		if client.AudioMIME(d, name) != "" {
			mime, kind = client.AudioMIME(d, name), "audio"
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	u := client.Upload{ID: "u" + strconv.Itoa(f.nextID), Name: name, MIME: mime, Kind: kind,
		Size: int64(len(data)), Expires: f.started.Add(time.Hour)}
	if f.uploads == nil {
		f.uploads = map[string]fakeUpload{}
	}
	f.uploads[u.ID] = fakeUpload{Upload: u, data: data}
	writeJSON(w, http.StatusCreated, u)
}

// Uploaded returns the bytes of upload id, if it was received.
func (f *Fake) Uploaded(id string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.uploads[id]
	return u.data, ok
}

// takeUploads takes the uploads a chat message names, once, as the kernel does; an unknown one
// is a 400.
func (f *Fake) takeUploads(w http.ResponseWriter, atts []client.Attachment) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range atts {
		if a.Upload == "" {
			continue
		}
		u, ok := f.uploads[a.Upload]
		if !ok || u.taken {
			WriteError(w, http.StatusBadRequest, "unknown or expired upload "+strconv.Quote(a.Upload))
			return false
		}
		u.taken = true
		f.uploads[a.Upload] = u
	}
	return true
}
