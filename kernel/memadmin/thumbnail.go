package memadmin

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"strings"

	"golang.org/x/image/draw"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/ocr"
)

// Thumbnail implements [client.MemoryAdmin]: the image block scaled (Catmull-Rom) so that its
// longer side is at most client.MaxThumbnailSide pixels (a smaller image keeps its size),
// encoded as PNG.
func (k *Admin) Thumbnail(ctx context.Context, block string) ([]byte, error) {
	if strings.TrimSpace(block) == "" {
		return nil, invalid("the block id is empty") // as the HTTP client refuses it
	}
	b, err := k.DB.Block(ctx, block)
	if err != nil {
		return nil, mapErr(err)
	}
	if b.Kind != memory.BlockImage {
		return nil, invalid("block %s is %s, not an image", block, b.Kind)
	}
	img, err := ocr.Decode(b.Data)
	if err != nil {
		return nil, invalid("block %s: %v", block, err)
	}
	return thumbnailPNG(img)
}

// thumbnailPNG scales img to fit client.MaxThumbnailSide and encodes it.
func thumbnailPNG(img image.Image) ([]byte, error) {
	r := img.Bounds()
	w, h := r.Dx(), r.Dy()
	if side := max(w, h); side > client.MaxThumbnailSide {
		w, h = max(1, w*client.MaxThumbnailSide/side), max(1, h*client.MaxThumbnailSide/side)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, r, draw.Src, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, fmt.Errorf("thumbnail: %w", err)
	}
	return out.Bytes(), nil
}
