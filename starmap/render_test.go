package starmap

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/image/font/sfnt"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// scene is a small hand-placed sky: every kind, a pinned star, a recalled one, edges.
func scene() (Graph, Layout) {
	g := Graph{
		Nodes: []Node{
			{ID: 1, Label: "Alice", Kind: "person", Mentions: 120, Pinned: true},
			{ID: 2, Label: "Paris", Kind: "place", Mentions: 30, Recalled: t0.Add(-2 * time.Hour)},
			{ID: 3, Label: "Acme", Kind: "org", Mentions: 8},
			{ID: 4, Label: "idea", Kind: "concept", Mentions: 2},
			{ID: 5, Label: "cat", Kind: "animal", Mentions: 0},
			{ID: 6, Label: "?", Kind: "mystery", Mentions: 15},
		},
		Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 0, To: 2, Weight: 1}, {From: 1, To: 3, Weight: 1}, {From: 2, To: 4, Weight: 1}, {From: 3, To: 5, Weight: 1}, {From: 0, To: 5, Weight: 1}},
	}
	l := Layout{
		Pos:    []Point{{0, 0}, {40, -20}, {-35, 25}, {60, 30}, {-60, -30}, {10, 50}},
		Radius: 80,
	}
	return g, l
}

func newImage(w, h int) *image.RGBA { return image.NewRGBA(image.Rect(0, 0, w, h)) }

func render(r *Renderer, g Graph, l Layout, v View, s State) *image.RGBA {
	dst := newImage(v.Width, v.Height)
	r.Render(dst, g, l, v, s)
	return dst
}

func noSel(aa bool) State { return State{AntiAlias: aa, Selected: -1, Hover: -1} }

// diffPixels counts pixels of a and b (same size) whose channels differ by more than tol.
func diffPixels(a, b *image.RGBA, tol int) int {
	n := 0
	for i := 0; i < len(a.Pix); i += 4 {
		for c := 0; c < 4; c++ {
			if d := int(a.Pix[i+c]) - int(b.Pix[i+c]); d > tol || d < -tol {
				n++
				break
			}
		}
	}
	return n
}

func TestRenderGolden(t *testing.T) {
	g, l := scene()
	for _, tc := range []struct {
		name string
		s    State
	}{
		{"aliased", State{Selected: 2, Hover: 3, Highlight: map[int]bool{4: true}, Dim: map[int]bool{5: true}}},
		{"aa", State{AntiAlias: true, Selected: 2, Hover: 3, Highlight: map[int]bool{4: true}, Dim: map[int]bool{5: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRenderer(RenderOptions{Now: fixedClock(t0)})
			got := render(r, g, l, Fit(l, 160, 120), tc.s)
			path := filepath.Join("testdata", "render_"+tc.name+".png")
			if *update {
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := png.Encode(f, got); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatalf("open golden (run with -update to create): %v", err)
			}
			defer f.Close()
			im, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			want := newImage(160, 120)
			for y := 0; y < 120; y++ {
				for x := 0; x < 160; x++ {
					want.Set(x, y, im.At(x, y))
				}
			}
			// Tolerate rounding differences: a few levels per channel on ≤ 0.5 % of pixels.
			if n := diffPixels(got, want, 6); n > len(got.Pix)/4/200 {
				out := filepath.Join(t.TempDir(), "got.png")
				if f, err := os.Create(out); err == nil {
					_ = png.Encode(f, got)
					f.Close()
				}
				t.Errorf("%d pixels differ from %s (got written to %s)", n, path, out)
			}
		})
	}
}

func TestKindColor(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want color.RGBA
	}{
		{"person", color.RGBA{255, 200, 120, 255}},
		{"place", color.RGBA{110, 220, 170, 255}},
		{"concept", color.RGBA{120, 180, 255, 255}},
		{"note", color.RGBA{200, 190, 230, 255}},
		{"", neutral},
		{"spaceship", neutral},
	} {
		if got := KindColor(tc.kind); got != tc.want {
			t.Errorf("KindColor(%q) = %v, want %v", tc.kind, got, tc.want)
		}
	}
	seen := map[color.RGBA]string{}
	for k, c := range palette {
		if other, dup := seen[c]; dup || c == neutral {
			t.Errorf("kind %q shares its colour with %q", k, other)
		}
		seen[c] = k
	}
}

