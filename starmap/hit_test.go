package starmap

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteHit is the specification of Index.Hit: every node checked.
func bruteHit(g Graph, l Layout, v View, px, py, slop float64) int {
	if !(slop > 0) {
		slop = 0
	}
	best, bestKey, bestD := -1, math.Inf(1), math.Inf(1)
	for i := 0; i < min(len(g.Nodes), len(l.Pos)); i++ {
		p := v.ToPixel(l.Pos[i])
		d := math.Hypot(p.X-px, p.Y-py)
		rad := StarRadius(g.Nodes[i].Mentions, l, v)
		if !(d <= rad+slop) {
			continue
		}
		key := math.Max(0, d-rad)
		if key < bestKey || key == bestKey && (d < bestD || d == bestD && i < best) {
			best, bestKey, bestD = i, key, d
		}
	}
	return best
}

func TestHit(t *testing.T) {
	g := Graph{Nodes: []Node{
		{Mentions: 0},    // 0: small, alone
		{Mentions: 1000}, // 1: big
		{Mentions: 0},    // 2: small, on top of the big one
		{Mentions: 5},    // 3: NaN position
	}}
	l := Layout{Radius: 100, Pos: []Point{{-50, 0}, {50, 0}, {54, 0}, {math.NaN(), 1}}}
	v := Fit(l, 400, 400) // zoom 1.8, scale 1
	idx := NewIndex(l)
	p0, p1, p2 := v.ToPixel(l.Pos[0]), v.ToPixel(l.Pos[1]), v.ToPixel(l.Pos[2])
	r0 := StarRadius(0, l, v)
	for _, tc := range []struct {
		name   string
		px, py float64
		slop   float64
		want   int
	}{
		{"centre", p0.X, p0.Y, 0, 0},
		{"inside the rim", p0.X + r0 - 0.1, p0.Y, 0, 0},
		{"just outside, no slop", p0.X + r0 + 0.5, p0.Y, 0, -1},
		{"just outside, with slop", p0.X + r0 + 0.5, p0.Y, 1, 0},
		{"negative slop is none", p0.X + r0 + 0.5, p0.Y, -3, -1},
		{"NaN slop is none", p0.X + r0 + 0.5, p0.Y, math.NaN(), -1},
		{"empty sky", 10, 10, 4, -1},
		{"big star", p1.X - 3, p1.Y, 0, 1},
		{"small star over the big one", p2.X, p2.Y, 0, 2},
		{"NaN pixel", math.NaN(), 0, 4, -1},
		{"far outside the grid", -1e9, 1e9, 4, -1},
	} {
		if got := idx.Hit(g, v, tc.px, tc.py, tc.slop); got != tc.want {
			t.Errorf("%s: Hit = %d, want %d", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		idx  *Index
		g    Graph
		v    View
	}{
		{"empty layout", NewIndex(Layout{}), g, v},
		{"all NaN", NewIndex(Layout{Pos: []Point{{math.NaN(), 0}}}), g, v},
		{"empty graph", idx, Graph{}, v},
		{"zero zoom", idx, g, View{Width: 400, Height: 400}},
		{"infinite zoom", idx, g, View{Zoom: math.Inf(1), Width: 400, Height: 400}},
	} {
		if got := tc.idx.Hit(tc.g, tc.v, 200, 200, 4); got != -1 {
			t.Errorf("%s: Hit = %d, want -1", tc.name, got)
		}
	}
	// Positions beyond the graph are ignored.
	if got := idx.Hit(Graph{Nodes: g.Nodes[:1]}, v, p1.X, p1.Y, 0); got != -1 {
		t.Errorf("node beyond the graph hit: %d", got)
	}
}

// TestHitMatchesBruteForce compares the grid against checking every node, on random clustered
// and degenerate layouts, at zooms from far out to far in, at pixels near nodes and anywhere.
func TestHitMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	layouts := []struct {
		name string
		g    Graph
		l    Layout
	}{}
	for _, n := range []int{1, 3, 50, 2000} {
		g, l := clusteredGraph(n, 0, 5, uint64(n))
		layouts = append(layouts, struct {
			name string
			g    Graph
			l    Layout
		}{"clustered", g, l})
	}
	// Degenerate: all nodes on one point, on a line, and with some NaN.
	same := Layout{Radius: 0, Pos: make([]Point, 20)}
	line := Layout{Radius: 100, Pos: make([]Point, 200)}
	holes := Layout{Radius: 300, Pos: make([]Point, 300)}
	for i := range line.Pos {
		line.Pos[i] = Point{float64(i) - 100, 3}
	}
	for i := range holes.Pos {
		holes.Pos[i] = Point{rng.Float64()*600 - 300, rng.Float64()*600 - 300}
		if i%7 == 0 {
			holes.Pos[i] = Point{math.NaN(), math.Inf(1)}
		}
	}
	for _, l := range []Layout{same, line, holes} {
		g := Graph{Nodes: make([]Node, len(l.Pos))}
		for i := range g.Nodes {
			g.Nodes[i].Mentions = rng.IntN(300)
		}
		layouts = append(layouts, struct {
			name string
			g    Graph
			l    Layout
		}{"degenerate", g, l})
	}
	hits := 0
	for _, tc := range layouts {
		idx := NewIndex(tc.l)
		for _, zoom := range []float64{1e-4, 0.02, 0.5, 1, 3, 40, 1e4} {
			v := Fit(tc.l, 640, 480)
			v.Zoom *= zoom
			v.Center = Point{rng.NormFloat64() * 50, rng.NormFloat64() * 50}
			for k := 0; k < 300; k++ {
				var px, py float64
				if k%2 == 0 && len(tc.l.Pos) > 0 {
					p := v.ToPixel(tc.l.Pos[rng.IntN(len(tc.l.Pos))])
					px, py = p.X+rng.NormFloat64()*5, p.Y+rng.NormFloat64()*5
				} else {
					px, py = rng.Float64()*640, rng.Float64()*480
				}
				slop := rng.Float64() * 6
				if got, want := idx.Hit(tc.g, v, px, py, slop), bruteHit(tc.g, tc.l, v, px, py, slop); got != want {
					t.Fatalf("%s n=%d zoom×%g at (%.2f,%.2f) slop %.2f: Hit = %d, brute force = %d",
						tc.name, len(tc.l.Pos), zoom, px, py, slop, got, want)
				} else if got >= 0 {
					hits++
				}
			}
		}
	}
	if hits < 1000 {
		t.Errorf("only %d of the probes hit a star: the comparison is too weak", hits)
	}
}

func TestHitEdge(t *testing.T) {
	g := Graph{Nodes: nodes(4), Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 1, To: 2, Weight: 1}, {From: 3, To: 3, Weight: 1}, {From: 0, To: 9, Weight: 1}}}
	l := Layout{Pos: []Point{{0, 0}, {10, 0}, {10, 10}, {5, 5}}, Radius: 10}
	v := View{Zoom: 10, Width: 200, Height: 200} // sky (0,0) at pixel (100,100)
	for _, tc := range []struct {
		name   string
		px, py float64
		want   int
	}{
		{"on the first edge", 150, 101, 0},
		{"on the second edge", 199, 150, 1},
		{"nearer the second at the corner", 199, 104, 1},
		{"too far from both", 150, 120, -1},
		{"beyond the first edge's end", 90, 100, -1},
		{"the self-loop's node", 150, 150, -1},
		{"not finite", math.NaN(), 100, -1},
	} {
		if got := HitEdge(g, l, v, tc.px, tc.py, 4); got != tc.want {
			t.Errorf("%s: HitEdge = %d, want %d", tc.name, got, tc.want)
		}
	}
}
