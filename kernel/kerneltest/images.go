package kerneltest

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"testing"

	"github.com/hologramagent/hologram/kernel/client"
)

// testThumbnails: a picture attached to a message comes with its event's search hit, and its
// thumbnail is a PNG scaled to client.MaxThumbnailSide on its longer side; an unknown block is
// ErrNotFound, an empty id ErrInvalid.
func testThumbnails(t *testing.T, s client.Service) {
	ctx := ctxT(t)
	addFake(t, s)
	src := image.NewRGBA(image.Rect(0, 0, 600, 300))
	for i := 0; i < len(src.Pix); i += 4 {
		src.Pix[i], src.Pix[i+3] = 220, 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, src); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Chat(ctx, client.ChatRequest{Input: "the zebra crossing photo", Attachments: []client.Attachment{
		{Kind: "image", Name: "zebra.png", MIME: "image/png", Data: buf.Bytes()}}}, nil); err != nil {
		t.Fatal(err)
	}
	hits, err := s.SearchMemory(ctx, client.MemoryQuery{Text: "zebra crossing"})
	if err != nil {
		t.Fatal(err)
	}
	var im *client.HitImage
	for _, h := range hits {
		if h.Role == "user" && len(h.Images) == 1 {
			im = &h.Images[0]
		}
	}
	if im == nil || im.Name != "zebra.png" || im.MIME != "image/png" || im.Block == "" {
		t.Fatalf("SearchMemory = %+v; want the message with its picture", hits)
	}
	data, err := s.Thumbnail(ctx, im.Block)
	if err != nil {
		t.Fatalf("Thumbnail: %v", err)
	}
	th, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the thumbnail is not a PNG: %v", err)
	}
	if b := th.Bounds(); b.Dx() != client.MaxThumbnailSide || b.Dy() != client.MaxThumbnailSide/2 {
		t.Errorf("thumbnail of a 600×300 picture is %v", b)
	}
	if _, err := s.Thumbnail(ctx, "0123456789abcdef0123456789abcdef"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("Thumbnail of an unknown block = %v, want ErrNotFound", err)
	}
	if _, err := s.Thumbnail(ctx, ""); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("Thumbnail(\"\") = %v, want ErrInvalid", err)
	}
}
