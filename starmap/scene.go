package starmap

import (
	"fmt"
	"math"
	"time"
)

// Scene is a laid-out graph in the compact form a browser draws (the web UI's star map): one
// column per node attribute, the edges flattened, the colours of the palette this package draws
// with. It is JSON as it stands (encoding/json). A 1280×800 frame of 10,000 stars is drawn by the
// browser's canvas from one Scene fetched once, where a server-rendered frame would be an image
// per pan or zoom (BenchmarkWebStarMap measures both).
type Scene struct {
	// Radius is the layout's radius around (0,0), in sky units.
	Radius float64 `json:"radius"`
	// Kinds lists the node kinds in order of first use; KindColors are their colours (#rrggbb).
	Kinds      []string `json:"kinds"`
	KindColors []string `json:"kind_colors"`
	// RelationColors are the edge colours by Edge.Class (#rrggbb).
	RelationColors []string `json:"relation_colors"`
	// The nodes, one entry per node of the graph, in its order.
	ID       []int64   `json:"id"`
	Label    []string  `json:"label"`
	Kind     []int     `json:"kind"` // index into Kinds
	Mentions []int     `json:"mentions"`
	X        []float64 `json:"x"`
	Y        []float64 `json:"y"`
	// Flags per node: FlagPinned, FlagHub, FlagGlow (ints: a []uint8 would be JSON base64).
	Flags []int `json:"flags"`
	// Edges holds three numbers per edge: from, to (node indices) and class.
	Edges []int32 `json:"edges"`
}

// Scene node flags.
const (
	FlagPinned = 1 << iota // carries a ring
	FlagHub                // a person: labelled first
	FlagGlow               // recalled within GlowWindow of the scene's clock
)

// NewScene returns the scene of graph g laid out as l, with now as the clock of the glow (the
// zero time: no star glows). Positions are rounded to 1/100 of a sky unit.
func NewScene(g Graph, l Layout, now time.Time) Scene {
	n := len(g.Nodes)
	s := Scene{Radius: round2(l.Radius), Kinds: []string{}, KindColors: []string{},
		RelationColors: make([]string, RelationClasses),
		ID:             make([]int64, n), Label: make([]string, n), Kind: make([]int, n), Mentions: make([]int, n),
		X: make([]float64, n), Y: make([]float64, n), Flags: make([]int, n), Edges: make([]int32, 0, 3*len(g.Edges))}
	for c := range RelationClasses {
		s.RelationColors[c] = hex(RelationColor(c).R, RelationColor(c).G, RelationColor(c).B)
	}
	kinds := map[string]int{}
	for i, nd := range g.Nodes {
		k, ok := kinds[nd.Kind]
		if !ok {
			k = len(s.Kinds)
			kinds[nd.Kind] = k
			c := KindColor(nd.Kind)
			s.Kinds = append(s.Kinds, nd.Kind)
			s.KindColors = append(s.KindColors, hex(c.R, c.G, c.B))
		}
		s.ID[i], s.Label[i], s.Kind[i], s.Mentions[i] = nd.ID, nd.Label, k, max(nd.Mentions, 0)
		if i < len(l.Pos) && usable(l.Pos[i].X) && usable(l.Pos[i].Y) {
			s.X[i], s.Y[i] = round2(l.Pos[i].X), round2(l.Pos[i].Y)
		}
		var f int
		if nd.Pinned {
			f |= FlagPinned
		}
		if nd.Hub {
			f |= FlagHub
		}
		if !now.IsZero() && !nd.Recalled.IsZero() && now.Sub(nd.Recalled) < GlowWindow && !nd.Recalled.After(now) {
			f |= FlagGlow
		}
		s.Flags[i] = f
	}
	for _, e := range g.Edges {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n || e.From == e.To {
			continue
		}
		c := e.Class
		if c < 0 || c >= RelationClasses {
			c = 0
		}
		s.Edges = append(s.Edges, int32(e.From), int32(e.To), int32(c))
	}
	return s
}

func round2(f float64) float64 {
	if !finite(f) {
		return 0
	}
	return math.Round(f*100) / 100
}

func hex(r, g, b uint8) string { return fmt.Sprintf("#%02x%02x%02x", r, g, b) }
