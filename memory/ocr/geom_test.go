package ocr

import (
	"image"
	"image/color"
	"math"
	"slices"
	"testing"
)

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func nearPt(a, b pt, eps float64) bool { return near(a.X, b.X, eps) && near(a.Y, b.Y, eps) }

func area(q quad) float64 { return q[0].dist(q[1]) * q[0].dist(q[3]) }

// rotated returns the corners of a w×h rectangle centred at c, turned by deg (clockwise on
// screen, y down), in the order tl, tr, br, bl of the unturned rectangle.
func rotated(c pt, w, h, deg float64) quad {
	th := deg * math.Pi / 180
	u := pt{math.Cos(th), math.Sin(th)}
	v := pt{-u.Y, u.X}
	return quad{
		c.sub(u.mul(w / 2)).sub(v.mul(h / 2)),
		c.add(u.mul(w / 2)).sub(v.mul(h / 2)),
		c.add(u.mul(w / 2)).add(v.mul(h / 2)),
		c.sub(u.mul(w / 2)).add(v.mul(h / 2)),
	}
}

func TestConvexHull(t *testing.T) {
	pts := []pt{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {2, 2}, {1, 3}, {2, 0}, {4, 2}}
	hull := convexHull(slices.Clone(pts))
	if len(hull) != 4 {
		t.Fatalf("hull %v, want the 4 corners (interior and collinear points dropped)", hull)
	}
	for _, c := range []pt{{0, 0}, {4, 0}, {4, 4}, {0, 4}} {
		if !slices.Contains(hull, c) {
			t.Errorf("hull %v lacks %v", hull, c)
		}
	}
	for i := range hull { // one turning direction throughout
		if cross3(hull[i], hull[(i+1)%4], hull[(i+2)%4]) <= 0 {
			t.Errorf("hull %v is not convex in one direction at %d", hull, i)
		}
	}
	if got := convexHull([]pt{{1, 1}, {2, 2}}); len(got) != 2 {
		t.Errorf("hull of two points = %v", got)
	}
}

func TestMinAreaRect(t *testing.T) {
	tests := []struct {
		name     string
		rect     quad
		w, h     float64
		interior int
	}{
		{"axis aligned", rotated(pt{50, 20}, 80, 10, 0), 80, 10, 30},
		{"turned 12°", rotated(pt{100, 60}, 120, 16, 12), 120, 16, 50},
		{"turned -30°", rotated(pt{100, 100}, 60, 20, -30), 60, 20, 50},
		{"turned 90°", rotated(pt{40, 80}, 70, 12, 90), 70, 12, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The corners, points on the edges and points inside: the rectangle is the answer.
			pts := append([]pt(nil), tt.rect[:]...)
			for i := range tt.interior {
				f := float64(i) / float64(tt.interior)
				pts = append(pts, lerp(tt.rect[0], tt.rect[1], f), lerp(lerp(tt.rect[0], tt.rect[3], 0.5), lerp(tt.rect[1], tt.rect[2], 0.5), f))
			}
			got := orderBox(minAreaRect(pts))
			if !near(area(got), tt.w*tt.h, 1e-6*tt.w*tt.h) {
				t.Errorf("area %v, want %v (%v)", area(got), tt.w*tt.h, got)
			}
			for _, c := range tt.rect {
				found := false
				for _, g := range got {
					found = found || nearPt(c, g, 1e-6)
				}
				if !found {
					t.Errorf("corner %v not in %v", c, got)
				}
			}
			if got[0].X > got[1].X || got[0].Y > got[3].Y {
				t.Errorf("orderBox gave %v: want top-left, top-right, bottom-right, bottom-left", got)
			}
		})
	}
}

func TestOrderBox(t *testing.T) {
	want := quad{{10, 10}, {50, 12}, {49, 30}, {9, 28}}
	for _, perm := range [][4]int{{0, 1, 2, 3}, {2, 0, 3, 1}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		var q quad
		for i, j := range perm {
			q[i] = want[j]
		}
		if got := orderBox(q); got != want {
			t.Errorf("orderBox(%v) = %v, want %v", q, got, want)
		}
	}
}

