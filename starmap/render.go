package starmap

import (
	"cmp"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Label and glow parameters.
const (
	// MinLabelPx is the smallest label text size drawn, in pixels. A star's label size grows with
	// its drawn radius (1.8× the radius, capped at MaxLabelPx), so labels appear as the zoom makes
	// them readable; below MinLabelPx they are skipped (highlighted stars are labelled at
	// MinLabelPx at any zoom).
	MinLabelPx = 11
	// HubLabelPx is the smallest label text size of a hub (a person), in pixels.
	HubLabelPx = 13
	// PointerRadius is how near the pointer, in pixels, a star is labelled whatever its size.
	PointerRadius = 90
	// MaxLabelPx caps the label text size, in pixels.
	MaxLabelPx = 16
	// GlowWindow is how long a recalled star glows: the halo fades linearly from full at the
	// moment of recall to nothing GlowWindow later.
	GlowWindow = 24 * time.Hour
	// labelCell is the side, in pixels, of the label occupancy grid's cells.
	labelCell = 4
)

// The palette, by Node.Kind. Kinds not listed are drawn in neutral white-blue (210,220,255).
//
//	person  warm gold   (255,200,120)   place   sea green  (110,220,170)
//	org     violet      (180,140,255)   thing   orange     (255,150, 90)
//	concept sky blue    (120,180,255)   time    pale yellow(240,230,140)
//	event   rose        (255,120,160)   animal  lime       (170,230,100)
//	note    lilac       (200,190,230)
var palette = map[string]color.RGBA{
	"person":  {255, 200, 120, 255},
	"place":   {110, 220, 170, 255},
	"org":     {180, 140, 255, 255},
	"thing":   {255, 150, 90, 255},
	"concept": {120, 180, 255, 255},
	"time":    {240, 230, 140, 255},
	"event":   {255, 120, 160, 255},
	"animal":  {170, 230, 100, 255},
	"note":    {200, 190, 230, 255},
}

// RelationClasses is the number of edge classes: 0 the default, then the relation palette.
const RelationClasses = 8

// relationPalette colours edges by Edge.Class; class 0 (and unknown classes) is the faint
// default blue.
var relationPalette = [RelationClasses]color.RGBA{
	{150, 175, 230, 255}, // default
	{255, 196, 110, 255}, // amber
	{100, 225, 160, 255}, // green
	{190, 150, 255, 255}, // violet
	{255, 140, 90, 255},  // orange
	{255, 110, 170, 255}, // pink
	{90, 215, 235, 255},  // cyan
	{235, 235, 130, 255}, // yellow
}

// RelationColor returns the colour edges of a class are drawn in (class 0 and classes out of
// range: the default).
func RelationColor(class int) color.RGBA {
	if class <= 0 || class >= RelationClasses {
		return relationPalette[0]
	}
	return relationPalette[class]
}

// neutral is the colour of stars of unknown kinds.
var neutral = color.RGBA{210, 220, 255, 255}

// KindColor returns the fixed colour of a kind (see the palette above); unknown kinds get a
// neutral white-blue.
func KindColor(kind string) color.RGBA {
	if c, ok := palette[kind]; ok {
		return c
	}
	return neutral
}

// StarRadius returns the drawn radius, in pixels, of a star with the given mentions in view v
// of layout l: (1.5 + 1.3·ln(1+mentions)) px at the Fit zoom, scaled by √(zoom/fitZoom) clamped
// to [0.5, 8]. Hit-testing uses the same radius.
func StarRadius(mentions int, l Layout, v View) float64 {
	return starRadius(mentions, viewScale(l.Radius, v))
}

func starRadius(mentions int, scale float64) float64 {
	return (1.5 + 1.3*math.Log1p(float64(max(mentions, 0)))) * scale
}

// viewScale is √(v.Zoom / Fit zoom) clamped to [0.5, 8] (1 when undefined).
func viewScale(radius float64, v View) float64 {
	if !(radius > 0) || math.IsInf(radius, 0) {
		radius = 1
	}
	fz := 0.45 * float64(min(v.Width, v.Height)) / radius
	if !(fz > 0) || !(v.Zoom > 0) || math.IsInf(v.Zoom, 0) {
		return 1
	}
	return math.Min(8, math.Max(0.5, math.Sqrt(v.Zoom/fz)))
}

// brightness lights a star by its mentions: 0.45 for none up to 1 at 200 or more.
func brightness(mentions int) float64 {
	return 0.45 + 0.55*math.Min(1, math.Log1p(float64(max(mentions, 0)))/math.Log1p(200))
}

// RenderOptions configure a Renderer.
type RenderOptions struct {
	// Font draws labels; nil draws none.
	Font *Font
	// Now is the clock for the glow of recently recalled stars; nil means time.Now.
	Now func() time.Time
}

// State is what the user is doing with the map, drawn on top of the graph.
type State struct {
	// AntiAlias draws smooth edges and stars (at rest); false draws aliased ones (while dragging).
	AntiAlias bool
	// Selected and Hover are node indices, -1 for none; they are outlined.
	Selected, Hover int
	// Highlight marks search or filter matches: ringed, fully lit and always labelled.
	Highlight map[int]bool
	// Dim marks nodes filtered out: drawn faint, unlabelled, without glow; their edges fainter.
	Dim map[int]bool
	// Pointer is where the pointer is, in view pixels, when PointerIn: the stars within
	// PointerRadius of it are labelled.
	Pointer   Point
	PointerIn bool
	// HoverEdge is 1 + the index of the hovered edge (0: none): drawn bright, and with its
	// Label at its middle when EdgeTip (a host without tooltips of its own).
	HoverEdge int
	EdgeTip   bool
}

// PlacedLabel is a label the last frame drew: the node it names, its box in view pixels and its
// text size.
type PlacedLabel struct {
	Node int
	Rect image.Rectangle
	Size int
}

// Renderer rasterises graphs. It keeps its buffers between frames, so after the first frame of a
// given size Render allocates nothing. A Renderer is not safe for concurrent use.
type Renderer struct {
	font *Font
	now  func() time.Time

	bg         []uint8 // cached background, W*H*4, stride W*4
	bgW, bgH   int
	pos        []Point   // node positions in pixels
	rad        []float64 // node radii in pixels
	ok         []bool    // position is finite
	vis        visible   // on-screen stars, biggest first
	ras        *vector.Rasterizer
	uni        image.Uniform
	edgeCol    color.NRGBA
	occ        []bool // label occupancy grid
	occW, occH int
	placed     []PlacedLabel
	named      []bool       // node already labelled this frame
	widths     []labelWidth // measured labels, by node
	near       []int32      // stars near the pointer, nearest first
	nearD      []float64    // their distances, by node
	faces      map[int]*faceCache
	glyphs     map[glyphKey]*glyph
}

// labelWidth caches the measured width of a node's label at a size.
type labelWidth struct {
	text  string
	size  int
	width float64
	end   int // the bytes of text kept (see measure)
}

type faceCache struct {
	face      font.Face // nil when the face could not be made
	asc, desc float64
}

type glyphKey struct {
	size int
	r    rune
}

type glyph struct {
	mask *image.Alpha // nil for blank glyphs
	off  image.Point  // mask origin relative to the dot
	adv  float64
}

// visible holds the on-screen stars, biggest first, and the buffers of their counting sort.
type visible struct {
	idx    []int32
	tmp    []int32
	counts []int32
}

// radiusBuckets quantises radii for sorting: 1/8 px steps, capped.
const radiusBuckets = 1024

// sortVisible orders r.vis.idx by radius, biggest first, in 1/8 px steps (ties keep the index
// order): a counting sort, linear and allocation-free.
func (r *Renderer) sortVisible() {
	v := &r.vis
	v.counts = grow(v.counts, radiusBuckets+1)
	clear(v.counts)
	key := func(i int32) int { return radiusBuckets - 1 - min(radiusBuckets-1, int(r.rad[i]*8)) }
	for _, i := range v.idx {
		v.counts[key(i)+1]++
	}
	for k := 1; k <= radiusBuckets; k++ {
		v.counts[k] += v.counts[k-1]
	}
	v.tmp = grow(v.tmp, len(v.idx))
	for _, i := range v.idx {
		k := key(i)
		v.tmp[v.counts[k]] = i
		v.counts[k]++
	}
	v.idx, v.tmp = v.tmp, v.idx
}

// NewRenderer returns a Renderer with options o.
func NewRenderer(o RenderOptions) *Renderer {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Renderer{
		font:   o.Font,
		now:    now,
		faces:  map[int]*faceCache{},
		glyphs: map[glyphKey]*glyph{},
	}
}

// Render draws graph g laid out by l, seen through v, into dst: the sky background, the edges, the
// stars (with glow, rings and outlines) and the labels. View pixel (0,0) is dst.Bounds().Min;
// whatever falls outside dst is clipped. Nodes without a finite position, and edges with an end
// out of range, are skipped.
func (r *Renderer) Render(dst *image.RGBA, g Graph, l Layout, v View, s State) {
	W, H := dst.Rect.Dx(), dst.Rect.Dy()
	if W <= 0 || H <= 0 {
		return
	}
	r.background(dst, W, H)
	n := min(len(g.Nodes), len(l.Pos))
	if n == 0 {
		return
	}
	scale := viewScale(l.Radius, v)
	r.project(g, l, v, n, scale)
	r.drawEdges(dst, g, n, W, H, scale, s)

	// Visible stars, biggest first; drawn biggest first so small ones stay visible on top.
	r.vis.idx = r.vis.idx[:0]
	for i := 0; i < n; i++ {
		if !r.ok[i] {
			continue
		}
		p, m := r.pos[i], r.rad[i]*4+8 // room for glow and rings
		if p.X+m < 0 || p.Y+m < 0 || p.X-m > float64(W) || p.Y-m > float64(H) {
			continue
		}
		r.vis.idx = append(r.vis.idx, int32(i))
	}
	r.sortVisible()
	r.placed = r.placed[:0]

	now := r.now()
	for _, i := range r.vis.idx {
		nd := &g.Nodes[i]
		if s.Dim[int(i)] || nd.Recalled.IsZero() {
			continue
		}
		age := now.Sub(nd.Recalled)
		if age >= GlowWindow {
			continue
		}
		strength := 1 - float64(max(age, 0))/float64(GlowWindow)
		r.glow(dst, W, H, r.pos[i], r.rad[i], KindColor(nd.Kind), strength)
	}
	for _, i := range r.vis.idx {
		r.star(dst, W, H, g, int(i), s)
	}
	if r.font != nil {
		r.labels(dst, W, H, g, s)
		r.edgeTip(dst, W, H, g, n, s)
	}
}

// Labels returns the labels the last Render drew, in the order they were placed (valid until
// the next Render). Their boxes are pairwise disjoint and inside the image.
func (r *Renderer) Labels() []PlacedLabel { return r.placed }

// project maps node positions to pixels and sizes the stars.
func (r *Renderer) project(g Graph, l Layout, v View, n int, scale float64) {
	r.pos = grow(r.pos, n)
	r.rad = grow(r.rad, n)
	r.ok = grow(r.ok, n)
	for i := 0; i < n; i++ {
		p := v.ToPixel(l.Pos[i])
		r.pos[i] = p
		r.ok[i] = finite(p.X) && finite(p.Y)
		r.rad[i] = starRadius(g.Nodes[i].Mentions, scale)
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// background copies the cached sky (rebuilt when the size changes) into dst.
func (r *Renderer) background(dst *image.RGBA, W, H int) {
	if r.bgW != W || r.bgH != H {
		r.bg = buildBackground(W, H)
		r.bgW, r.bgH = W, H
	}
	for y := 0; y < H; y++ {
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+W*4], r.bg[y*W*4:(y+1)*W*4])
	}
}

// buildBackground draws a dark radial gradient (deep blue at the centre to near black at the
// corners) and about one faint background star per 2,500 pixels, at positions fixed for a size.
func buildBackground(W, H int) []uint8 {
	bg := make([]uint8, W*H*4)
	cx, cy := float64(W)/2, float64(H)/2
	half := math.Hypot(cx, cy)
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			t := math.Min(1, math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy)/half)
			t = t * t
			i := (y*W + x) * 4
			bg[i+0] = uint8(16 + (3-16)*t)
			bg[i+1] = uint8(20 + (4-20)*t)
			bg[i+2] = uint8(44 + (12-44)*t)
			bg[i+3] = 255
		}
	}
	seed := uint64(0x9E3779B97F4A7C15)
	rnd := func() uint64 { // xorshift64*: deterministic, no global state
		seed ^= seed >> 12
		seed ^= seed << 25
		seed ^= seed >> 27
		return seed * 2685821657736338717
	}
	for k := W * H / 2500; k > 0; k-- {
		x, y := int(rnd()%uint64(W)), int(rnd()%uint64(H))
		b := 40 + int(rnd()%110)
		i := (y*W + x) * 4
		bg[i+0] = uint8(min(255, int(bg[i+0])+b*8/10))
		bg[i+1] = uint8(min(255, int(bg[i+1])+b*9/10))
		bg[i+2] = uint8(min(255, int(bg[i+2])+b))
	}
	return bg
}

