package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultMaxUploadBytes is the kernel's upload limit unless configured (api.max_upload_bytes).
const DefaultMaxUploadBytes = 1 << 30

// UploadService takes a file as a stream (POST /api/v1/uploads), so a video of up to a gigabyte
// never travels as base64 JSON or sits whole in memory. Part of [ChatService].
type UploadService interface {
	// Upload stores r (req.Size bytes; -1 when unknown) until a chat message names it in
	// [Attachment.Upload] or it expires. A file over the kernel's limit is refused before it
	// is read ([ErrTooLarge]).
	Upload(ctx context.Context, req UploadRequest, r io.Reader) (Upload, error)
}

// UploadRequest describes an upload: its file name, media type ("" to detect it) and size.
type UploadRequest struct {
	Name string `json:"name"`
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size"`
}

// Upload is a stored upload: the ID an [Attachment] names it by, what it is (Kind "video",
// "image" or "audio", by content) and when it is deleted if no message takes it.
type Upload struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	MIME    string    `json:"mime"`
	Kind    string    `json:"kind"`
	Size    int64     `json:"size"`
	Expires time.Time `json:"expires"`
}

// ErrTooLarge marks a file over a limit (HTTP 413); it is an [ErrInvalid] too.
var ErrTooLarge = fmt.Errorf("%w: too large", ErrInvalid)

// Upload implements [UploadService] over HTTP: the body is streamed with its length, and
// "Expect: 100-continue" lets the kernel refuse a file over its limit before any of it is sent.
func (c *HTTP) Upload(ctx context.Context, req UploadRequest, r io.Reader) (Upload, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		return Upload{}, fmt.Errorf("upload: empty file name: %w", ErrInvalid)
	}
	q := url.Values{"name": {name}}
	hreq, err := c.newRequest(ctx, http.MethodPost, "/api/v1/uploads?"+q.Encode(), nil)
	if err != nil {
		return Upload{}, err
	}
	hreq.Body = io.NopCloser(r)
	hreq.ContentLength = req.Size
	if req.Size < 0 {
		hreq.ContentLength = 0 // streamed chunked: the kernel counts as it reads
	} else if req.Size == 0 {
		return Upload{}, fmt.Errorf("upload %s: the file is empty: %w", name, ErrInvalid)
	}
	ct := req.MIME
	if ct == "" {
		ct = "application/octet-stream"
	}
	hreq.Header.Set("Content-Type", ct)
	hreq.Header.Set("Expect", "100-continue")
	var out Upload
	err = c.stream(hreq, func(body io.Reader) error { return decodeBody(hreq, body, &out) })
	return out, err
}

