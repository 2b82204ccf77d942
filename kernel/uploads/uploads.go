// Package uploads keeps the files clients stream ahead of a chat message (POST /api/v1/uploads:
// a video of up to a gigabyte, never base64 JSON): each is written to the data directory as it
// arrives, bounded by the configured limit, sniffed for what it is, and handed once to the
// message that names it, or deleted when it expires.
package uploads

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hologramagent/hologram/kernel/client"
)

// Bounds of the store.
const (
	// TTL is how long an upload waits for the message that sends it.
	TTL = time.Hour
	// MaxPending bounds the uploads waiting at once (each up to the limit), so a client that
	// uploads and never sends cannot fill the disk.
	MaxPending = 16
	// maxName bounds a file name (bytes).
	maxName = 255
)

var idRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Store is the upload directory. It is safe for concurrent use.
type Store struct {
	dir string
	max int64
	now func() time.Time

	mu      sync.Mutex
	ready   bool                     // the directory is made
	pending map[string]client.Upload // stored and not yet taken
	writing int                      // uploads being written
}

// New returns the store of the uploads folder of the data directory dataDir ("": a temporary
// folder), made 0700 on first use, when what an earlier run left there is deleted: an upload
// lives for one kernel run. max ≤ 0 means [client.DefaultMaxUploadBytes].
func New(dataDir string, max int64) *Store {
	if max <= 0 {
		max = client.DefaultMaxUploadBytes
	}
	s := &Store{max: max, now: time.Now, pending: map[string]client.Upload{}}
	if dataDir != "" {
		s.dir = filepath.Join(dataDir, "uploads")
	}
	return s
}

// ensureDir makes the directory on first use.
func (s *Store) ensureDir() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return s.dir, nil
	}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "hologram-uploads-*")
		if err != nil {
			return "", fmt.Errorf("uploads: %w", err)
		}
		s.dir = d
	} else {
		if err := os.RemoveAll(s.dir); err != nil {
			return "", fmt.Errorf("uploads: %w", err)
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return "", fmt.Errorf("uploads: %w", err)
		}
	}
	s.ready = true
	return s.dir, nil
}

// Max is the largest upload taken, in bytes.
func (s *Store) Max() int64 { return s.max }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", client.ErrInvalid, fmt.Sprintf(format, args...))
}

// TooLarge is the error of an upload over the limit (the API answers 413).
type TooLarge struct {
	Name  string
	Size  int64 // -1: it passed the limit while streaming
	Limit int64
}

func (e *TooLarge) Error() string {
	limit := client.UploadLimit(e.Limit)
	if e.Size < 0 {
		return fmt.Sprintf("%s is larger than the upload limit (%s; api.max_upload_bytes)", e.Name, limit)
	}
	return fmt.Sprintf("%s has %d bytes, more than the upload limit (%s; api.max_upload_bytes)", e.Name, e.Size, limit)
}

func (e *TooLarge) Unwrap() error { return client.ErrTooLarge }