// blendOver composites colour c at coverage a (0..256) over the pixel p.
func blendOver(p []uint8, c color.RGBA, a int) {
	p[0] = uint8(int(p[0]) + (int(c.R)-int(p[0]))*a>>8)
	p[1] = uint8(int(p[1]) + (int(c.G)-int(p[1]))*a>>8)
	p[2] = uint8(int(p[2]) + (int(c.B)-int(p[2]))*a>>8)
	p[3] = 255
}

// blendAdd adds colour c scaled by k (0..1) to the pixel p, saturating.
func blendAdd(p []uint8, c color.RGBA, k float64) {
	p[0] = uint8(math.Min(255, float64(p[0])+float64(c.R)*k))
	p[1] = uint8(math.Min(255, float64(p[1])+float64(c.G)*k))
	p[2] = uint8(math.Min(255, float64(p[2])+float64(c.B)*k))
}

// edgeAlpha is the opacity of edges: fainter when there are many (0.45 up to 200 edges, falling
// as 1/√count) and brighter when zoomed in (× the view scale), clamped to [0.06, 0.2]: the
// hundreds of edges of a hub stay a faint web, not a haze.
func edgeAlpha(count int, scale float64) float64 {
	base := 0.45 * math.Sqrt(200/float64(max(count, 200)))
	return math.Min(0.2, math.Max(0.06, base*scale))
}