func TestStarRadius(t *testing.T) {
	l := Layout{Radius: 100}
	fit := Fit(l, 800, 600)
	for _, tc := range []struct {
		name     string
		mentions int
		v        View
		want     float64
	}{
		{"none at fit", 0, fit, 1.5},
		{"negative is none", -5, fit, 1.5},
		{"e²-1 mentions at fit", 6, fit, 1.5 + 1.3*math.Log1p(6)},
		{"4x zoom doubles", 0, View{Zoom: fit.Zoom * 4, Width: 800, Height: 600}, 3},
		{"far out clamps at half", 0, View{Zoom: fit.Zoom / 100, Width: 800, Height: 600}, 0.75},
		{"far in clamps at 8x", 0, View{Zoom: fit.Zoom * 1e6, Width: 800, Height: 600}, 12},
		{"bad zoom is fit size", 0, View{Zoom: math.NaN(), Width: 800, Height: 600}, 1.5},
	} {
		if got := StarRadius(tc.mentions, l, tc.v); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: StarRadius = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !(brightness(0) < brightness(10) && brightness(10) < brightness(200) && brightness(200) == brightness(5000)) {
		t.Error("brightness must grow with mentions up to 200, then saturate")
	}
}

// TestStarColourAndSize renders lone stars and checks their drawn colour and extent.
func TestStarColourAndSize(t *testing.T) {
	l := Layout{Pos: []Point{{0, 0}}, Radius: 10}
	v := Fit(l, 64, 64)
	bg := render(NewRenderer(RenderOptions{}), Graph{}, l, v, noSel(false))
	for _, tc := range []struct {
		kind     string
		mentions int
		dominant int // channel expected brightest at the star's rim: 0 R, 1 G, 2 B
	}{
		{"person", 50, 0},
		{"place", 50, 1},
		{"concept", 50, 2},
		{"org", 50, 2},
	} {
		g := Graph{Nodes: []Node{{Kind: tc.kind, Mentions: tc.mentions}}}
		img := render(NewRenderer(RenderOptions{}), g, l, v, noSel(false))
		rad := StarRadius(tc.mentions, l, v)
		// Ink extent along the row through the centre.
		inked := 0
		for x := 0; x < 64; x++ {
			i := img.PixOffset(x, 32)
			if diffPixels(&image.RGBA{Pix: img.Pix[i : i+4]}, &image.RGBA{Pix: bg.Pix[i : i+4]}, 0) > 0 {
				inked++
			}
		}
		if want := 2 * rad; math.Abs(float64(inked)-want) > 1.5 {
			t.Errorf("%s: star %d px wide, want ≈ %.1f", tc.kind, inked, want)
		}
		p := img.RGBAAt(32+int(rad)-1, 32)
		ch := [3]uint8{p.R, p.G, p.B}
		for c := range 3 {
			if c != tc.dominant && ch[c] > ch[tc.dominant] {
				t.Errorf("%s: rim pixel %v, want channel %d dominant", tc.kind, p, tc.dominant)
			}
		}
	}
	// More mentions: bigger and brighter.
	sum := func(m int) (total int) {
		img := render(NewRenderer(RenderOptions{}), Graph{Nodes: []Node{{Kind: "thing", Mentions: m}}}, l, v, noSel(true))
		for _, b := range img.Pix {
			total += int(b)
		}
		return total
	}
	if a, b := sum(1), sum(100); a >= b {
		t.Errorf("light of 1 mention %d ≥ light of 100 mentions %d", a, b)
	}
}

func TestEdgeCulling(t *testing.T) {
	// Two stars far off-screen; the view is 100×100 around the origin.
	v := View{Zoom: 1, Width: 100, Height: 100}
	l := Layout{Radius: 50, Pos: []Point{{-500, -500}, {-500, 500}, {500, 500}, {-200, 0}, {200, 0}}}
	nodes := make([]Node, 5)
	for _, aa := range []bool{false, true} {
		bg := render(NewRenderer(RenderOptions{}), Graph{Nodes: nodes}, l, v, noSel(aa))
		for _, tc := range []struct {
			name string
			e    Edge
			ink  bool
		}{
			{"both ends left of the view", Edge{From: 0, To: 1, Weight: 1}, false},
			{"passes below a corner", Edge{From: 1, To: 2, Weight: 1}, false},
			{"crosses the view", Edge{From: 3, To: 4, Weight: 1}, true},
			{"diagonal through the view", Edge{From: 0, To: 2, Weight: 1}, true},
			{"out of range", Edge{From: 0, To: 9, Weight: 1}, false},
			{"negative index", Edge{From: -1, To: 2, Weight: 1}, false},
		} {
			img := render(NewRenderer(RenderOptions{}), Graph{Nodes: nodes, Edges: []Edge{tc.e}}, l, v, noSel(aa))
			n := diffPixels(img, bg, 0)
			if tc.ink && n < 50 || !tc.ink && n != 0 {
				t.Errorf("aa=%v %s: %d pixels inked", aa, tc.name, n)
			}
		}
	}
}

func TestClipLine(t *testing.T) {
	for _, tc := range []struct {
		name           string
		x0, y0, x1, y1 float64
		ok             bool
		ax, ay, bx, by float64
	}{
		{"inside", 1, 1, 5, 5, true, 1, 1, 5, 5},
		{"crossing", -5, 5, 15, 5, true, 0, 5, 10, 5},
		{"outside", -5, -5, -1, 20, false, 0, 0, 0, 0},
		{"vertical outside", 11, 0, 11, 10, false, 0, 0, 0, 0},
		{"diagonal", -10, -10, 20, 20, true, 0, 0, 10, 10},
	} {
		ax, ay, bx, by, ok := clipLine(tc.x0, tc.y0, tc.x1, tc.y1, 0, 0, 10, 10)
		if ok != tc.ok || ok && (ax != tc.ax || ay != tc.ay || bx != tc.bx || by != tc.by) {
			t.Errorf("%s: got (%v,%v)-(%v,%v) %v", tc.name, ax, ay, bx, by, ok)
		}
	}
}

func TestGlowFades(t *testing.T) {
	l := Layout{Pos: []Point{{0, 0}}, Radius: 10}
	v := Fit(l, 64, 64)
	light := func(recalled time.Time, now time.Time) int {
		g := Graph{Nodes: []Node{{Kind: "event", Mentions: 10, Recalled: recalled}}}
		img := render(NewRenderer(RenderOptions{Now: fixedClock(now)}), g, l, v, noSel(true))
		total := 0
		for _, b := range img.Pix {
			total += int(b)
		}
		return total
	}
	never := light(time.Time{}, t0)
	var prev int
	for k, age := range []time.Duration{0, time.Hour, 12 * time.Hour, 23 * time.Hour} {
		got := light(t0.Add(-age), t0)
		if got <= never {
			t.Errorf("recalled %v ago: no glow (%d ≤ %d)", age, got, never)
		}
		if k > 0 && got >= prev {
			t.Errorf("recalled %v ago: glow %d not fainter than before (%d)", age, got, prev)
		}
		prev = got
	}
	if got := light(t0.Add(-GlowWindow), t0); got != never {
		t.Errorf("glow after %v: %d, want none (%d)", GlowWindow, got, never)
	}
	if got, want := light(t0.Add(time.Hour), t0), light(t0, t0); got != want {
		t.Errorf("recall in the future (clock skew) should glow fully: %d, want %d", got, want)
	}
}

func TestRenderBadInputs(t *testing.T) {
	g, l := scene()
	r := NewRenderer(RenderOptions{Now: fixedClock(t0)})
	// Zero-size images draw nothing and do not panic.
	for _, dst := range []*image.RGBA{newImage(0, 0), newImage(0, 10), image.NewRGBA(image.Rect(5, 5, 5, 9))} {
		r.Render(dst, g, l, Fit(l, 0, 0), noSel(true))
	}
	bg := render(r, Graph{}, Layout{}, View{Zoom: 1, Width: 40, Height: 30}, noSel(true))
	// Empty graph, layout shorter than the graph, bad views: background only.
	for _, tc := range []struct {
		name string
		g    Graph
		l    Layout
		v    View
	}{
		{"empty graph", Graph{}, l, Fit(l, 40, 30)},
		{"no positions", g, Layout{}, Fit(l, 40, 30)},
		{"NaN zoom", g, l, View{Zoom: math.NaN(), Width: 40, Height: 30}},
		{"all NaN", g, Layout{Pos: []Point{{math.NaN(), 0}, {0, math.Inf(1)}}}, View{Zoom: 1, Width: 40, Height: 30}},
	} {
		for _, aa := range []bool{false, true} {
			img := render(r, tc.g, tc.l, tc.v, noSel(aa))
			if n := diffPixels(img, bg, 0); n != 0 {
				t.Errorf("%s aa=%v: %d pixels drawn over the background", tc.name, aa, n)
			}
		}
	}
	// A NaN node is skipped with its edges; the rest is drawn as if it did not exist.
	l2 := Layout{Radius: l.Radius, Pos: append([]Point(nil), l.Pos...)}
	l2.Pos[4] = Point{math.NaN(), math.NaN()}
	// The same sky without node 4 (whose only edge is 2–4), renumbered.
	g3 := Graph{
		Nodes: []Node{g.Nodes[0], g.Nodes[1], g.Nodes[2], g.Nodes[3], g.Nodes[5]},
		Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 0, To: 2, Weight: 1}, {From: 1, To: 3, Weight: 1}, {From: 3, To: 4, Weight: 1}, {From: 0, To: 4, Weight: 1}},
	}
	l3 := Layout{Radius: l.Radius, Pos: []Point{l.Pos[0], l.Pos[1], l.Pos[2], l.Pos[3], l.Pos[5]}}
	for _, aa := range []bool{false, true} {
		withNaN := render(r, g, l2, Fit(l, 80, 60), noSel(aa))
		without := render(r, g3, l3, Fit(l, 80, 60), noSel(aa))
		if n := diffPixels(withNaN, without, 0); n != 0 {
			t.Errorf("aa=%v: NaN node changed %d pixels", aa, n)
		}
	}
}