// Check refuses an upload before any of it is read: a bad name, a size over the limit (size
// -1: unknown) or too many uploads waiting.
func (s *Store) Check(req client.UploadRequest) (string, error) {
	name := cleanName(req.Name)
	if name == "" {
		return "", invalid("an upload needs a file name (?name=clip.mp4)")
	}
	if req.Size > s.max {
		return "", &TooLarge{Name: name, Size: req.Size, Limit: s.max}
	}
	if req.Size == 0 {
		return "", invalid("%s is empty", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	if len(s.pending)+s.writing >= MaxPending {
		return "", invalid("%d uploads are waiting for their messages: send or wait for them (they expire after %s)", MaxPending, TTL)
	}
	return name, nil
}

// Put stores r as an upload (see [client.UploadService]).
func (s *Store) Put(ctx context.Context, req client.UploadRequest, r io.Reader) (client.Upload, error) {
	name, err := s.Check(req)
	if err != nil {
		return client.Upload{}, err
	}
	s.mu.Lock()
	s.writing++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.writing--
		s.mu.Unlock()
	}()
	dir, err := s.ensureDir()
	if err != nil {
		return client.Upload{}, err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	path := filepath.Join(dir, id)
	f, err := os.OpenFile(path+".part", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return client.Upload{}, fmt.Errorf("uploads: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(path + ".part")
		}
	}()
	var head headWriter
	n, err := io.Copy(io.MultiWriter(f, &head), io.LimitReader(ctxReader{ctx, r}, s.max+1))
	switch {
	case err != nil:
		return client.Upload{}, fmt.Errorf("upload %s: %w", name, err)
	case n > s.max:
		return client.Upload{}, &TooLarge{Name: name, Size: -1, Limit: s.max}
	case n == 0:
		return client.Upload{}, invalid("%s is empty", name)
	case req.Size > 0 && n != req.Size:
		return client.Upload{}, invalid("%s ended after %d of its %d bytes", name, n, req.Size)
	}
	kind, mime := Sniff(head.b, name)
	if kind == "" {
		return client.Upload{}, invalid("%s is not a video, an image or audio (it reads as %s)", name, http.DetectContentType(head.b))
	}
	if kind != "video" && n > client.MaxAttachmentBytes {
		return client.Upload{}, invalid("%s: %s attachments have at most %d bytes (only videos may be larger)", name, kind, client.MaxAttachmentBytes)
	}
	if err := f.Close(); err != nil {
		return client.Upload{}, fmt.Errorf("uploads: %w", err)
	}
	if err := os.Rename(path+".part", path); err != nil {
		return client.Upload{}, fmt.Errorf("uploads: %w", err)
	}
	ok = true
	u := client.Upload{ID: id, Name: name, MIME: mime, Kind: kind, Size: n, Expires: s.now().Add(TTL).UTC()}
	s.mu.Lock()
	s.pending[id] = u
	s.mu.Unlock()
	return u, nil
}

// Take hands an upload to the message that names it: its description, its file, and release,
// which deletes it (call it when the message no longer needs the file). An upload is taken
// once; an unknown or expired id is [client.ErrNotFound].
func (s *Store) Take(id string) (client.Upload, string, func(), error) {
	s.mu.Lock()
	s.expireLocked()
	u, ok := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if !idRe.MatchString(id) || !ok {
		return client.Upload{}, "", nil, fmt.Errorf("%w: no upload %q waits (uploads expire after %s and are sent once)", client.ErrNotFound, id, TTL)
	}
	path := filepath.Join(s.dir, id)
	return u, path, func() { os.Remove(path) }, nil
}

// expireLocked deletes the uploads past their time.
func (s *Store) expireLocked() {
	now := s.now()
	for id, u := range s.pending {
		if now.After(u.Expires) {
			delete(s.pending, id)
			os.Remove(filepath.Join(s.dir, id))
		}
	}
}

// Sniff tells what an upload is from its first bytes and its name: kind "video", "image" or
// "audio" with its MIME type, or "" when it is none of them.
func Sniff(head []byte, name string) (kind, mime string) {
	sniffed := http.DetectContentType(head)
	if m := client.AudioMIME(sniffed, name); m != "" {
		return "audio", m
	}
	if m := client.VideoMIME(head, name); m != "" {
		return "video", m
	}
	if strings.HasPrefix(sniffed, "image/") {
		return "image", sniffed
	}
	return "", ""
}

// cleanName is the base name of a file name without control characters, at most maxName bytes.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(filepath.Base(strings.ReplaceAll(strings.TrimSpace(name), `\`, "/")))
	for len(name) > maxName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "." || name == ".." || name == "/" {
		return ""
	}
	return name
}

// headWriter keeps the first 512 bytes written (what content sniffing reads).
type headWriter struct{ b []byte }

func (h *headWriter) Write(p []byte) (int, error) {
	if n := 512 - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// ctxReader stops reading when ctx ends (a client that goes away mid-upload).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
