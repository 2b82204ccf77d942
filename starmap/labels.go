package starmap

// Labels: which stars are named at this zoom, where their text fits without overlap, and the
// glyph cache that draws it.

import (
	"cmp"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

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
