package starmap

// Edges: clipped, aliased (Bresenham) or anti-aliased (Wu) lines in their relation colours.

import (
	"image"
	"image/color"
	"math"

	"golang.org/x/image/vector"
)

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
