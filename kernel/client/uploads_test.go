package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	mp4 := []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	huge := write("huge.png", png)
	if err := os.Truncate(huge, MaxAttachmentBytes+1); err != nil {
		t.Fatal(err)
	}
	hugeVideo := write("huge.mp4", mp4)
	if err := os.Truncate(hugeVideo, 2*MaxAttachmentBytes); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		kind     string // "" : refused with err
		streamed bool
		err      string
	}{
		{"text", write("a.md", []byte("# notes\n")), "text", false, ""},
		{"small image", write("a.png", png), "image", false, ""},
		{"large image", write("b.png", append(png, make([]byte, InlineBytes)...)), "image", true, ""},
		{"video", write("c.mp4", mp4), "video", true, ""},
		{"video over the attachment limit", hugeVideo, "video", true, ""},
		{"image over the attachment limit", huge, "", false, "has 32.0 MiB, at most 32 MiB (only videos may be larger)"},
		{"binary", write("x.bin", []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}), "", false, "not text, an image, audio or video"},
		{"empty", write("e.txt", nil), "", false, "e.txt is empty"},
		{"directory", dir, "", false, "not a regular file"},
		{"missing", filepath.Join(dir, "nope"), "", false, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := OpenFile(tc.path)
			if tc.kind == "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("OpenFile = %+v, %v; want an error with %q", f.Attachment.Kind, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(tc.path)
			if f.Kind != tc.kind || f.Streamed() != tc.streamed || f.Size != st.Size() {
				t.Errorf("kind %s streamed %v size %d; want %s %v %d", f.Kind, f.Streamed(), f.Size, tc.kind, tc.streamed, st.Size())
			}
			if !tc.streamed && f.Kind == "image" && !bytes.Equal(f.Data, png) {
				t.Error("inline image not read")
			}
		})
	}
}

func TestUploadLimit(t *testing.T) {
	for n, want := range map[int64]string{
		1 << 30: "1 GiB", 8 << 20: "8 MiB", 8<<20 + 1: "8.0 MiB", 700_000_000: "667.6 MiB", 1536: "1.5 KiB", 100: "100 bytes",
	} {
		if got := UploadLimit(n); got != want {
			t.Errorf("UploadLimit(%d) = %q, want %q", n, got, want)
		}
	}
}

// upRecorder is an Uploader that reads each upload whole and records it.
type upRecorder struct {
	max  int64
	got  map[string][]byte
	sent int
}

func (u *upRecorder) Status(context.Context) (Status, error) {
	return Status{MaxUploadBytes: u.max}, nil
}

func (u *upRecorder) Upload(_ context.Context, req UploadRequest, r io.Reader) (Upload, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Upload{}, err
	}
	u.sent++
	id := "u" + strconv.Itoa(u.sent)
	u.got[id] = b
	return Upload{ID: id, Name: req.Name, Size: int64(len(b))}, nil
}

func TestUploadFiles(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	data := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte{1}, 300_000)...)
	if err := os.WriteFile(clip, data, 0o600); err != nil {
		t.Fatal(err)
	}
	video, err := OpenFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	note := File{Attachment: Attachment{Kind: "text", Name: "n.txt", Text: "hi"}, Size: 2}
	u := &upRecorder{max: 1 << 20, got: map[string][]byte{}}
	var pcs []int
	atts, err := UploadFiles(context.Background(), u, []File{note, video}, func(p UploadProgress) {
		if p.Name != "clip.mp4" || p.Size != int64(len(data)) {
			t.Errorf("progress %+v", p)
		}
		pcs = append(pcs, p.Percent())
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 2 || atts[0].Text != "hi" || atts[1].Upload != "u1" || !bytes.Equal(u.got["u1"], data) {
		t.Fatalf("attachments %+v", atts)
	}
	if len(pcs) < 3 || pcs[0] != 0 || pcs[len(pcs)-1] != 100 || !slices.IsSorted(pcs) {
		t.Errorf("progress %v: want 0 first, 100 last, rising", pcs)
	}
	// Over the limit: refused before anything is sent.
	u = &upRecorder{max: int64(len(data)) - 1, got: map[string][]byte{}}
	if _, err := UploadFiles(context.Background(), u, []File{video}, nil); !errors.Is(err, ErrTooLarge) || u.sent != 0 {
		t.Errorf("over the limit: %v, %d sent", err, u.sent)
	}
}
