package memadmin

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// TestThumbnailPNG: the longer side is scaled to 256 keeping the aspect; a small image keeps its
// size; the colours survive.
func TestThumbnailPNG(t *testing.T) {
	for _, tc := range []struct{ w, h, ww, wh int }{{1000, 500, 256, 128}, {300, 900, 85, 256}, {40, 30, 40, 30}} {
		src := image.NewRGBA(image.Rect(0, 0, tc.w, tc.h))
		for i := 0; i < len(src.Pix); i += 4 {
			src.Pix[i+1], src.Pix[i+3] = 200, 255
		}
		data, err := thumbnailPNG(src)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != tc.ww || b.Dy() != tc.wh {
			t.Errorf("%d×%d → %v, want %d×%d", tc.w, tc.h, b, tc.ww, tc.wh)
		}
		if c := color.RGBAModel.Convert(img.At(tc.ww/2, tc.wh/2)).(color.RGBA); c.G != 200 || c.R != 0 {
			t.Errorf("%d×%d: centre colour %v", tc.w, tc.h, c)
		}
	}
}