// drawEdges draws the edges in their relation class's colour (Edge.Class), after Liang–Barsky
// clipping: aliased with Bresenham, or anti-aliased with Xiaolin Wu's lines. Edges that do not
// cross the image are culled. Classed edges are drawn brighter than default ones, long ones
// (see long) in the faint default colour, and the hovered edge (State.HoverEdge) brightest, and
// wider when anti-aliased.
func (r *Renderer) drawEdges(dst *image.RGBA, g Graph, n, W, H int, scale float64, s State) {
	alpha := edgeAlpha(len(g.Edges), scale)
	classAlpha := func(c int) float64 {
		if c <= 0 || c >= RelationClasses {
			return alpha
		}
		return math.Min(0.45, alpha*1.8)
	}
	hover := s.HoverEdge - 1
	if !s.AntiAlias {
		var a8 [RelationClasses]int
		for c := range a8 {
			a8[c] = int(classAlpha(c) * 256)
		}
		d8 := int(alpha * 0.3 * 256)
		xmax, ymax := float64(W)-1e-6, float64(H)-1e-6
		for k, e := range g.Edges {
			p, q, ok := r.edgeEnds(e, n)
			if !ok {
				continue
			}
			ax, ay, bx, by, ok := clipLine(p.X, p.Y, q.X, q.Y, 0, 0, xmax, ymax)
			if !ok {
				continue
			}
			c := e.Class
			if c < 0 || c >= RelationClasses || r.long(p, q, W, H) {
				c = 0
			}
			a := a8[c]
			if s.Dim[e.From] || s.Dim[e.To] {
				a = d8
			}
			if k == hover {
				a = 240
			}
			bresenham(dst, int(ax), int(ay), int(bx), int(by), relationPalette[c], a)
		}
		return
	}
	// Anti-aliased: Xiaolin Wu's lines, each in its class's colour (long ones in the faint
	// default), their cost growing with their length only; then the hovered edge, wider, as a
	// quad in one vector.Rasterizer pass.
	var aw [RelationClasses]float64
	for c := range aw {
		aw[c] = classAlpha(c)
	}
	for k, e := range g.Edges {
		p, q, ok := r.edgeEnds(e, n)
		if !ok || k == hover {
			continue
		}
		ax, ay, bx, by, ok := clipLine(p.X, p.Y, q.X, q.Y, 0, 0, float64(W)-1e-6, float64(H)-1e-6)
		if !ok {
			continue
		}
		c := e.Class
		if c < 0 || c >= RelationClasses || r.long(p, q, W, H) {
			c = 0
		}
		a := aw[c]
		if s.Dim[e.From] || s.Dim[e.To] {
			c, a = 0, alpha*0.3
		}
		wuLine(dst, W, H, ax, ay, bx, by, relationPalette[c], a)
	}
	if hover < 0 || hover >= len(g.Edges) {
		return
	}
	p, q, ok := r.edgeEnds(g.Edges[hover], n)
	if !ok {
		return
	}
	ax, ay, bx, by, ok := clipLine(p.X, p.Y, q.X, q.Y, -2, -2, float64(W)+2, float64(H)+2)
	ln := math.Hypot(bx-ax, by-ay)
	if !ok || ln < 1e-6 {
		return
	}
	if r.ras == nil {
		r.ras = vector.NewRasterizer(W, H)
	}
	r.ras.Reset(W, H)
	nx, ny := -(by-ay)/ln*1.2, (bx-ax)/ln*1.2
	r.ras.MoveTo(float32(ax+nx), float32(ay+ny))
	r.ras.LineTo(float32(bx+nx), float32(by+ny))
	r.ras.LineTo(float32(bx-nx), float32(by-ny))
	r.ras.LineTo(float32(ax-nx), float32(ay-ny))
	r.ras.ClosePath()
	col := RelationColor(g.Edges[hover].Class)
	// Through a pointer, so that setting the colour does not allocate.
	r.edgeCol = color.NRGBA{col.R, col.G, col.B, 242}
	r.uni.C = &r.edgeCol
	r.ras.Draw(dst, dst.Rect, &r.uni, image.Point{})
}