func TestRenderIntoSubImage(t *testing.T) {
	g, l := scene()
	big := newImage(100, 100)
	for i := range big.Pix {
		big.Pix[i] = 7
	}
	sub := big.SubImage(image.Rect(20, 30, 80, 70)).(*image.RGBA)
	r := NewRenderer(RenderOptions{})
	r.Render(sub, g, l, Fit(l, 60, 40), noSel(true))
	alone := render(NewRenderer(RenderOptions{}), g, l, Fit(l, 60, 40), noSel(true))
	for y := 0; y < 100; y++ {
		for x := 0; x < 100; x++ {
			got := big.RGBAAt(x, y)
			inside := image.Pt(x, y).In(sub.Rect)
			if !inside && got != (color.RGBA{7, 7, 7, 7}) {
				t.Fatalf("pixel (%d,%d) outside the sub-image changed to %v", x, y, got)
			}
			if inside && got != alone.RGBAAt(x-20, y-30) {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, alone.RGBAAt(x-20, y-30))
			}
		}
	}
}

func loadTestFont(t testing.TB) *Font {
	t.Helper()
	f, err := LoadFont()
	if err != nil {
		t.Skipf("no label font installed (fonts-noto-cjk or fonts-dejavu-core): %v", err)
	}
	return f
}

