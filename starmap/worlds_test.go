package starmap

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// personalGraph is a personal memory in miniature, deterministic for seed: the owner (node 0),
// people (hubs) with their places, things and events, some people knowing each other, a few
// things the owner and a person share, and an island linked to nobody.
func personalGraph(seed uint64, people, perPerson int) (g Graph, world []int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	kinds := []string{"place", "thing", "event", "org", "animal", "time"}
	g.Nodes = append(g.Nodes, Node{ID: 1, Label: "me", Kind: "person", Mentions: 300, Hub: true})
	world = append(world, 0)
	hubs := []int{0}
	for p := range people {
		h := len(g.Nodes)
		hubs = append(hubs, h)
		g.Nodes = append(g.Nodes, Node{ID: int64(h + 1), Label: fmt.Sprintf("Person %d", p), Kind: "person", Hub: true,
			Mentions: 5 + rng.IntN(60)})
		world = append(world, h)
		g.Edges = append(g.Edges, Edge{From: 0, To: h, Weight: 1, Class: 1})
		for range perPerson {
			i := len(g.Nodes)
			g.Nodes = append(g.Nodes, Node{ID: int64(i + 1), Label: fmt.Sprintf("item %d", i), Kind: kinds[rng.IntN(len(kinds))],
				Mentions: rng.IntN(20)})
			world = append(world, h)
			g.Edges = append(g.Edges, Edge{From: h, To: i, Weight: 1, Class: 2})
			if rng.IntN(5) == 0 { // the owner knows it too: it stays in the person's world
				g.Edges = append(g.Edges, Edge{From: 0, To: i, Weight: 1})
			}
			if rng.IntN(3) == 0 { // a detail of the item: two hops from the person
				j := len(g.Nodes)
				g.Nodes = append(g.Nodes, Node{ID: int64(j + 1), Label: fmt.Sprintf("detail %d", j), Kind: "concept"})
				world = append(world, h)
				g.Edges = append(g.Edges, Edge{From: i, To: j, Weight: 1})
			}
		}
	}
	for range people / 2 {
		a, b := hubs[1+rng.IntN(people)], hubs[1+rng.IntN(people)]
		if a != b {
			g.Edges = append(g.Edges, Edge{From: a, To: b, Weight: 1, Class: 1})
		}
	}
	for range 5 { // the owner's own things
		i := len(g.Nodes)
		g.Nodes = append(g.Nodes, Node{ID: int64(i + 1), Label: fmt.Sprintf("mine %d", i), Kind: "thing", Mentions: 3})
		world = append(world, 0)
		g.Edges = append(g.Edges, Edge{From: 0, To: i, Weight: 1})
	}
	island := len(g.Nodes)
	g.Nodes = append(g.Nodes, Node{ID: int64(island + 1), Label: "island a", Kind: "thing"},
		Node{ID: int64(island + 2), Label: "island b", Kind: "place"})
	world = append(world, -1, -1)
	g.Edges = append(g.Edges, Edge{From: island, To: island + 1, Weight: 1})
	return g, world
}

func dist(a, b Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

func TestWorlds(t *testing.T) {
	for _, tc := range []struct {
		name              string
		people, perPerson int
	}{
		{"few people", 3, 8},
		{"many people", 40, 12},
		{"one big world", 1, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, world := personalGraph(uint64(tc.people), tc.people, tc.perPerson)
			l := Worlds(g, WorldOptions{Centre: 0})
			if len(l.Pos) != len(g.Nodes) || !l.Converged || !(l.Radius > 0) {
				t.Fatalf("layout of %d nodes: %d positions, radius %v, converged %v", len(g.Nodes), len(l.Pos), l.Radius, l.Converged)
			}
			if l.Pos[0] != (Point{}) {
				t.Errorf("the owner is at %v, not the centre", l.Pos[0])
			}
			var hubs []int
			for i, n := range g.Nodes {
				if n.Hub || i == 0 {
					hubs = append(hubs, i)
				}
			}
			// Each world is a disc around its hub holding its stars; the discs are disjoint.
			reach := map[int]float64{}
			for i, w := range world {
				if w >= 0 {
					reach[w] = math.Max(reach[w], dist(l.Pos[i], l.Pos[w]))
				}
			}
			for _, a := range hubs {
				for _, b := range hubs {
					if a < b && dist(l.Pos[a], l.Pos[b]) <= reach[a]+reach[b] {
						t.Errorf("the worlds of %s (radius %.1f) and %s (radius %.1f) overlap: hubs %.1f apart", g.Nodes[a].Label,
							reach[a], g.Nodes[b].Label, reach[b], dist(l.Pos[a], l.Pos[b]))
					}
				}
			}
			// No two stars coincide (within a tenth of a spacing).
			for i := range l.Pos {
				for j := i + 1; j < len(l.Pos); j++ {
					if dist(l.Pos[i], l.Pos[j]) < 0.1 {
						t.Fatalf("%s and %s coincide at %v", g.Nodes[i].Label, g.Nodes[j].Label, l.Pos[i])
					}
				}
			}
			// Deterministic.
			if again := Worlds(g, WorldOptions{Centre: 0}); !reflect.DeepEqual(again, l) {
				t.Error("two runs differ")
			}
		})
	}
}

func TestWorldsBadInputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Graph
		o    WorldOptions
	}{
		{"empty", Graph{}, WorldOptions{Centre: -1}},
		{"one node", Graph{Nodes: nodes(1)}, WorldOptions{Centre: 0}},
		{"centre out of range", Graph{Nodes: nodes(3), Edges: []Edge{{From: 0, To: 1, Weight: 1}}}, WorldOptions{Centre: 7}},
		{"no hubs", Graph{Nodes: nodes(5), Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 2, To: 3, Weight: 1}}}, WorldOptions{Centre: -1}},
		{"bad edges", Graph{Nodes: nodes(3), Edges: []Edge{{From: 0, To: 0, Weight: 1}, {From: -1, To: 2, Weight: 1},
			{From: 1, To: 9, Weight: math.NaN()}, {From: 1, To: 2, Weight: math.Inf(1)}}}, WorldOptions{Centre: 1, Spacing: math.NaN()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Worlds(tc.g, tc.o)
			if len(l.Pos) != len(tc.g.Nodes) {
				t.Fatalf("%d positions for %d nodes", len(l.Pos), len(tc.g.Nodes))
			}
			for i, p := range l.Pos {
				if !finite(p.X) || !finite(p.Y) || math.Hypot(p.X, p.Y) > l.Radius+1e-9 {
					t.Errorf("node %d at %v, radius %v", i, p, l.Radius)
				}
			}
		})
	}
}

// checkLabels reports what is wrong with a frame's labels: fewer than want of at least minPx,
// boxes overlapping or off the w×h image.
func checkLabels(t *testing.T, labels []PlacedLabel, w, h, want, minPx int) {
	t.Helper()
	big := 0
	for k, a := range labels {
		if a.Size >= minPx {
			big++
		}
		if !a.Rect.In(image.Rect(0, 0, w, h)) || a.Rect.Empty() {
			t.Errorf("label %d of node %d at %v is off the %d×%d image", k, a.Node, a.Rect, w, h)
		}
		for _, b := range labels[k+1:] {
			if a.Rect.Overlaps(b.Rect) {
				t.Errorf("labels of nodes %d and %d overlap: %v, %v", a.Node, b.Node, a.Rect, b.Rect)
			}
		}
	}
	if big < want {
		t.Errorf("%d labels of ≥ %d px, want ≥ %d (of %d)", big, minPx, want, len(labels))
	}
}

func TestWorldsLabels(t *testing.T) {
	f := loadTestFont(t)
	g, _ := personalGraph(5, 60, 15)
	l := Worlds(g, WorldOptions{Centre: 0})
	const W, H = 1280, 800
	v := Fit(l, W, H)
	r := NewRenderer(RenderOptions{Font: f})
	dst := newImage(W, H)
	for _, tc := range []struct {
		name string
		s    State
		zoom float64
	}{
		{"fit", State{AntiAlias: true, Selected: -1, Hover: -1}, 1},
		{"aliased, pointer in", State{Selected: 3, Hover: -1, PointerIn: true, Pointer: Point{640, 400}}, 1},
		{"zoomed in", State{AntiAlias: true, Selected: -1, Hover: 1}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vv := v
			vv.Zoom *= tc.zoom
			r.Render(dst, g, l, vv, tc.s)
			labels := r.Labels()
			checkLabels(t, labels, W, H, 10, 11)
			named := map[int]bool{}
			for _, a := range labels {
				named[a.Node] = true
			}
			// The owner and every hub whose label has room are named; the hubs first.
			if !named[0] {
				t.Error("the owner is not labelled")
			}
			if tc.s.Selected >= 0 && !named[tc.s.Selected] {
				t.Error("the selected star is not labelled")
			}
			if tc.s.PointerIn {
				near := 0
				for _, a := range labels {
					if c := a.Rect.Min; math.Hypot(float64(c.X)-tc.s.Pointer.X, float64(c.Y)-tc.s.Pointer.Y) < PointerRadius+150 && !g.Nodes[a.Node].Hub {
						near++
					}
				}
				if near < 3 {
					t.Errorf("%d labels of non-hub stars near the pointer, want ≥ 3", near)
				}
			}
		})
	}
}