// wuLine blends an anti-aliased one-pixel line from (x0,y0) to (x1,y1), both inside the W×H
// image, in colour c at opacity a (0..1): Xiaolin Wu's algorithm, two pixels per step shared by
// the line's distance to them.
func wuLine(dst *image.RGBA, W, H int, x0, y0, x1, y1 float64, c color.RGBA, a float64) {
	steep := math.Abs(y1-y0) > math.Abs(x1-x0)
	if steep {
		x0, y0, x1, y1 = y0, x0, y1, x1
	}
	if x0 > x1 {
		x0, y0, x1, y1 = x1, y1, x0, y0
	}
	dx, dy := x1-x0, y1-y0
	grad := 1.0
	if dx > 1e-9 {
		grad = dy / dx
	}
	a256 := a * 256
	plot := func(x, y int, cov float64) {
		if steep {
			x, y = y, x
		}
		if x < 0 || y < 0 || x >= W || y >= H {
			return
		}
		i := y*dst.Stride + x*4
		blendOver(dst.Pix[i:i+4:i+4], c, int(cov*a256))
	}
	xs, xe := int(math.Floor(x0)), int(math.Floor(x1))
	y := y0 + grad*(float64(xs)+0.5-x0) - 0.5
	for x := xs; x <= xe; x++ {
		yf := math.Floor(y)
		f := y - yf
		plot(x, int(yf), 1-f)
		plot(x, int(yf)+1, f)
		y += grad
	}
}

