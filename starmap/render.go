package starmap

import (
	"image"
	"image/color"
	"math"
	"time"

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

// brightLabels is how many of the biggest stars on screen are labelled whatever their size.
const brightLabels = 24

// maxLabelEm caps a label's width, in multiples of its text size; longer labels are cut.
const maxLabelEm = 14

// labelVeil darkens the box under a label.
var labelVeil = color.RGBA{6, 8, 20, 255}

// tipColor and tipBack draw the hovered edge's relation: light text on a dark box.
var (
	tipColor = color.RGBA{235, 240, 255, 255}
	tipBack  = color.RGBA{10, 14, 30, 255}
)
