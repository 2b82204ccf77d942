package gui

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/software"
	"fyne.io/fyne/v2/test"
)

var updateIcon = flag.Bool("update-icon", false, "render assets/icon.svg into assets/icon.png")

// renderIcon draws the SVG icon at 256×256 with Fyne's own software painter.
func renderIcon(t *testing.T) image.Image {
	t.Helper()
	test.NewTempApp(t)
	img := canvas.NewImageFromResource(IconSVG())
	img.FillMode = canvas.ImageFillContain
	c := software.NewTransparentCanvas()
	c.SetPadded(false)
	c.SetContent(img)
	c.Resize(fyne.NewSize(256, 256))
	return c.Capture()
}

// TestIconPNG checks that the embedded PNG is the SVG rendered at 256×256 (and regenerates it
// with -update-icon), and that it looks like the design: a transparent outside, a dark disc,
// a bright star in the middle.
func TestIconPNG(t *testing.T) {
	want := renderIcon(t)
	if *updateIcon {
		var buf bytes.Buffer
		if err := png.Encode(&buf, want); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("assets", "icon.png"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		iconPNG = buf.Bytes()
	}
	got, err := png.Decode(bytes.NewReader(iconPNG))
	if err != nil {
		t.Fatalf("embedded icon.png: %v", err)
	}
	if b := got.Bounds(); b.Dx() != 256 || b.Dy() != 256 {
		t.Fatalf("icon.png is %v, want 256×256", b)
	}
	if d := maxDiff(got, want); d > 8 {
		t.Fatalf("icon.png differs from icon.svg rendered (max channel difference %d): run with -update-icon", d)
	}
	lum := func(c color.Color) int {
		r, g, b, _ := c.RGBA()
		return int(r>>8+g>>8+b>>8) / 3
	}
	if _, _, _, a := got.At(2, 2).RGBA(); a != 0 {
		t.Errorf("corner is not transparent (alpha %d)", a>>8)
	}
	if l := lum(got.At(128, 20)); l > 90 {
		t.Errorf("the disc is not dark at the top (luminance %d)", l)
	}
	if l := lum(got.At(128, 128)); l < 200 {
		t.Errorf("the star is not bright in the middle (luminance %d)", l)
	}
}

func maxDiff(a, b image.Image) int {
	m := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			for _, d := range []int{int(r1>>8) - int(r2>>8), int(g1>>8) - int(g2>>8), int(b1>>8) - int(b2>>8), int(a1>>8) - int(a2>>8)} {
				if d < 0 {
					d = -d
				}
				m = max(m, d)
			}
		}
	}
	return m
}