// long reports whether the edge p–q is long on screen (over a quarter of the image's smaller
// side): such edges, mostly between worlds, are drawn in the faint default colour so they do
// not haze the sky; their relation shows when hovered.
func (r *Renderer) long(p, q Point, W, H int) bool {
	d := 0.25 * float64(min(W, H))
	return (p.X-q.X)*(p.X-q.X)+(p.Y-q.Y)*(p.Y-q.Y) > d*d
}

// edgeEnds returns the pixel positions of an edge's ends, false if it cannot be drawn.
func (r *Renderer) edgeEnds(e Edge, n int) (Point, Point, bool) {
	if e.From < 0 || e.To < 0 || e.From >= n || e.To >= n || e.From == e.To || !r.ok[e.From] || !r.ok[e.To] {
		return Point{}, Point{}, false
	}
	return r.pos[e.From], r.pos[e.To], true
}

// clipLine clips the segment (x0,y0)–(x1,y1) to the rectangle [xmin,xmax]×[ymin,ymax]
// (Liang–Barsky); ok is false when nothing of it is inside.
func clipLine(x0, y0, x1, y1, xmin, ymin, xmax, ymax float64) (ax, ay, bx, by float64, ok bool) {
	t0, t1 := 0.0, 1.0
	dx, dy := x1-x0, y1-y0
	for _, pq := range [4][2]float64{{-dx, x0 - xmin}, {dx, xmax - x0}, {-dy, y0 - ymin}, {dy, ymax - y0}} {
		p, q := pq[0], pq[1]
		if p == 0 {
			if q < 0 {
				return 0, 0, 0, 0, false
			}
			continue
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return 0, 0, 0, 0, false
			}
			t0 = max(t0, t)
		} else {
			if t < t0 {
				return 0, 0, 0, 0, false
			}
			t1 = min(t1, t)
		}
	}
	return x0 + t0*dx, y0 + t0*dy, x0 + t1*dx, y0 + t1*dy, true
}

