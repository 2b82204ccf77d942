package ocr

import (
	"image"
	"image/color"
	"math"
	"testing"
)

func TestDetectionSize(t *testing.T) {
	tests := []struct{ w, h, ww, wh int }{
		{1280, 800, 1280, 800},   // already multiples of 32
		{1312, 832, 1312, 832},   // a padded screenshot
		{100, 20, 96, 32},        // rounded, at least 32
		{10, 10, 32, 32},         // tiny
		{3840, 2160, 1920, 1088}, // scaled so the longer side is 1920
		{1000, 7000, 288, 1920},
		{1920, 1920, 1920, 1920},
	}
	for _, tt := range tests {
		if w, h := detectionSize(tt.w, tt.h); w != tt.ww || h != tt.wh {
			t.Errorf("detectionSize(%d, %d) = %d, %d; want %d, %d", tt.w, tt.h, w, h, tt.ww, tt.wh)
		}
	}
}

func TestNewDetInputNormalises(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 32))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	img.SetRGBA(0, 0, color.RGBA{255, 0, 0, 255}) // red
	in := newDetInput(img)
	if in.w != 64 || in.h != 32 || in.sx != 1 || in.sy != 1 || len(in.data) != 3*64*32 {
		t.Fatalf("input %dx%d scale %v,%v len %d", in.w, in.h, in.sx, in.sy, len(in.data))
	}
	plane := 64 * 32
	// BGR planes: red is (B, G, R) = (0, 0, 1).
	for c, want := range []float64{(0 - detMeanB) / detStdB, (0 - detMeanG) / detStdG, (1 - detMeanR) / detStdR} {
		if got := float64(in.data[c*plane]); math.Abs(got-want) > 1e-5 {
			t.Errorf("channel %d of red = %v, want %v", c, got, want)
		}
	}
	if got, want := float64(in.data[plane+5]), (1-detMeanG)/detStdG; math.Abs(got-want) > 1e-5 {
		t.Errorf("white G = %v, want %v", got, want)
	}
}

// probMap is a w×h map with the rectangles filled at p.
func probMap(w, h int, p float32, rects ...image.Rectangle) []float32 {
	m := make([]float32, w*h)
	for _, r := range rects {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				m[y*w+x] = p
			}
		}
	}
	return m
}

func TestComponents(t *testing.T) {
	const w, h = 40, 20
	m := probMap(w, h, 0.9, image.Rect(2, 2, 10, 6), image.Rect(10, 6, 14, 8), // diagonal touch: one region
		image.Rect(20, 10, 30, 12))
	m[5*w+30] = 0.2 // under the threshold
	comps := components(m, w, h, detThresh)
	if len(comps) != 2 {
		t.Fatalf("%d components, want 2 (8-connected)", len(comps))
	}
	if comps[0].pixels != 8*4+4*2 || comps[0].y0 != 2 || len(comps[0].minX) != 6 {
		t.Errorf("first component: %d pixels, rows from %d, %d rows", comps[0].pixels, comps[0].y0, len(comps[0].minX))
	}
	if comps[0].minX[0] != 2 || comps[0].maxX[0] != 9 || comps[0].minX[4] != 10 || comps[0].maxX[5] != 13 {
		t.Errorf("row extremes %v %v", comps[0].minX, comps[0].maxX)
	}
	if comps[1].pixels != 20 {
		t.Errorf("second component %d pixels, want 20", comps[1].pixels)
	}
}

func TestDetBoxes(t *testing.T) {
	const w, h = 320, 96
	// A text line's shrunk region at 0.9, a noise speck, and a faint region under box_thresh.
	m := probMap(w, h, 0.9, image.Rect(40, 30, 240, 40))
	m[80*w+300] = 0.95
	for y := 60; y < 70; y++ {
		for x := 40; x < 200; x++ {
			m[y*w+x] = 0.45
		}
	}
	in := detInput{w: w, h: h, sx: 2, sy: 2, srcW: 2 * w, srcH: 2 * h}
	boxes := detBoxes(m, in)
	if len(boxes) != 1 {
		t.Fatalf("boxes %v, want one (speck too small, faint region under %v)", boxes, detBoxThresh)
	}
	// The region's pixel centres span 199×9; unclip grows each side by area·ratio/perimeter.
	d := 199.0 * 9 * detUnclip / (2 * (199 + 9))
	want := quad{{40 - d, 30 - d}, {239 + d, 30 - d}, {239 + d, 39 + d}, {40 - d, 39 + d}}
	for i, p := range boxes[0] {
		if wp := want[i].mul(2); math.Abs(p.X-wp.X) > 1 || math.Abs(p.Y-wp.Y) > 1 {
			t.Errorf("corner %d = %v, want ≈ %v (scaled ×2 to the source)", i, p, wp)
		}
	}
}

func TestBoxScore(t *testing.T) {
	const w, h = 20, 20
	m := probMap(w, h, 1, image.Rect(0, 0, 10, 20))
	q := quad{{5, 5}, {14, 5}, {14, 14}, {5, 14}} // half on the ones
	if got := boxScore(m, w, h, q); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("boxScore = %v, want 0.5", got)
	}
}
