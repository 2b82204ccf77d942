package ocr

import (
	"image"
	"image/color"
	"math"
	"sort"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// pt is a point in image coordinates (x right, y down).
type pt struct{ X, Y float64 }

func (p pt) sub(q pt) pt               { return pt{p.X - q.X, p.Y - q.Y} }
func (p pt) add(q pt) pt               { return pt{p.X + q.X, p.Y + q.Y} }
func (p pt) mul(k float64) pt          { return pt{p.X * k, p.Y * k} }
func (p pt) dot(q pt) float64          { return p.X*q.X + p.Y*q.Y }
func (p pt) cross(q pt) float64        { return p.X*q.Y - p.Y*q.X }
func (p pt) norm() float64             { return math.Hypot(p.X, p.Y) }
func (p pt) dist(q pt) float64         { return p.sub(q).norm() }
func (p pt) image() image.Point        { return image.Pt(int(math.Round(p.X)), int(math.Round(p.Y))) }
func cross3(o, a, b pt) float64        { return a.sub(o).cross(b.sub(o)) }
func lerp(a, b pt, t float64) pt       { return a.add(b.sub(a).mul(t)) }
func clampf(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// quad is a box as four corners in the order top-left, top-right, bottom-right, bottom-left.
type quad [4]pt

// width and height are the box's longer measures of its two side pairs.
func (q quad) width() float64  { return math.Max(q[0].dist(q[1]), q[3].dist(q[2])) }
func (q quad) height() float64 { return math.Max(q[0].dist(q[3]), q[1].dist(q[2])) }

// contains reports whether p lies inside the convex quad q (edges included).
func (q quad) contains(p pt) bool {
	sign := 0.0
	for i := range 4 {
		c := cross3(q[i], q[(i+1)%4], p)
		if c == 0 {
			continue
		}
		if sign == 0 {
			sign = c
		} else if (c > 0) != (sign > 0) {
			return false
		}
	}
	return true
}

// convexHull returns the convex hull of pts in counter-clockwise order (y down: clockwise on
// screen), without collinear points (Andrew's monotone chain). pts is reordered.
func convexHull(pts []pt) []pt {
	if len(pts) < 3 {
		return append([]pt(nil), pts...)
	}
	sort.Slice(pts, func(i, j int) bool {
		if pts[i].X != pts[j].X {
			return pts[i].X < pts[j].X
		}
		return pts[i].Y < pts[j].Y
	})
	hull := make([]pt, 0, 2*len(pts))
	for _, p := range pts { // lower hull
		for len(hull) >= 2 && cross3(hull[len(hull)-2], hull[len(hull)-1], p) <= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	lower := len(hull) + 1
	for i := len(pts) - 2; i >= 0; i-- { // upper hull
		p := pts[i]
		for len(hull) >= lower && cross3(hull[len(hull)-2], hull[len(hull)-1], p) <= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	return hull[:len(hull)-1]
}

// minAreaRect returns the corners of the smallest-area rectangle enclosing pts (rotating
// calipers over the convex hull: the best rectangle has a side on a hull edge). Degenerate
// inputs (a point, a segment) give a rectangle of zero width or height.
func minAreaRect(pts []pt) quad {
	hull := convexHull(pts)
	switch len(hull) {
	case 0:
		return quad{}
	case 1:
		return quad{hull[0], hull[0], hull[0], hull[0]}
	}
	best, bestArea := quad{}, math.Inf(1)
	for i := range hull {
		a, b := hull[i], hull[(i+1)%len(hull)]
		edge := b.sub(a)
		l := edge.norm()
		if l == 0 {
			continue
		}
		u := edge.mul(1 / l) // along the edge
		v := pt{-u.Y, u.X}   // perpendicular
		minU, maxU, minV, maxV := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, p := range hull {
			d := p.sub(a)
			pu, pv := d.dot(u), d.dot(v)
			minU, maxU = math.Min(minU, pu), math.Max(maxU, pu)
			minV, maxV = math.Min(minV, pv), math.Max(maxV, pv)
		}
		if area := (maxU - minU) * (maxV - minV); area < bestArea-1e-9 {
			bestArea = area
			corner := func(su, sv float64) pt { return a.add(u.mul(su)).add(v.mul(sv)) }
			best = quad{corner(minU, minV), corner(maxU, minV), corner(maxU, maxV), corner(minU, maxV)}
		}
	}
	return best
}

// orderBox puts a rectangle's corners in reading order as PaddleOCR's get_mini_boxes does:
// of the two leftmost corners the upper is top-left, of the two rightmost the upper is
// top-right.
func orderBox(q quad) quad {
	p := q
	sort.Slice(p[:], func(i, j int) bool {
		if p[i].X != p[j].X {
			return p[i].X < p[j].X
		}
		return p[i].Y < p[j].Y
	})
	tl, bl := p[0], p[1]
	if p[1].Y < p[0].Y {
		tl, bl = p[1], p[0]
	}
	tr, br := p[2], p[3]
	if p[3].Y < p[2].Y {
		tr, br = p[3], p[2]
	}
	return quad{tl, tr, br, bl}
}

// expandRect grows the rectangle q by d on every side, keeping its centre and angle. It is
// the minimum-area rectangle of q's polygon offset by d with round joins, which is what DB's
// unclip (pyclipper offset, then minAreaRect) computes for a rectangle.
func expandRect(q quad, d float64) quad {
	u, v := q[1].sub(q[0]), q[3].sub(q[0])
	if l := u.norm(); l > 0 {
		u = u.mul(d / l)
	}
	if l := v.norm(); l > 0 {
		v = v.mul(d / l)
	}
	return quad{
		q[0].sub(u).sub(v),
		q[1].add(u).sub(v),
		q[2].add(u).add(v),
		q[3].sub(u).add(v),
	}
}

// cropQuad cuts the box q out of src into an upright image (the box's top-left corner at the
// image's top-left), sampling bilinearly: a rotated line comes out level. Samples outside src
// take the colour of the nearest edge of q inside src (a flat border, not black). Boxes
// taller than 1.5 times their width (vertical text) are turned 90° counter-clockwise, as
// PaddleOCR's get_rotate_crop_image does; vertical reports it.
func cropQuad(src *image.RGBA, q quad) (img *image.RGBA, vertical bool) {
	w := max(int(q.width()), 1)
	h := max(int(q.height()), 1)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	fill := image.NewUniform(borderColor(src, q))
	draw.Draw(dst, dst.Bounds(), fill, image.Point{}, draw.Src)

	// Destination (u, v) ↦ source q[0] + u·ex + v·ey; the transform needs source ↦ destination.
	ex, ey := q[1].sub(q[0]).mul(1/float64(w)), q[3].sub(q[0]).mul(1/float64(h))
	det := ex.X*ey.Y - ey.X*ex.Y
	if det == 0 {
		return dst, false
	}
	inv := [4]float64{ey.Y / det, -ey.X / det, -ex.Y / det, ex.X / det}
	s2d := f64.Aff3{
		inv[0], inv[1], -(inv[0]*q[0].X + inv[1]*q[0].Y),
		inv[2], inv[3], -(inv[2]*q[0].X + inv[3]*q[0].Y),
	}
	draw.BiLinear.Transform(dst, s2d, src, src.Bounds(), draw.Src, nil)
	if float64(h) >= 1.5*float64(w) {
		return rotate90CCW(dst), true
	}
	return dst, false
}

// borderColor is the mean colour of q's corners (clamped into src): the fill for samples
// that fall outside src.
func borderColor(src *image.RGBA, q quad) color.RGBA {
	b := src.Bounds()
	var r, g, bl int
	for _, p := range q {
		x := int(clampf(p.X, float64(b.Min.X), float64(b.Max.X-1)))
		y := int(clampf(p.Y, float64(b.Min.Y), float64(b.Max.Y-1)))
		c := src.RGBAAt(x, y)
		r, g, bl = r+int(c.R), g+int(c.G), bl+int(c.B)
	}
	return color.RGBA{uint8(r / 4), uint8(g / 4), uint8(bl / 4), 255}
}

// rotate90CCW turns img a quarter turn counter-clockwise (numpy's rot90).
func rotate90CCW(img *image.RGBA) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, h, w))
	for y := range h {
		for x := range w {
			dst.SetRGBA(y, w-1-x, img.RGBAAt(b.Min.X+x, b.Min.Y+y))
		}
	}
	return dst
}

// rotate180 turns img half a turn, in place.
func rotate180(img *image.RGBA) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for y := range (h + 1) / 2 {
		for x := range w {
			y2, x2 := h-1-y, w-1-x
			if y2 < y || (y2 == y && x2 <= x) {
				continue
			}
			a, c := img.RGBAAt(b.Min.X+x, b.Min.Y+y), img.RGBAAt(b.Min.X+x2, b.Min.Y+y2)
			img.SetRGBA(b.Min.X+x, b.Min.Y+y, c)
			img.SetRGBA(b.Min.X+x2, b.Min.Y+y2, a)
		}
	}
}