// bresenham blends a one-pixel line from (x0,y0) to (x1,y1), both inside dst, at coverage a.
func bresenham(dst *image.RGBA, x0, y0, x1, y1 int, c color.RGBA, a int) {
	dx, sx := x1-x0, 1
	if dx < 0 {
		dx, sx = -dx, -1
	}
	dy, sy := y0-y1, 1
	if dy > 0 {
		dy = -dy
	}
	if y1 < y0 {
		sy = -1
	}
	err := dx + dy
	for {
		i := y0*dst.Stride + x0*4
		blendOver(dst.Pix[i:i+4:i+4], c, a)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

// Ring colours.
var (
	pinColor       = color.RGBA{255, 215, 120, 255}
	highlightColor = color.RGBA{90, 230, 255, 255}
	selectColor    = color.RGBA{255, 255, 255, 255}
	hoverColor     = color.RGBA{200, 220, 255, 255}
)

// star draws node i: a disc of its kind's colour, lit by its mentions and whitening towards the
// core, then its rings (pinned, highlighted, selected or hovered).
func (r *Renderer) star(dst *image.RGBA, W, H int, g Graph, i int, s State) {
	nd := &g.Nodes[i]
	p, rad := r.pos[i], r.rad[i]
	c := KindColor(nd.Kind)
	light, alpha := brightness(nd.Mentions), 1.0
	if s.Highlight[i] {
		light = 1
	}
	if s.Dim[i] {
		alpha = 0.3
	}
	cr, cg, cb := int(float64(c.R)*light), int(float64(c.G)*light), int(float64(c.B)*light)
	a256 := int(alpha * 256)
	aa := s.AntiAlias
	// Squared-distance tests keep the square root to the anti-aliased rim.
	inner2 := math.Max(0, rad-0.5) * math.Max(0, rad-0.5)
	outer2 := rad * rad
	if aa {
		outer2 = (rad + 0.5) * (rad + 0.5)
	}
	inv := 1 / (rad * rad)
	x0, y0, x1, y1 := box(p, rad+1, W, H)
	for y := y0; y < y1; y++ {
		dy := float64(y) + 0.5 - p.Y
		row := dst.Pix[y*dst.Stride:]
		for x := x0; x < x1; x++ {
			dx := float64(x) + 0.5 - p.X
			d2 := dx*dx + dy*dy
			if d2 > outer2 {
				continue
			}
			a := a256
			if aa && d2 > inner2 {
				a = int((rad + 0.5 - math.Sqrt(d2)) * float64(a256))
				if a > a256 {
					a = a256
				}
			}
			// Whiten towards the core: 0.6·(1 − d²/r²)².
			t := 1 - d2*inv
			if t < 0 {
				t = 0
			}
			w := int(154 * t * t) // 0.6 × 256
			core := color.RGBA{
				uint8(cr + (255-cr)*w>>8),
				uint8(cg + (255-cg)*w>>8),
				uint8(cb + (255-cb)*w>>8), 255}
			blendOver(row[x*4:x*4+4:x*4+4], core, a)
		}
	}
	if nd.Hub {
		r.ring(dst, W, H, p, rad+2.5, 1, c, 0.55*alpha, aa)
	}
	if nd.Pinned {
		r.ring(dst, W, H, p, rad+2, 1, pinColor, 0.9*alpha, aa)
	}
	if s.Highlight[i] {
		r.ring(dst, W, H, p, rad+3.5, 1.2, highlightColor, 0.9, aa)
	}
	switch i {
	case s.Selected:
		r.ring(dst, W, H, p, rad+5, 1.6, selectColor, 1, aa)
	case s.Hover:
		r.ring(dst, W, H, p, rad+5, 1.2, hoverColor, 0.7, aa)
	}
}

// box returns the pixel range [x0,x1)×[y0,y1) covering a circle, clipped to W×H.
func box(p Point, rad float64, W, H int) (x0, y0, x1, y1 int) {
	x0 = max(0, int(math.Floor(p.X-rad)))
	y0 = max(0, int(math.Floor(p.Y-rad)))
	x1 = min(W, int(math.Ceil(p.X+rad))+1)
	y1 = min(H, int(math.Ceil(p.Y+rad))+1)
	return
}

// ring draws a circle of radius rad and line width w.
func (r *Renderer) ring(dst *image.RGBA, W, H int, p Point, rad, w float64, c color.RGBA, alpha float64, aa bool) {
	x0, y0, x1, y1 := box(p, rad+w, W, H)
	for y := y0; y < y1; y++ {
		dy := float64(y) + 0.5 - p.Y
		row := dst.Pix[y*dst.Stride:]
		for x := x0; x < x1; x++ {
			dx := float64(x) + 0.5 - p.X
			e := math.Abs(math.Sqrt(dx*dx+dy*dy) - rad)
			var cov float64
			if aa {
				cov = math.Min(1, w/2+0.5-e)
			} else if e <= math.Max(w/2, 0.5) {
				cov = 1
			}
			if cov > 0 {
				blendOver(row[x*4:x*4+4:x*4+4], c, int(cov*alpha*256))
			}
		}
	}
}

// glow adds a soft halo of radius 3×rad+4 around a recalled star, scaled by strength (1 just
// recalled, 0 at GlowWindow).
func (r *Renderer) glow(dst *image.RGBA, W, H int, p Point, rad float64, c color.RGBA, strength float64) {
	R := rad*3 + 4
	x0, y0, x1, y1 := box(p, R, W, H)
	for y := y0; y < y1; y++ {
		dy := float64(y) + 0.5 - p.Y
		row := dst.Pix[y*dst.Stride:]
		for x := x0; x < x1; x++ {
			dx := float64(x) + 0.5 - p.X
			d := math.Sqrt(dx*dx + dy*dy)
			if d >= R {
				continue
			}
			t := 1 - d/R
			blendAdd(row[x*4:x*4+4:x*4+4], c, 0.6*strength*t*t)
		}
	}
}

// labelSize is the text size of a star's label, 0 when too small to read.
func labelSize(rad float64, highlighted bool) int {
	sz := min(MaxLabelPx, int(rad*1.8))
	if highlighted {
		sz = max(sz, MinLabelPx)
	}
	if sz < MinLabelPx {
		return 0
	}
	return sz
}

// brightLabels is how many of the biggest stars on screen are labelled whatever their size.
const brightLabels = 24

// labels places and draws the labels, most wanted first, each where it overlaps no label already
// drawn and lies wholly inside the image (right of its star, else left, above or below): the
// selected and hovered stars, the highlighted ones, the hubs (at least HubLabelPx, biggest
// first), the stars near the pointer (nearest first), the brightLabels biggest stars on screen,
// then every star big enough to read (see labelSize). Dimmed stars are not labelled.
func (r *Renderer) labels(dst *image.RGBA, W, H int, g Graph, s State) {
	r.occW, r.occH = (W+labelCell-1)/labelCell, (H+labelCell-1)/labelCell
	r.occ = grow(r.occ, r.occW*r.occH)
	clear(r.occ)
	r.named = grow(r.named, len(g.Nodes))
	clear(r.named)
	if len(r.widths) < len(g.Nodes) {
		r.widths = append(r.widths, make([]labelWidth, len(g.Nodes)-len(r.widths))...)
	}
	try := func(i int, sz int) {
		if i < 0 || i >= len(r.named) || r.named[i] || !r.ok[i] {
			return
		}
		nd := &g.Nodes[i]
		if nd.Label == "" || (s.Dim[i] && i != s.Selected) {
			return
		}
		c := KindColor(nd.Kind)
		c = color.RGBA{uint8(128 + int(c.R)/2), uint8(128 + int(c.G)/2), uint8(128 + int(c.B)/2), 255}
		if nd.Hub {
			c = color.RGBA{uint8(200 + int(c.R)/5), uint8(200 + int(c.G)/5), uint8(200 + int(c.B)/5), 255}
		}
		// The width is measured once per label and size (the same sky is drawn frame after frame).
		lw := &r.widths[i]
		if lw.size != sz || lw.text != nd.Label {
			fc := r.face(sz)
			if fc.face == nil {
				return
			}
			w, end := r.measure(fc, sz, nd.Label)
			*lw = labelWidth{text: nd.Label, size: sz, width: w, end: end}
		}
		if r.placeLabel(dst, W, H, nd.Label[:lw.end], lw.width, r.pos[i], r.rad[i], sz, c, i) {
			r.named[i] = true
		}
	}
	for _, i := range []int{s.Selected, s.Hover} {
		if i >= 0 && i < len(r.rad) {
			try(i, max(labelSize(r.rad[i], true), HubLabelPx))
		}
	}
	if len(s.Highlight) > 0 {
		for _, i := range r.vis.idx {
			if s.Highlight[int(i)] {
				try(int(i), labelSize(r.rad[i], true))
			}
		}
	}
	for _, i := range r.vis.idx {
		if g.Nodes[i].Hub {
			try(int(i), max(labelSize(r.rad[i], true), HubLabelPx))
		}
	}
	if s.PointerIn {
		r.near = r.near[:0]
		r.nearD = grow(r.nearD, len(g.Nodes))
		for _, i := range r.vis.idx {
			d := math.Hypot(r.pos[i].X-s.Pointer.X, r.pos[i].Y-s.Pointer.Y)
			if d <= PointerRadius {
				r.near = append(r.near, i)
				r.nearD[i] = d
			}
		}
		slices.SortFunc(r.near, r.byNearness)
		for _, i := range r.near {
			try(int(i), labelSize(r.rad[i], true))
		}
	}
	for rank, i := range r.vis.idx {
		// The brightest stars on screen are named at any zoom, so a whole sky reads.
		if sz := labelSize(r.rad[i], rank < brightLabels); sz > 0 {
			try(int(i), sz)
		}
	}
}

// byNearness orders stars by their distance to the pointer (r.nearD), then by index.
func (r *Renderer) byNearness(a, b int32) int {
	return cmp.Or(cmp.Compare(r.nearD[a], r.nearD[b]), cmp.Compare(a, b))
}

// placeLabel draws the label of the star at p (radius rad), width pixels wide, at the first
// free place: right of it, left, above, below. It reports whether it drew, and records the
// label for node.
func (r *Renderer) placeLabel(dst *image.RGBA, W, H int, text string, width float64, p Point, rad float64, size int, c color.RGBA, node int) bool {
	fc := r.face(size)
	if fc.face == nil {
		return false
	}
	if width == 0 {
		return false
	}
	hgt := fc.asc + fc.desc
	gap := rad + 3
	for _, at := range [4]Point{
		{p.X + gap, p.Y},
		{p.X - gap - width, p.Y},
		{p.X - width/2, p.Y - gap - hgt/2},
		{p.X - width/2, p.Y + gap + hgt/2},
	} {
		if r.labelAt(dst, W, H, fc, text, width, at.X, at.Y, size, c) {
			r.placed[len(r.placed)-1].Node = node
			return true
		}
	}
	return false
}

// maxLabelEm caps a label's width, in multiples of its text size; longer labels are cut.
const maxLabelEm = 14

// measure returns the width of text at a size, cut to maxLabelEm, and the byte length kept.
func (r *Renderer) measure(fc *faceCache, size int, text string) (float64, int) {
	limit := float64(size * maxLabelEm)
	width, end := 0.0, len(text)
	for k, ru := range text {
		gl := r.glyph(fc, size, ru)
		if width+gl.adv > limit {
			end = k
			break
		}
		width += gl.adv
	}
	return width, end
}

// label draws text of the given size with its left end at x, vertically centred on y, if it fits
// in the image and the occupancy grid is free there; it reports whether it drew, and records the
// label (for node -1) in r.placed.
func (r *Renderer) label(dst *image.RGBA, W, H int, text string, x, y float64, size int, c color.RGBA) bool {
	fc := r.face(size)
	if fc.face == nil {
		return false
	}
	width, end := r.measure(fc, size, text)
	return r.labelAt(dst, W, H, fc, text[:end], width, x, y, size, c)
}

// labelAt is label for a text already measured (and cut) to width.
func (r *Renderer) labelAt(dst *image.RGBA, W, H int, fc *faceCache, text string, width, x, y float64, size int, c color.RGBA) bool {
	base := y + (fc.asc-fc.desc)/2
	bx0, by0 := int(math.Floor(x)), int(math.Floor(base-fc.asc))
	bx1, by1 := int(math.Ceil(x+width)), int(math.Ceil(base+fc.desc))
	if width == 0 || bx0 < 0 || by0 < 0 || bx1 > W || by1 > H {
		return false
	}
	cx0, cy0, cx1, cy1 := bx0/labelCell, by0/labelCell, (bx1-1)/labelCell, (by1-1)/labelCell
	// A cell's gap left and right of the label, so two labels on a line never run together.
	for cy := cy0; cy <= cy1; cy++ {
		for cx := max(0, cx0-1); cx <= min(r.occW-1, cx1+1); cx++ {
			if r.occ[cy*r.occW+cx] {
				return false
			}
		}
	}
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			r.occ[cy*r.occW+cx] = true
		}
	}
	r.placed = append(r.placed, PlacedLabel{Node: -1, Rect: image.Rect(bx0, by0, bx1, by1), Size: size})
	// A dark veil under the text keeps it readable over bright stars and lines.
	for py := by0; py < by1; py++ {
		row := dst.Pix[py*dst.Stride:]
		for px := bx0; px < bx1; px++ {
			blendOver(row[px*4:px*4+4:px*4+4], labelVeil, 110)
		}
	}
	r.text(dst, W, H, fc, size, text, x, base, c)
	return true
}

