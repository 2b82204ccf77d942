package starmap

import "math"

// maxTreeDepth bounds the quadtree's subdivision: bodies that still share a cell at this depth
// (identical or nearly identical positions) are kept together in one leaf's bucket instead of
// splitting forever.
const maxTreeDepth = 24

// qnode is one cell of the quadtree, kept small (40 bytes) since the force traversal is bound
// by memory. Nodes are stored in a flat slice, parents before children, so the centres of
// mass are finished in one forward pass; the four children of a cell are allocated together.
type qnode struct {
	mx, my, mass float64 // centre of mass (sums while building) and number of bodies
	half         float64 // half the cell's side
	first        int32   // internal: index of the first of four children; leaf: -1
	body         int32   // leaf: first body of its bucket (-1: empty)
}

// quadtree is a Barnes–Hut tree over unit-mass bodies. It is rebuilt every iteration into the
// same slices, so a layout allocates it once.
type quadtree struct {
	nodes  []qnode
	centre []float64 // cx, cy of each cell (only used while building)
	next   []int32   // next body in the same leaf's bucket, -1 ends it
	x, y   []float64
}

// build rebuilds the tree over the bodies at x, y (which it keeps, not copies).
func (t *quadtree) build(x, y []float64) {
	t.x, t.y = x, y
	if cap(t.next) < len(x) {
		t.next = make([]int32, len(x))
	}
	t.next = t.next[:len(x)]
	t.nodes = t.nodes[:0]
	t.centre = t.centre[:0]
	if len(x) == 0 {
		return
	}
	minX, minY, maxX, maxY := x[0], y[0], x[0], y[0]
	for i := range x {
		minX, maxX = math.Min(minX, x[i]), math.Max(maxX, x[i])
		minY, maxY = math.Min(minY, y[i]), math.Max(maxY, y[i])
	}
	half := math.Max(maxX-minX, maxY-minY)/2*1.0001 + 1e-9
	t.nodes = append(t.nodes, qnode{half: half, first: -1, body: -1})
	t.centre = append(t.centre, (minX+maxX)/2, (minY+maxY)/2)
	for i := range x {
		t.insert(int32(i), x[i], y[i])
	}
	for i := range t.nodes {
		n := &t.nodes[i]
		if n.mass > 0 {
			n.mx /= n.mass
			n.my /= n.mass
		}
	}
}

// quadrant returns which child of cell ni holds the point (px, py).
func (t *quadtree) quadrant(ni int32, px, py float64) int32 {
	q := int32(0)
	if px >= t.centre[2*ni] {
		q |= 1
	}
	if py >= t.centre[2*ni+1] {
		q |= 2
	}
	return q
}

// split turns leaf p into an internal cell with four empty children.
func (t *quadtree) split(p int32) {
	h := t.nodes[p].half / 2
	cx, cy := t.centre[2*p], t.centre[2*p+1]
	t.nodes[p].first = int32(len(t.nodes))
	for q := range 4 {
		t.nodes = append(t.nodes, qnode{half: h, first: -1, body: -1})
		x, y := cx-h, cy-h
		if q&1 != 0 {
			x = cx + h
		}
		if q&2 != 0 {
			y = cy + h
		}
		t.centre = append(t.centre, x, y)
	}
}

// insert adds body i at (px, py), splitting leaves until it has a cell of its own (or reaches
// maxTreeDepth, where it joins the leaf's bucket).
func (t *quadtree) insert(i int32, px, py float64) {
	ni := int32(0)
	for depth := 0; ; depth++ {
		n := &t.nodes[ni]
		n.mass++
		n.mx += px
		n.my += py
		if n.first < 0 {
			if n.body < 0 {
				n.body = i
				t.next[i] = -1
				return
			}
			if depth >= maxTreeDepth {
				t.next[i] = n.body
				n.body = i
				return
			}
			// Split: the leaf's single body moves down into its quadrant.
			b := n.body
			n.body = -1
			t.split(ni)
			c := t.nodes[ni].first + t.quadrant(ni, t.x[b], t.y[b])
			cn := &t.nodes[c]
			cn.body, cn.mass, cn.mx, cn.my = b, 1, t.x[b], t.y[b]
			t.next[b] = -1
		}
		ni = t.nodes[ni].first + t.quadrant(ni, px, py)
	}
}

// order appends the bodies in depth-first order of the tree (spatially coherent) to dst.
func (t *quadtree) order(dst []int32, stack []int32) ([]int32, []int32) {
	if len(t.nodes) == 0 {
		return dst, stack
	}
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		ni := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &t.nodes[ni]
		if n.first < 0 {
			for b := n.body; b >= 0; b = t.next[b] {
				dst = append(dst, b)
			}
			continue
		}
		for q := int32(3); q >= 0; q-- {
			if t.nodes[n.first+q].mass > 0 {
				stack = append(stack, n.first+q)
			}
		}
	}
	return dst, stack
}

// repulsion returns the Barnes–Hut approximation of the repulsive force on body i at (px, py):
// each other body pushes with strength k/d (k = repulsion). A cell whose side is less than theta
// times the distance to its centre of mass acts as one body there (a cell holding i itself is
// always opened: a point inside a cell is never farther than the cell's diagonal from its
// centre of mass, so this only costs when theta > 1/√2). stack is scratch space, returned
// for reuse.
func (t *quadtree) repulsion(i int32, px, py, theta2, k float64, stack []int32) (fx, fy float64, _ []int32) {
	if len(t.nodes) == 0 {
		return 0, 0, stack
	}
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		ni := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &t.nodes[ni]
		if n.first < 0 {
			for b := n.body; b >= 0; b = t.next[b] {
				if b == i {
					continue
				}
				dx, dy := px-t.x[b], py-t.y[b]
				d2 := dx*dx + dy*dy
				if d2 < minDist*minDist {
					// Coincident bodies: push apart along a direction fixed by the pair, so
					// identical starts separate deterministically.
					dx, dy = jitterDir(i, b)
					d2 = minDist * minDist
					dx, dy = dx*minDist, dy*minDist
				}
				f := k / d2
				fx += dx * f
				fy += dy * f
			}
			continue
		}
		dx, dy := px-n.mx, py-n.my
		d2 := dx*dx + dy*dy
		side2 := 4 * n.half * n.half
		if side2 < theta2*d2 && 2*side2 < d2 {
			f := k * n.mass / d2
			fx += dx * f
			fy += dy * f
			continue
		}
		for q := range int32(4) {
			if t.nodes[n.first+q].mass > 0 {
				stack = append(stack, n.first+q)
			}
		}
	}
	return fx, fy, stack
}

// jitterDir returns a unit vector that depends only on the ordered pair (i, j), and is opposite
// for (j, i), so two coincident bodies are pushed apart.
func jitterDir(i, j int32) (float64, float64) {
	a, b := i, j
	sign := 1.0
	if a > b {
		a, b, sign = b, a, -1
	}
	h := uint64(a)*0x9E3779B97F4A7C15 ^ uint64(b)*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	ang := float64(h>>11) / (1 << 53) * 2 * math.Pi
	return sign * math.Cos(ang), sign * math.Sin(ang)
}