func TestExpandRect(t *testing.T) {
	q := rotated(pt{30, 40}, 40, 10, 20)
	got := expandRect(q, 3)
	want := rotated(pt{30, 40}, 46, 16, 20)
	for i := range got {
		if !nearPt(got[i], want[i], 1e-9) {
			t.Fatalf("expandRect = %v, want %v", got, want)
		}
	}
}

func TestQuadContains(t *testing.T) {
	q := rotated(pt{0, 0}, 10, 4, 45)
	for _, tt := range []struct {
		p    pt
		want bool
	}{{pt{0, 0}, true}, {pt{3, 3}, true}, {pt{3, -3}, false}, {pt{6, 6}, false}, {q[2], true}} {
		if got := q.contains(tt.p); got != tt.want {
			t.Errorf("contains(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

// stripes draws a w×h image, white, with a red band across the top quarter and a blue
// square at the left end, so its orientation can be checked.
func stripes(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{255, 255, 255, 255}
			switch {
			case y < h/4:
				c = color.RGBA{255, 0, 0, 255}
			case x < h/2 && y > h/2:
				c = color.RGBA{0, 0, 255, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// checkStripes reports whether img looks like stripes: red on top, blue bottom-left.
func checkStripes(t *testing.T, img *image.RGBA) {
	t.Helper()
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	at := func(fx, fy float64) color.RGBA {
		return img.RGBAAt(b.Min.X+int(fx*float64(w)), b.Min.Y+int(fy*float64(h)))
	}
	if c := at(0.5, 0.1); c.R < 200 || c.G > 60 {
		t.Errorf("top middle %v, want red", c)
	}
	if c := at(0.05, 0.85); c.B < 200 || c.R > 60 {
		t.Errorf("bottom left %v, want blue", c)
	}
	if c := at(0.9, 0.7); c.R < 200 || c.G < 200 || c.B < 200 {
		t.Errorf("bottom right %v, want white", c)
	}
}

func TestCropQuadDeskews(t *testing.T) {
	const w, h = 120, 24
	src := stripes(w, h)
	for _, deg := range []float64{0, 7, -15, 33} {
		// Turn src by deg into a larger canvas, then crop the turned box back out.
		canvas := image.NewRGBA(image.Rect(0, 0, 260, 200))
		c := pt{130, 100}
		box := rotated(c, w, h, deg)
		th := deg * math.Pi / 180
		for y := range 200 {
			for x := range 260 {
				// inverse-rotate the canvas pixel centre into src
				d := pt{float64(x) + 0.5, float64(y) + 0.5}.sub(c)
				sx := d.X*math.Cos(th) + d.Y*math.Sin(th) + w/2
				sy := -d.X*math.Sin(th) + d.Y*math.Cos(th) + h/2
				if sx >= 0 && sx < w && sy >= 0 && sy < h {
					canvas.SetRGBA(x, y, src.RGBAAt(int(sx), int(sy)))
				} else {
					canvas.SetRGBA(x, y, color.RGBA{255, 255, 255, 255})
				}
			}
		}
		got, vertical := cropQuad(canvas, box)
		if vertical {
			t.Errorf("%v°: a wide box reported vertical", deg)
		}
		if b := got.Bounds(); abs(b.Dx()-w) > 1 || abs(b.Dy()-h) > 1 {
			t.Errorf("%v°: crop %v, want %dx%d", deg, b, w, h)
		}
		checkStripes(t, got)
	}
}

func TestCropQuadVertical(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 20, 100))
	for y := range 100 {
		for x := range 20 {
			src.SetRGBA(x, y, color.RGBA{uint8(y * 2), 0, 0, 255})
		}
	}
	got, vertical := cropQuad(src, quad{{0, 0}, {20, 0}, {20, 100}, {0, 100}})
	if !vertical || got.Bounds().Dx() != 100 || got.Bounds().Dy() != 20 {
		t.Fatalf("vertical crop %v (vertical %v), want 100x20 turned", got.Bounds(), vertical)
	}
	// Turned counter-clockwise: the source's top is now at the left.
	if l, r := got.RGBAAt(2, 10).R, got.RGBAAt(97, 10).R; l >= r {
		t.Errorf("left %d, right %d: want the source's top (dark) on the left", l, r)
	}
}

func TestRotate180(t *testing.T) {
	for _, size := range [][2]int{{5, 3}, {4, 4}, {1, 7}} {
		img := image.NewRGBA(image.Rect(0, 0, size[0], size[1]))
		for i := range img.Pix {
			img.Pix[i] = uint8(i)
		}
		orig := image.NewRGBA(img.Rect)
		copy(orig.Pix, img.Pix)
		rotate180(img)
		for y := range size[1] {
			for x := range size[0] {
				if img.RGBAAt(x, y) != orig.RGBAAt(size[0]-1-x, size[1]-1-y) {
					t.Fatalf("%v: pixel %d,%d not from the opposite corner", size, x, y)
				}
			}
		}
	}
}

func TestReadingOrder(t *testing.T) {
	line := func(x, y, w float64) quad { return quad{{x, y}, {x + w, y}, {x + w, y + 20}, {x, y + 20}} }
	right := pt{1, 0}
	tests := []struct {
		name  string
		boxes []quad
		dirs  []pt
		want  []int
	}{
		{"rows top to bottom, left to right within a row",
			[]quad{line(300, 52, 100), line(10, 10, 200), line(10, 50, 200), line(260, 8, 50)},
			[]pt{right, right, right, right}, []int{1, 3, 2, 0}},
		{"a slightly lower box on the same row still reads after its left neighbour",
			[]quad{line(220, 16, 80), line(10, 10, 200)},
			[]pt{right, right}, []int{1, 0}},
		{"an upside-down page reads bottom to top, right to left",
			[]quad{line(10, 10, 200), line(10, 50, 200), line(250, 50, 60)},
			[]pt{{-1, 0}, {-1, 0}, {-1, 0}}, []int{2, 1, 0}},
		{"a page turned a quarter clockwise reads right to left by column",
			[]quad{
				{{100, 10}, {100, 210}, {80, 210}, {80, 10}}, // first line: rightmost column
				{{60, 10}, {60, 210}, {40, 210}, {40, 10}},
			},
			[]pt{{0, 1}, {0, 1}}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readingOrder(tt.boxes, tt.dirs); !slices.Equal(got, tt.want) {
				t.Errorf("readingOrder = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToRGBAPadsWithBackground(t *testing.T) {
	src := image.NewNRGBA(image.Rect(10, 10, 40, 30))
	for y := 10; y < 30; y++ {
		for x := 10; x < 40; x++ {
			src.Set(x, y, color.NRGBA{30, 40, 200, 255}) // a blue background
		}
	}
	src.Set(10, 15, color.NRGBA{0, 0, 0, 255}) // some ink on the edge
	transparent := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for _, tt := range []struct {
		name   string
		img    image.Image
		bg     color.RGBA
		inside color.RGBA
	}{
		{"edge colour", src, color.RGBA{30, 40, 200, 255}, color.RGBA{30, 40, 200, 255}},
		{"transparent over white", transparent, color.RGBA{255, 255, 255, 255}, color.RGBA{255, 255, 255, 255}},
	} {
		got := toRGBA(tt.img, 4)
		b := tt.img.Bounds()
		if got.Bounds() != image.Rect(0, 0, b.Dx()+8, b.Dy()+8) {
			t.Errorf("%s: bounds %v", tt.name, got.Bounds())
		}
		if c := got.RGBAAt(0, 0); c != tt.bg {
			t.Errorf("%s: border %v, want %v", tt.name, c, tt.bg)
		}
		if c := got.RGBAAt(6, 6); c != tt.inside {
			t.Errorf("%s: inside %v, want %v", tt.name, c, tt.inside)
		}
	}
}