func TestEdgeClassesAndTip(t *testing.T) {
	f := loadTestFont(t)
	g := Graph{Nodes: []Node{{Label: "a", Mentions: 1}, {Label: "b", Mentions: 1}},
		Edges: []Edge{{From: 0, To: 1, Weight: 1, Class: 2, Label: "lives in"}}}
	l := Layout{Pos: []Point{{-1, 0}, {1, 0}}, Radius: 1}
	v := View{Zoom: 20, Width: 400, Height: 200} // an edge of 40 px: short (long ones are over 50 px)
	r := NewRenderer(RenderOptions{Font: f})
	at := func(img *image.RGBA) [3]uint8 { // a pixel on the edge, between the stars
		i := img.PixOffset(190, 100)
		return [3]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2]}
	}
	for _, aa := range []bool{false, true} {
		green := at(render(r, g, l, v, State{AntiAlias: aa, Selected: -1, Hover: -1}))
		g.Edges[0].Class = 5
		pink := at(render(r, g, l, v, State{AntiAlias: aa, Selected: -1, Hover: -1}))
		g.Edges[0].Class = 2
		if !(green[1] > green[0]) || !(pink[0] > pink[1]) {
			t.Errorf("aa=%v: class 2 drew %v, class 5 %v: want greenish then pinkish", aa, green, pink)
		}
		// Long on screen, the edge is drawn in the default colour.
		far := v
		far.Zoom = 60
		long2 := at(render(r, g, l, far, State{AntiAlias: aa, Selected: -1, Hover: -1}))
		g.Edges[0].Class = 5
		long5 := at(render(r, g, l, far, State{AntiAlias: aa, Selected: -1, Hover: -1}))
		g.Edges[0].Class = 0
		long0 := at(render(r, g, l, far, State{AntiAlias: aa, Selected: -1, Hover: -1}))
		g.Edges[0].Class = 2
		bare := at(render(r, Graph{Nodes: g.Nodes}, l, far, State{AntiAlias: aa, Selected: -1, Hover: -1}))
		if long2 != long0 || long5 != long0 || long0 == bare {
			t.Errorf("aa=%v: long edges of classes 2, 5, 0 drew %v, %v, %v (sky %v): want all the default", aa, long2, long5, long0, bare)
		}
		plain := render(r, g, l, v, State{AntiAlias: aa, Selected: -1, Hover: -1})
		hovered := render(r, g, l, v, State{AntiAlias: aa, Selected: -1, Hover: -1, HoverEdge: 1, EdgeTip: true})
		if n := diffPixels(plain, hovered, 30); n < 100 {
			t.Errorf("aa=%v: the hovered edge and its predicate changed %d pixels", aa, n)
		}
	}
}

// BenchmarkWorlds10k lays out 10,000 nodes / 20,000 edges with 300 hubs as worlds (the star
// map's layout; target ≤ 1 s/op, like BenchmarkLayout10k) on one core.
func BenchmarkWorlds10k(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	g, _ := plantedClusters(1, 100, 100, 18000, 2000)
	for i := range g.Nodes {
		if i%33 == 0 {
			g.Nodes[i].Hub, g.Nodes[i].Kind = true, "person"
		}
	}
	b.ResetTimer()
	for b.Loop() {
		Worlds(g, WorldOptions{Centre: 0})
	}
}

func TestWorldsKeepsTheSky(t *testing.T) {
	g, _ := personalGraph(9, 10, 10)
	before := Worlds(g, WorldOptions{Centre: 0})
	prev := map[int64]Point{}
	for i, n := range g.Nodes {
		prev[n.ID] = before.Pos[i]
	}
	// A new thing of person 0 (node 1) and a new person.
	grown := g
	grown.Nodes = append(append([]Node(nil), g.Nodes...), Node{ID: 9001, Label: "new thing", Kind: "thing"},
		Node{ID: 9002, Label: "new person", Kind: "person", Hub: true})
	grown.Edges = append(append([]Edge(nil), g.Edges...), Edge{From: 1, To: len(g.Nodes), Weight: 1}, Edge{From: 0, To: len(g.Nodes) + 1, Weight: 1})
	after := Worlds(grown, WorldOptions{Centre: 0, Previous: prev})
	for i := range g.Nodes {
		if after.Pos[i] != before.Pos[i] {
			t.Fatalf("%s moved from %v to %v", g.Nodes[i].Label, before.Pos[i], after.Pos[i])
		}
	}
	thing := after.Pos[len(g.Nodes)]
	for i := range g.Nodes {
		if d := dist(thing, after.Pos[i]); d < freeRoom-1e-9 {
			t.Errorf("the new star is %.2f from %s", d, g.Nodes[i].Label)
		}
	}
	if d := dist(thing, after.Pos[1]); d > 6 {
		t.Errorf("the new thing is %.1f from its person", d)
	}
	// Most of the sky unknown: laid out afresh, as without Previous.
	few := map[int64]Point{1: {100, 100}}
	if fresh := Worlds(grown, WorldOptions{Centre: 0, Previous: few}); !reflect.DeepEqual(fresh, Worlds(grown, WorldOptions{Centre: 0})) {
		t.Error("a previous sky of one star was kept")
	}
}

