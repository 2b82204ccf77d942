package ocr

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/webp"
)

// MaxPixels is the largest image, in pixels, that [Decode] and [Engine.Recognize] accept
// (40 megapixels: an 8K screenshot is 33). Decoding such an image takes 160 MB.
const MaxPixels = 40_000_000

// ErrTooLarge is wrapped by the errors of [Decode] and [Engine.Recognize] for an image of
// more than [MaxPixels] pixels.
var ErrTooLarge = errors.New("image too large")

// ErrUnsupportedFormat is wrapped by the error of [Decode] for data that is not a PNG, JPEG,
// GIF or WebP image.
var ErrUnsupportedFormat = errors.New("unsupported image format")

// decoders are the formats Decode accepts, by the magic bytes image.RegisterFormat uses.
var decoders = []struct {
	name   string
	magic  string
	config func([]byte) (image.Config, error)
	decode func([]byte) (image.Image, error)
}{
	{"PNG", "\x89PNG\r\n\x1a\n",
		func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }},
	{"JPEG", "\xff\xd8",
		func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }},
	{"GIF", "GIF8",
		func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) }},
	{"WebP", "RIFF????WEBP",
		func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) },
		func(b []byte) (image.Image, error) { return webp.Decode(bytes.NewReader(b)) }},
}

// Decode decodes a PNG, JPEG, GIF (its first frame) or WebP image, as attachments and tool
// results carry them. It reads the header first and refuses an image of more than
// [MaxPixels] pixels before decoding it. Errors name the format and the problem: empty data,
// an unknown format (wraps [ErrUnsupportedFormat]), a size over the limit (wraps
// [ErrTooLarge]), or a corrupt or truncated image.
func Decode(data []byte) (image.Image, error) {
	if len(data) == 0 {
		return nil, errors.New("ocr: decode image: no data")
	}
	for _, d := range decoders {
		if !matchMagic(d.magic, data) {
			continue
		}
		cfg, err := d.config(data)
		if err != nil {
			return nil, fmt.Errorf("ocr: decode %s: corrupt or truncated header: %w", d.name, err)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 {
			return nil, fmt.Errorf("ocr: decode %s: empty image (%dx%d)", d.name, cfg.Width, cfg.Height)
		}
		if px := int64(cfg.Width) * int64(cfg.Height); px > MaxPixels {
			return nil, fmt.Errorf("ocr: decode %s: %w: %dx%d is more than %d pixels", d.name, ErrTooLarge, cfg.Width, cfg.Height, MaxPixels)
		}
		img, err := d.decode(data)
		if err != nil {
			return nil, fmt.Errorf("ocr: decode %s %dx%d: corrupt or truncated image: %w", d.name, cfg.Width, cfg.Height, err)
		}
		return img, nil
	}
	return nil, fmt.Errorf("ocr: decode image: %w (want PNG, JPEG, GIF or WebP; data starts %q)", ErrUnsupportedFormat, head(data, 8))
}

// matchMagic reports whether data starts with magic, '?' matching any byte.
func matchMagic(magic string, data []byte) bool {
	if len(data) < len(magic) {
		return false
	}
	for i := range len(magic) {
		if magic[i] != '?' && magic[i] != data[i] {
			return false
		}
	}
	return true
}

func head(b []byte, n int) []byte { return b[:min(n, len(b))] }