// UploadLimit is a readable size ("1 GiB", "8 MiB", "667.6 MiB"): whole units when exact,
// one decimal otherwise.
func UploadLimit(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		switch {
		case n >= u.size && n%u.size == 0:
			return strconv.FormatInt(n/u.size, 10) + " " + u.name
		case n >= u.size:
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// InlineBytes is the largest image or audio file sent inside the chat request; larger ones,
// and every video, are streamed ahead with [UploadService.Upload], which the kernel's body limit
// (api.max_body_bytes, 4 MiB by default) does not bound.
const InlineBytes = 1 << 20

// File is an attachment read from disk: what the chat request carries and, for a file
// streamed ahead when the message is sent (a video, or an image or audio file over
// [InlineBytes]: Text and Data empty), its Path. Size is the file's size.
type File struct {
	Attachment
	Path string
	Size int64
}

// Streamed says the file goes ahead as an upload rather than inside the chat request: a file
// kept as its path, or data held in memory (pasted, a screenshot) over [InlineBytes], which
// base64 JSON would take past the kernel's body limit.
func (f File) Streamed() bool {
	switch {
	case f.Kind == "text":
		return false
	case f.Path != "":
		return f.Data == nil
	default:
		return len(f.Data) > InlineBytes
	}
}

// OpenFile tells what the file at path is by its content (text as valid UTF-8, an image,
// audio or a video) and reads it when it travels inside the chat request: a video is only
// sniffed, an image or audio file over [InlineBytes] is kept as a path. Only videos may
// exceed [MaxAttachmentBytes]; the kernel's upload limit is checked by [UploadFiles].
func OpenFile(path string) (File, error) {
	name := filepath.Base(path)
	st, err := os.Stat(path)
	if err != nil {
		return File{}, err
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size() == 0 {
		return File{}, fmt.Errorf("%s is empty", name)
	}
	f := File{Attachment: Attachment{Name: name}, Path: path, Size: st.Size()}
	head, err := readHead(path)
	if err != nil {
		return File{}, err
	}
	if m := VideoMIME(head, path); m != "" {
		f.Kind, f.MIME = "video", m
		return f, nil
	}
	if st.Size() > MaxAttachmentBytes {
		return File{}, fmt.Errorf("%s has %s, at most %s (only videos may be larger)", name, UploadLimit(st.Size()), UploadLimit(MaxAttachmentBytes))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	f.Size = int64(len(b))
	mime := http.DetectContentType(b)
	f.MIME = mime
	switch {
	case strings.HasPrefix(mime, "text/") && utf8.Valid(b):
		f.Kind, f.Text = "text", string(b)
	case strings.HasPrefix(mime, "image/"):
		f.Kind, f.Data = "image", b
	case AudioMIME(mime, path) != "":
		f.Kind, f.Data, f.MIME = "audio", b, AudioMIME(mime, path)
	default:
		return File{}, fmt.Errorf("%s is %s, not text, an image, audio or video", name, mime)
	}
	if f.Kind != "text" && len(f.Data) > InlineBytes {
		f.Data = nil // streamed ahead
	}
	return f, nil
}

// readHead reads the first 512 bytes of a file (what content sniffing looks at).
func readHead(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b := make([]byte, 512)
	n, err := io.ReadFull(fh, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// Uploader is what [UploadFiles] needs of a kernel.
type Uploader interface {
	Status(ctx context.Context) (Status, error)
	UploadService
}

// UploadProgress is how far a streamed file is: Sent of its Size bytes.
type UploadProgress struct {
	Name       string
	Sent, Size int64
}

// Percent is the share sent, 0–100.
func (p UploadProgress) Percent() int {
	if p.Size <= 0 {
		return 100
	}
	return int(p.Sent * 100 / p.Size)
}

// UploadFiles streams the files that go ahead ([File.Streamed]) to the kernel and returns
// what the chat request carries. Every file is checked against the kernel's upload limit
// before the first byte of any is sent; an error names the file. progress, when not nil, is
// called as each file goes: at 0, at every whole percent it passes, and at the end.
func UploadFiles(ctx context.Context, k Uploader, files []File, progress func(UploadProgress)) ([]Attachment, error) {
	out := make([]Attachment, len(files))
	var up []int
	for i, f := range files {
		out[i] = f.Attachment
		if f.Streamed() {
			up = append(up, i)
		}
	}
	if len(up) == 0 {
		return out, nil
	}
	st, err := k.Status(ctx)
	if err != nil {
		return nil, err
	}
	for _, i := range up {
		switch f := files[i]; {
		case st.MaxUploadBytes == 0:
			return nil, fmt.Errorf("%s: this kernel takes no uploads (it is older than this client): update it: %w", f.Name, ErrInvalid)
		case f.Size > st.MaxUploadBytes:
			return nil, fmt.Errorf("%s has %d bytes (%s), more than the kernel's upload limit (%s; [api] max_upload_bytes): %w",
				f.Name, f.Size, UploadLimit(f.Size), UploadLimit(st.MaxUploadBytes), ErrTooLarge)
		}
	}
	for _, i := range up {
		f := files[i]
		var body io.Reader = bytes.NewReader(f.Data)
		if f.Path != "" {
			fh, err := os.Open(f.Path)
			if err != nil {
				return nil, err
			}
			defer fh.Close()
			body = fh
		}
		if progress != nil {
			progress(UploadProgress{Name: f.Name, Size: f.Size})
			body = &progressReader{r: body, p: UploadProgress{Name: f.Name, Size: f.Size}, report: progress}
		}
		u, err := k.Upload(ctx, UploadRequest{Name: f.Name, MIME: f.MIME, Size: f.Size}, body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		out[i].Upload, out[i].Data = u.ID, nil
	}
	return out, nil
}

// progressReader reports the bytes read through it, once per whole percent.
type progressReader struct {
	r      io.Reader
	p      UploadProgress
	last   int
	report func(UploadProgress)
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.p.Sent += int64(n)
	if pc := pr.p.Percent(); pc > pr.last {
		pr.last = pc
		pr.report(pr.p)
	}
	return n, err
}