// labelVeil darkens the box under a label.
var labelVeil = color.RGBA{6, 8, 20, 255}

// text draws a run of glyphs with its baseline's left end at (x, base).
func (r *Renderer) text(dst *image.RGBA, W, H int, fc *faceCache, size int, text string, x, base float64, c color.RGBA) {
	dot, by := x, int(math.Round(base))
	for _, ru := range text {
		gl := r.glyph(fc, size, ru)
		if gl.mask != nil {
			ox, oy := int(math.Round(dot))+gl.off.X, by+gl.off.Y
			mb := gl.mask.Rect
			for my := 0; my < mb.Dy(); my++ {
				py := oy + my
				if py < 0 || py >= H {
					continue
				}
				row := dst.Pix[py*dst.Stride:]
				mrow := gl.mask.Pix[my*gl.mask.Stride:]
				for mx := 0; mx < mb.Dx(); mx++ {
					px := ox + mx
					if a := mrow[mx]; a != 0 && px >= 0 && px < W {
						blendOver(row[px*4:px*4+4:px*4+4], c, int(a)+int(a>>7))
					}
				}
			}
		}
		dot += gl.adv
	}
}

// tipColor and tipBack draw the hovered edge's relation: light text on a dark box.
var (
	tipColor = color.RGBA{235, 240, 255, 255}
	tipBack  = color.RGBA{10, 14, 30, 255}
)