// labelScene is one big star with a label, zoomed so that it is labelled.
func labelScene(label string) (Graph, Layout, View) {
	g := Graph{Nodes: []Node{{Label: label, Kind: "place", Mentions: 500}}}
	l := Layout{Pos: []Point{{0, 0}}, Radius: 10}
	v := Fit(l, 120, 60)
	v.Center = Point{4, 0} // star left of centre, label to its right
	return g, l, v
}

func TestCJKLabel(t *testing.T) {
	f := loadTestFont(t)
	var buf sfnt.Buffer
	for _, ru := range "北京" {
		if gi, err := f.sf.GlyphIndex(&buf, ru); err != nil || gi == 0 {
			t.Skipf("font %s has no glyph for %q", f.Path, ru)
		}
	}
	g, l, v := labelScene("北京")
	r := NewRenderer(RenderOptions{Font: f})
	img := render(r, g, l, v, noSel(true))
	g.Nodes[0].Label = ""
	bare := render(r, g, l, v, noSel(true))
	p := v.ToPixel(l.Pos[0])
	rad := StarRadius(500, l, v)
	if sz := labelSize(rad, false); sz < MinLabelPx {
		t.Fatalf("label size %d below %d: scene not labelled", sz, MinLabelPx)
	}
	// Ink in the label box right of the star; none elsewhere.
	box := image.Rect(int(p.X+rad+2), int(p.Y)-MaxLabelPx, 120, int(p.Y)+MaxLabelPx)
	in, out := 0, 0
	for y := 0; y < 60; y++ {
		for x := 0; x < 120; x++ {
			if img.RGBAAt(x, y) != bare.RGBAAt(x, y) {
				if image.Pt(x, y).In(box) {
					in++
				} else {
					out++
				}
			}
		}
	}
	if in < 30 || out != 0 {
		t.Errorf("label ink: %d pixels in its box (want ≥ 30), %d outside (want 0)", in, out)
	}
}

func TestLabelThreshold(t *testing.T) {
	for _, tc := range []struct {
		rad  float64
		hl   bool
		want int
	}{
		{1, false, 0},
		{5.5, false, 0},
		{6.1, false, 0},
		{6.2, false, 11},
		{7, false, 12},
		{40, false, MaxLabelPx},
		{1, true, MinLabelPx},
		{7, true, 12},
	} {
		if got := labelSize(tc.rad, tc.hl); got != tc.want {
			t.Errorf("labelSize(%v, %v) = %d, want %d", tc.rad, tc.hl, got, tc.want)
		}
	}
}

