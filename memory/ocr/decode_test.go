package ocr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"
)

// sample is a small image with a gradient, to encode in every format.
func sample() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 6), uint8(y * 8), 128, 255})
		}
	}
	return img
}

func encode(t *testing.T, format string, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecode(t *testing.T) {
	webp, err := os.ReadFile("testdata/attachment.webp")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
		w, h int
	}{
		{"PNG", encode(t, "png", sample()), 40, 30},
		{"JPEG", encode(t, "jpeg", sample()), 40, 30},
		{"GIF", encode(t, "gif", sample()), 40, 30},
		{"WebP", webp, 283, 174},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Decode(tt.data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tt.w || b.Dy() != tt.h {
				t.Errorf("bounds %v, want %dx%d", b, tt.w, tt.h)
			}
			// The content survives: compare a pixel with the source (JPEG loosely; GIF's
			// palette and WebP's text are checked elsewhere).
			if tt.name == "PNG" || tt.name == "JPEG" {
				r, g, _, _ := img.At(30, 20).RGBA()
				if d := int(r>>8) - 180; d < -12 || d > 12 {
					t.Errorf("red at 30,20 = %d, want ≈ 180", r>>8)
				}
				if d := int(g>>8) - 160; d < -12 || d > 12 {
					t.Errorf("green at 30,20 = %d, want ≈ 160", g>>8)
				}
			}
		})
	}
}

// withPNGSize returns the PNG data with its header's size changed (and the chunk's CRC
// recomputed, so only the size is wrong).
func withPNGSize(t *testing.T, data []byte, w, h uint32) []byte {
	t.Helper()
	out := bytes.Clone(data)
	// signature (8) | length (4) | "IHDR" (4) | width (4) | height (4) | 5 bytes | CRC (4)
	if string(out[12:16]) != "IHDR" {
		t.Fatal("no IHDR")
	}
	binary.BigEndian.PutUint32(out[16:], w)
	binary.BigEndian.PutUint32(out[20:], h)
	binary.BigEndian.PutUint32(out[29:], crc32.ChecksumIEEE(out[12:29]))
	return out
}

func TestDecodeErrors(t *testing.T) {
	pngData := encode(t, "png", sample())
	gifData := encode(t, "gif", sample())
	hugeGIF := bytes.Clone(gifData)
	binary.LittleEndian.PutUint16(hugeGIF[6:], 65535) // logical screen 65535×65535
	binary.LittleEndian.PutUint16(hugeGIF[8:], 65535)
	tests := []struct {
		name    string
		data    []byte
		is      error
		wantMsg []string
	}{
		{"empty", nil, nil, []string{"no data"}},
		{"unknown format", []byte("BM\x00\x00 a bitmap header"), ErrUnsupportedFormat, []string{"PNG, JPEG, GIF or WebP", `"BM`}},
		{"text", []byte("hello, this is not an image"), ErrUnsupportedFormat, nil},
		{"PNG over the pixel limit", withPNGSize(t, pngData, 10000, 5000), ErrTooLarge, []string{"PNG", "10000x5000", "40000000"}},
		{"GIF over the pixel limit", hugeGIF, ErrTooLarge, []string{"GIF", "65535x65535"}},
		{"truncated PNG", pngData[:len(pngData)/2], nil, []string{"PNG 40x30", "corrupt or truncated"}},
		{"truncated header", pngData[:20], nil, []string{"PNG", "header"}},
		{"PNG with zero width", withPNGSize(t, pngData, 0, 30), nil, []string{"PNG"}},
		{"corrupt JPEG", append(bytes.Clone(encode(t, "jpeg", sample())[:200]), make([]byte, 50)...), nil, []string{"JPEG"}},
		{"WebP header only", []byte("RIFF\x10\x00\x00\x00WEBPVP8 "), nil, []string{"WebP"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Decode(tt.data)
			if err == nil {
				t.Fatalf("Decode = %v, nil; want an error", img.Bounds())
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