// edgeTip writes the hovered edge's Label at its middle (or where its visible part's middle is),
// on a dark box kept inside the image.
func (r *Renderer) edgeTip(dst *image.RGBA, W, H int, g Graph, n int, s State) {
	k := s.HoverEdge - 1
	if !s.EdgeTip || k < 0 || k >= len(g.Edges) || g.Edges[k].Label == "" {
		return
	}
	p, q, ok := r.edgeEnds(g.Edges[k], n)
	if !ok {
		return
	}
	ax, ay, bx, by, ok := clipLine(p.X, p.Y, q.X, q.Y, 0, 0, float64(W), float64(H))
	if !ok {
		return
	}
	size := 12
	fc := r.face(size)
	if fc.face == nil {
		return
	}
	text := g.Edges[k].Label
	width, end := r.measure(fc, size, text)
	pad := 4.0
	bw, bh := width+2*pad, fc.asc+fc.desc+2*pad
	x := math.Min(math.Max(0, (ax+bx)/2-bw/2), float64(W)-bw)
	y := math.Min(math.Max(0, (ay+by)/2-bh/2), float64(H)-bh)
	x0, y0 := max(0, int(x)), max(0, int(y))
	x1, y1 := min(W, int(math.Ceil(x+bw))), min(H, int(math.Ceil(y+bh)))
	for py := y0; py < y1; py++ {
		row := dst.Pix[py*dst.Stride:]
		for px := x0; px < x1; px++ {
			blendOver(row[px*4:px*4+4:px*4+4], tipBack, 220)
		}
	}
	r.text(dst, W, H, fc, size, text[:end], x+pad, y+pad+fc.asc, tipColor)
}

// face returns the cached face of a text size.
func (r *Renderer) face(size int) *faceCache {
	if fc, ok := r.faces[size]; ok {
		return fc
	}
	fc := &faceCache{}
	f, err := opentype.NewFace(r.font.sf, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingFull})
	if err == nil {
		m := f.Metrics()
		fc.face, fc.asc, fc.desc = f, float64(m.Ascent)/64, float64(m.Descent)/64
	}
	r.faces[size] = fc
	return fc
}

// glyph returns the cached mask and advance of a rune at a text size.
func (r *Renderer) glyph(fc *faceCache, size int, ru rune) *glyph {
	k := glyphKey{size, ru}
	if gl, ok := r.glyphs[k]; ok {
		return gl
	}
	gl := &glyph{}
	dr, mask, mp, adv, ok := fc.face.Glyph(fixed.Point26_6{}, ru)
	if ok {
		gl.adv = float64(adv) / 64
		if !dr.Empty() {
			a := image.NewAlpha(image.Rect(0, 0, dr.Dx(), dr.Dy()))
			draw.Draw(a, a.Rect, mask, mp, draw.Src)
			gl.mask, gl.off = a, dr.Min
		}
	}
	r.glyphs[k] = gl
	return gl
}
