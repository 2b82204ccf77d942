package starmap

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var kinds = []string{"person", "place", "org", "thing", "concept", "time", "event", "animal", "note", "other"}

// clusteredGraph builds n nodes in k Gaussian clusters on a ring, with m edges (80 % inside a
// cluster), heavy-tailed mentions and short labels, deterministically for seed.
func clusteredGraph(n, m, k int, seed uint64) (Graph, Layout) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	g := Graph{Nodes: make([]Node, n), Edges: make([]Edge, 0, m)}
	l := Layout{Pos: make([]Point, n), Radius: 1000}
	centers := make([]Point, k)
	for c := range centers {
		a := 2 * math.Pi * float64(c) / float64(k)
		d := 600 * math.Sqrt(rng.Float64())
		centers[c] = Point{d * math.Cos(a), d * math.Sin(a)}
	}
	cluster := make([][]int, k)
	for i := range g.Nodes {
		c := i % k
		cluster[c] = append(cluster[c], i)
		l.Pos[i] = Point{centers[c].X + rng.NormFloat64()*90, centers[c].Y + rng.NormFloat64()*90}
		g.Nodes[i] = Node{
			ID:       int64(i + 1),
			Label:    labelFor(i),
			Kind:     kinds[rng.IntN(len(kinds))],
			Mentions: int(math.Exp(rng.ExpFloat64() * 1.5)),
			Pinned:   i%97 == 0,
		}
	}
	for len(g.Edges) < m {
		a := rng.IntN(n)
		var b int
		if rng.Float64() < 0.8 {
			cl := cluster[a%k]
			b = cl[rng.IntN(len(cl))]
		} else {
			b = rng.IntN(n)
		}
		if a != b {
			g.Edges = append(g.Edges, Edge{From: a, To: b, Weight: 1})
		}
	}
	return g, l
}

func labelFor(i int) string {
	names := []string{"Alice", "北京", "Project Hologram", "cat", "Tuesday", "Acme Corp", "上海", "idea"}
	return names[i%len(names)]
}

func benchRender(b *testing.B, aa bool) {
	g, l := clusteredGraph(10000, 20000, 20, 1)
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range g.Nodes {
		if i%50 == 0 {
			g.Nodes[i].Recalled = now.Add(-time.Duration(i) * time.Minute)
		}
	}
	f, err := LoadFont()
	if err != nil {
		b.Logf("no font, labels off: %v", err)
	}
	r := NewRenderer(RenderOptions{Font: f, Now: func() time.Time { return now }})
	dst := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	v := Fit(l, 1280, 800)
	s := State{AntiAlias: aa, Selected: 10, Hover: 20, Highlight: map[int]bool{30: true}}
	r.Render(dst, g, l, v, s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.Render(dst, g, l, v, s)
	}
}

// BenchmarkRenderAliased is one 1280×800 frame of 10,000 nodes / 20,000 edges, aliased, labels
// on (target ≤ 16 ms).
func BenchmarkRenderAliased(b *testing.B) { benchRender(b, false) }

// BenchmarkRenderAntiAliased is the same frame anti-aliased.
func BenchmarkRenderAntiAliased(b *testing.B) { benchRender(b, true) }

// BenchmarkHit is one hit-test among 10,000 nodes at the Fit view and zoomed in (target ≤ 1 ms).
func BenchmarkHit(b *testing.B) {
	g, l := clusteredGraph(10000, 0, 20, 1)
	idx := NewIndex(l)
	for _, tc := range []struct {
		name string
		zoom float64
	}{{"fit", 1}, {"zoom8", 8}, {"zoomOut", 0.05}} {
		b.Run(tc.name, func(b *testing.B) {
			v := Fit(l, 1280, 800)
			v.Zoom *= tc.zoom
			rng := rand.New(rand.NewPCG(2, 2))
			b.ReportAllocs()
			for b.Loop() {
				idx.Hit(g, v, rng.Float64()*1280, rng.Float64()*800, 4)
			}
		})
	}
}

// BenchmarkNewIndex builds the hit index of 10,000 nodes.
func BenchmarkNewIndex(b *testing.B) {
	_, l := clusteredGraph(10000, 0, 20, 1)
	for b.Loop() {
		NewIndex(l)
	}
}

// benchRenderWorlds is a 1280×800 frame of the star map as the app draws it now: 10,000 nodes /
// 20,000 edges laid out as worlds (every 33rd node a hub), edges in all relation classes, the
// pointer in the sky.
func benchRenderWorlds(b *testing.B, aa bool) {
	g, _ := clusteredGraph(10000, 20000, 20, 1)
	for i := range g.Nodes {
		g.Nodes[i].Hub = i%33 == 0
	}
	for k := range g.Edges {
		g.Edges[k].Class = k % RelationClasses
	}
	l := Worlds(g, WorldOptions{Centre: 0})
	f, err := LoadFont()
	if err != nil {
		b.Logf("no font, labels off: %v", err)
	}
	r := NewRenderer(RenderOptions{Font: f})
	dst := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	v := Fit(l, 1280, 800)
	s := State{AntiAlias: aa, Selected: 10, Hover: 20, Highlight: map[int]bool{30: true}, PointerIn: true, Pointer: Point{700, 380}, HoverEdge: 5}
	r.Render(dst, g, l, v, s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r.Render(dst, g, l, v, s)
	}
}

// BenchmarkRenderWorldsAliased is the worlds frame aliased (target ≤ 16 ms).
func BenchmarkRenderWorldsAliased(b *testing.B) { benchRenderWorlds(b, false) }

// BenchmarkRenderWorldsAntiAliased is the worlds frame anti-aliased.
func BenchmarkRenderWorldsAntiAliased(b *testing.B) { benchRenderWorlds(b, true) }