func TestLabelCollision(t *testing.T) {
	f := loadTestFont(t)
	l := Layout{Pos: []Point{{0, 0}, {3, 0.5}}, Radius: 10}
	v := Fit(l, 200, 80)
	v.Center = Point{6, 0}
	r := NewRenderer(RenderOptions{Font: f})
	two := Graph{Nodes: []Node{
		{Label: "Big star", Kind: "person", Mentions: 900},
		{Label: "Small star", Kind: "thing", Mentions: 300},
	}}
	if labelSize(StarRadius(300, l, v), false) == 0 {
		t.Fatal("scene too small for the second label")
	}
	both := render(r, two, l, v, noSel(true))
	labels := append([]PlacedLabel(nil), r.Labels()...)
	two.Nodes[1].Label = ""
	first := render(r, two, l, v, noSel(true))
	if n := diffPixels(both, first, 0); n < 30 {
		t.Errorf("the second label was not drawn elsewhere: %d pixels differ", n)
	}
	if len(labels) != 2 || labels[0].Node != 0 || labels[1].Node != 1 {
		t.Fatalf("labels %+v, want the big star's then the small one's", labels)
	}
	if labels[0].Rect.Overlaps(labels[1].Rect) {
		t.Errorf("labels overlap: %v and %v", labels[0].Rect, labels[1].Rect)
	}
	// The small star's label would overlap the big one's on its right: it went to another side.
	p := v.ToPixel(l.Pos[1])
	if right := labels[1].Rect.Min.X >= int(p.X); right {
		t.Errorf("the second label %v is right of its star at %v, over the first %v", labels[1].Rect, p, labels[0].Rect)
	}
}

func TestLabelOccupancy(t *testing.T) {
	f := loadTestFont(t)
	r := NewRenderer(RenderOptions{Font: f})
	dst := newImage(200, 100)
	r.occW, r.occH = 200/labelCell, 100/labelCell
	r.occ = make([]bool, r.occW*r.occH)
	c := color.RGBA{255, 255, 255, 255}
	for _, tc := range []struct {
		name string
		x, y float64
		want bool
	}{
		{"first", 10, 20, true},
		{"same place", 12, 22, false},
		{"below", 10, 60, true},
		{"cut by right edge", 190, 80, false},
		{"cut by top edge", 100, 2, false},
	} {
		if got := r.label(dst, 200, 100, "Label", tc.x, tc.y, 12, c); got != tc.want {
			t.Errorf("%s: drawn = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLoadFont(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.ttf")
	if err := os.WriteFile(junk, []byte("not a font"), 0o600); err != nil {
		t.Fatal(err)
	}
	saved := DefaultFontPaths
	t.Cleanup(func() { DefaultFontPaths = saved })

	DefaultFontPaths = nil
	for _, paths := range [][]string{nil, {filepath.Join(dir, "missing.ttf")}, {junk}} {
		if f, err := LoadFont(paths...); err == nil {
			t.Errorf("LoadFont(%v) = %v, want an error", paths, f.Path)
		}
	}
	DefaultFontPaths = saved
	for _, p := range saved {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		f, err := LoadFont(junk, p)
		if err != nil {
			t.Errorf("LoadFont(junk, %s): %v", p, err)
			continue
		}
		if f.Path != p || f.Name == "" {
			t.Errorf("LoadFont(junk, %s) = %q %q", p, f.Path, f.Name)
		}
		if filepath.Ext(p) == ".ttc" && !containsSC(f.Name) {
			t.Errorf("collection %s: chose %q, want the SC member", p, f.Name)
		}
	}
}

func containsSC(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if s[i:i+3] == " SC" {
			return true
		}
	}
	return false
}

func TestRenderAllocs(t *testing.T) {
	g, l := clusteredGraph(2000, 4000, 10, 1)
	for i := range g.Nodes {
		g.Nodes[i].Recalled = t0.Add(-time.Duration(i) * time.Minute)
	}
	var f *Font
	if ff, err := LoadFont(); err == nil {
		f = ff
	}
	r := NewRenderer(RenderOptions{Font: f, Now: fixedClock(t0)})
	dst := newImage(320, 200)
	v := Fit(l, 320, 200)
	v.Zoom *= 3
	for _, aa := range []bool{false, true} {
		s := State{AntiAlias: aa, Selected: 3, Hover: 4, Highlight: map[int]bool{1: true, 9: true}, Dim: map[int]bool{2: true}}
		r.Render(dst, g, l, v, s) // warm up buffers and glyphs
		if n := testing.AllocsPerRun(5, func() { r.Render(dst, g, l, v, s) }); n != 0 {
			t.Errorf("aa=%v: %v allocations per frame, want 0", aa, n)
		}
	}
}
