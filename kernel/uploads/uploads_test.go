package uploads

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// mp4 is the start of an MP4 file (an ftyp box), padded to n bytes.
func mp4(n int) []byte {
	b := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 64)...)
	if n > len(b) {
		b = append(b, bytes.Repeat([]byte{7}, n-len(b))...)
	}
	return b[:max(n, 24)]
}

var png = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 100)...)

func TestPut(t *testing.T) {
	tests := []struct {
		name    string
		req     client.UploadRequest
		body    []byte
		kind    string
		wantErr string
		large   bool
	}{
		{name: "video", req: client.UploadRequest{Name: "clip.mp4", Size: 1000}, body: mp4(1000), kind: "video"},
		{name: "video of unknown size", req: client.UploadRequest{Name: "clip.mp4", Size: -1}, body: mp4(1000), kind: "video"},
		{name: "quicktime", req: client.UploadRequest{Name: "clip.mov", Size: 500}, body: mp4(500), kind: "video"},
		{name: "image", req: client.UploadRequest{Name: "photo.png", Size: int64(len(png))}, body: png, kind: "image"},
		{name: "audio named so", req: client.UploadRequest{Name: "voice.m4a", Size: 300}, body: mp4(300), kind: "audio"},
		{name: "path in the name", req: client.UploadRequest{Name: "../../etc/clip.mp4", Size: 200}, body: mp4(200), kind: "video"},
		{name: "over the limit", req: client.UploadRequest{Name: "big.mp4", Size: 4097}, body: mp4(4097), wantErr: "big.mp4 has 4097 bytes, more than the upload limit (4 KiB", large: true},
		{name: "over the limit while streaming", req: client.UploadRequest{Name: "big.mp4", Size: -1}, body: mp4(5000), wantErr: "larger than the upload limit", large: true},
		{name: "shorter than said", req: client.UploadRequest{Name: "cut.mp4", Size: 900}, body: mp4(800), wantErr: "ended after 800 of its 900 bytes"},
		{name: "empty", req: client.UploadRequest{Name: "none.mp4", Size: 0}, body: nil, wantErr: "none.mp4 is empty"},
		{name: "empty stream", req: client.UploadRequest{Name: "none.mp4", Size: -1}, body: nil, wantErr: "none.mp4 is empty"},
		{name: "no name", req: client.UploadRequest{Name: " / ", Size: 10}, body: mp4(10), wantErr: "needs a file name"},
		{name: "text", req: client.UploadRequest{Name: "notes.mp4", Size: 11}, body: []byte("hello there"), wantErr: "notes.mp4 is not a video, an image or audio (it reads as text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			s := New(data, 4096)
			u, err := s.Put(context.Background(), tt.req, bytes.NewReader(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, client.ErrInvalid) {
					t.Fatalf("Put = %+v, %v; want %q", u, err, tt.wantErr)
				}
				if errors.Is(err, client.ErrTooLarge) != tt.large {
					t.Errorf("%v: ErrTooLarge %v, want %v", err, errors.Is(err, client.ErrTooLarge), tt.large)
				}
				if left, _ := filepath.Glob(filepath.Join(data, "uploads", "*")); len(left) != 0 {
					t.Errorf("a refused upload left %v", left)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.Kind != tt.kind || u.Size != int64(len(tt.body)) || len(u.ID) != 32 || strings.ContainsAny(u.Name, "/\\") {
				t.Errorf("Put = %+v", u)
			}
			got, path, release, err := s.Take(u.ID)
			if err != nil || got != u {
				t.Fatalf("Take = %+v, %v", got, err)
			}
			if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, tt.body) {
				t.Errorf("stored %d bytes (%v), want %d", len(b), err, len(tt.body))
			}
			if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("upload folder: %v %v", st.Mode(), err)
			}
			release()
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("released upload still there: %v", err)
			}
			if _, _, _, err := s.Take(u.ID); !errors.Is(err, client.ErrNotFound) {
				t.Errorf("second Take: %v", err)
			}
		})
	}
}

func TestTakeRefuses(t *testing.T) {
	s := New(t.TempDir(), 0)
	if s.Max() != client.DefaultMaxUploadBytes {
		t.Errorf("default limit %d", s.Max())
	}
	for _, id := range []string{"", "../../hologram.db", strings.Repeat("a", 32), "x"} {
		if _, _, _, err := s.Take(id); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("Take(%q): %v", id, err)
		}
	}
}

func TestExpiryAndPendingBound(t *testing.T) {
	data := t.TempDir()
	s := New(data, 0)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	var ids []string
	for range MaxPending {
		u, err := s.Put(context.Background(), client.UploadRequest{Name: "a.mp4", Size: 100}, bytes.NewReader(mp4(100)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	if _, err := s.Put(context.Background(), client.UploadRequest{Name: "b.mp4", Size: 100}, bytes.NewReader(mp4(100))); err == nil || !strings.Contains(err.Error(), "uploads are waiting") {
		t.Fatalf("upload %d: %v", MaxPending+1, err)
	}
	now = now.Add(TTL + time.Second)
	if _, _, _, err := s.Take(ids[0]); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("expired upload taken: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "uploads", "*")); len(left) != 0 {
		t.Errorf("expired uploads left on disk: %d", len(left))
	}
	if _, err := s.Put(context.Background(), client.UploadRequest{Name: "b.mp4", Size: 100}, bytes.NewReader(mp4(100))); err != nil {
		t.Errorf("after expiry: %v", err)
	}
}

// TestLeftovers: what an earlier run left in the folder is deleted on first use.
func TestLeftovers(t *testing.T) {
	data := t.TempDir()
	old := filepath.Join(data, "uploads", "0123456789abcdef0123456789abcdef")
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, mp4(100), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(data, 0)
	if _, err := s.Put(context.Background(), client.UploadRequest{Name: "a.mp4", Size: 100}, bytes.NewReader(mp4(100))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover kept: %v", err)
	}
}

// TestCancelled: a client that goes away mid-upload leaves nothing.
func TestCancelled(t *testing.T) {
	data := t.TempDir()
	s := New(data, 0)
	ctx, cancel := context.WithCancel(context.Background())
	r := io.MultiReader(bytes.NewReader(mp4(100)), readerFunc(func(p []byte) (int, error) { cancel(); return copy(p, "more"), nil }))
	if _, err := s.Put(ctx, client.UploadRequest{Name: "a.mp4", Size: -1}, r); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled upload: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "uploads", "*")); len(left) != 0 {
		t.Errorf("a cancelled upload left %v", left)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