func TestTimeline(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	g := Graph{Nodes: nodes(6)}
	at := []time.Time{day(0), day(10), day(10), day(30), {}, day(30)}
	lanes := []int{0, 0, 0, 1, 1, -4}
	l := Timeline(g, at, lanes)
	p := l.Pos
	switch {
	case !(p[0].X < p[1].X && p[1].X < p[3].X):
		t.Errorf("not in time order: %v", p)
	case p[1].X != p[2].X || p[1].Y == p[2].Y:
		t.Errorf("two stars of the same moment and lane: %v and %v, want stacked", p[1], p[2])
	case !(p[4].X < p[0].X):
		t.Errorf("the undated star %v is not left of the oldest %v", p[4], p[0])
	case !(p[3].Y > p[0].Y) || p[5].Y >= p[3].Y:
		t.Errorf("lanes: %v (lane 0), %v (lane 1), %v (lane −4 as 0)", p[0], p[3], p[5])
	}
	for i, q := range p {
		if !finite(q.X) || !finite(q.Y) || math.Hypot(q.X, q.Y) > l.Radius+1e-9 {
			t.Errorf("node %d at %v, radius %v", i, q, l.Radius)
		}
	}
	if !reflect.DeepEqual(l, Timeline(g, at, lanes)) {
		t.Error("two runs differ")
	}
	// Short or missing times and lanes, and no nodes.
	if l := Timeline(Graph{Nodes: nodes(3)}, nil, nil); len(l.Pos) != 3 || !finite(l.Radius) {
		t.Errorf("without times: %+v", l)
	}
	if l := Timeline(Graph{}, nil, nil); len(l.Pos) != 0 {
		t.Errorf("no nodes: %+v", l)
	}
}

// personal10k is a personal memory of about 10,000 stars and 20,000 edges: 250 people with
// their worlds (personalGraph), plus edges inside each world up to 20,000.
func personal10k() Graph {
	g, world := personalGraph(7, 250, 30)
	rng := rand.New(rand.NewPCG(7, 7))
	byWorld := map[int][]int{}
	for i, w := range world {
		if w >= 0 {
			byWorld[w] = append(byWorld[w], i)
		}
	}
	for len(g.Edges) < 20000 {
		ms := byWorld[world[rng.IntN(len(world)-2)]]
		a, b := ms[rng.IntN(len(ms))], ms[rng.IntN(len(ms))]
		if a != b {
			g.Edges = append(g.Edges, Edge{From: a, To: b, Weight: 1, Class: rng.IntN(RelationClasses)})
		}
	}
	return g
}

func benchRenderPersonal(b *testing.B, aa bool) {
	g := personal10k()
	l := Worlds(g, WorldOptions{Centre: 0})
	f, err := LoadFont()
	if err != nil {
		b.Logf("no font, labels off: %v", err)
	}
	r := NewRenderer(RenderOptions{Font: f})
	dst := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	v := Fit(l, 1280, 800)
	s := State{AntiAlias: aa, Selected: 10, Hover: 20, PointerIn: true, Pointer: Point{700, 380}, HoverEdge: 5}
	r.Render(dst, g, l, v, s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.Render(dst, g, l, v, s)
	}
}

// BenchmarkRenderPersonalAliased is a 1280×800 frame of a personal memory of about 10,000 stars
// / 20,000 edges laid out as worlds, aliased (target ≤ 16 ms).
func BenchmarkRenderPersonalAliased(b *testing.B) { benchRenderPersonal(b, false) }

// BenchmarkRenderPersonalAntiAliased is the same frame anti-aliased.
func BenchmarkRenderPersonalAntiAliased(b *testing.B) { benchRenderPersonal(b, true) }

// BenchmarkWorldsPersonal10k lays out the personal memory of about 10,000 stars / 20,000 edges.
func BenchmarkWorldsPersonal10k(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	g := personal10k()
	for b.Loop() {
		Worlds(g, WorldOptions{Centre: 0})
	}
}
