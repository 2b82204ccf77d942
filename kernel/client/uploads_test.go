package client

import (
	"bytes"
	"os"
	"path/filepath"
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
