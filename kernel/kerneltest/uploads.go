package kerneltest

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// testUploads: a file streamed with Upload (an image here) is named by a chat attachment and
// stored as a block of the message; an upload is taken once, an unknown one is ErrNotFound
// before any turn starts, and an empty file or one that is not media is ErrInvalid.
func testUploads(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	fake := addFake(t, s)
	st, err := s.Status(ctx)
	if err != nil || st.MaxUploadBytes <= 0 {
		t.Fatalf("Status.MaxUploadBytes = %d, %v", st.MaxUploadBytes, err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(3, 3, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	u, err := s.Upload(ctx, client.UploadRequest{Name: "dot.png", Size: int64(b.Len())}, bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || u.Kind != "image" || u.MIME != "image/png" || u.Size != int64(b.Len()) || !u.Expires.After(time.Now()) {
		t.Fatalf("Upload = %+v", u)
	}
	att := client.Attachment{Kind: "image", Name: "dot.png", Upload: u.ID}
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "a dot", Attachments: []client.Attachment{att}}, nil); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, "main", 0)
	if err != nil || len(hist) != 2 || len(hist[0].Blocks) != 1 || hist[0].Blocks[0].Kind != "image" || hist[0].Blocks[0].Name != "dot.png" {
		t.Fatalf("History = %+v, %v", hist, err)
	}
	n := len(fake.Requests())
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "again", Attachments: []client.Attachment{att}}, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a second message with the same upload: %v, want ErrNotFound", err)
	}
	if len(fake.Requests()) != n {
		t.Error("the LLM was called for a message naming a taken upload")
	}
	for _, tc := range []struct{ name, body string }{{"empty.png", ""}, {"notes.txt", "just some text"}} {
		if _, err := s.Upload(ctx, client.UploadRequest{Name: tc.name, Size: int64(len(tc.body))}, strings.NewReader(tc.body)); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("Upload(%s) = %v, want ErrInvalid", tc.name, err)
		}
	}
}
