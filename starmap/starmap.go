// Package starmap turns the memory graph into a sky: layouts — Worlds (people and their worlds:
// the owner at the centre, each hub with the stars that belong to it around it, by kind;
// direct, deterministic, incremental), Timeline (by time, in lanes) and a force-directed one
// (Barnes–Hut, deterministic for a seed, incremental) — and a software rasteriser (stars sized
// and lit by mentions, coloured by kind, recently recalled ones glowing, edges coloured by
// relation class; aliased while dragging, anti-aliased at rest; labels placed without overlap,
// hubs and the stars near the pointer first, returned by Renderer.Labels), with hit-testing of
// stars and edges. Graph in, Layout and image out (ARCHITECTURE.md §8); the desktop app and a
// web UI share it.
//
// It imports only the standard library and golang.org/x/image (never fyne): the GUI wraps it in
// one canvas.Raster.
package starmap

import "time"

// Node is a star: an entity of the memory graph.
type Node struct {
	ID    int64
	Label string
	// Kind colours the star (person, place, org, thing, concept, time, event, animal, note…).
	Kind string
	// Mentions sizes and lights the star (how often memory speaks of it).
	Mentions int
	// Recalled is when the agent last recalled it (zero: never); recent ones glow.
	Recalled time.Time
	// Pinned stars carry a ring.
	Pinned bool
	// Hub stars (people) gather a world around them in the Worlds layout and are labelled
	// before any other star.
	Hub bool
}

// Edge joins two nodes by index into Graph.Nodes.
type Edge struct {
	From, To int
	// Weight pulls harder (default 1).
	Weight float64
	// Class colours the edge by its relation type: 0 the default, 1 to RelationClasses-1 the
	// relation palette (see RelationColor).
	Class int
	// Label names the relation (the predicate); the renderer draws it when the edge is hovered.
	Label string
}

// Graph is what is laid out and drawn.
type Graph struct {
	Nodes []Node
	Edges []Edge
}

// Point is a position in layout space (the sky), or in pixels.
type Point struct{ X, Y float64 }

// Layout is the result of Compute: one position per node, in the order of Graph.Nodes.
type Layout struct {
	Pos []Point
	// Radius is the radius of the laid-out sky around its centre (0,0).
	Radius float64
	// Iterations run and whether the stop criterion was met (mean move < 0.1 % of the radius).
	Iterations int
	Converged  bool
}

// View maps the sky onto a Width×Height pixel image: the sky point Center is at the image
// centre, and one sky unit is Zoom pixels.
type View struct {
	Center        Point
	Zoom          float64
	Width, Height int
}

// ToPixel maps a sky point into the view's pixel space.
func (v View) ToPixel(p Point) Point {
	return Point{X: (p.X-v.Center.X)*v.Zoom + float64(v.Width)/2, Y: (p.Y-v.Center.Y)*v.Zoom + float64(v.Height)/2}
}

// ToSky maps a pixel back into the sky.
func (v View) ToSky(p Point) Point {
	return Point{X: (p.X-float64(v.Width)/2)/v.Zoom + v.Center.X, Y: (p.Y-float64(v.Height)/2)/v.Zoom + v.Center.Y}
}

// Fit returns the view of size w×h that shows the whole layout with a margin.
func Fit(l Layout, w, h int) View {
	r := l.Radius
	if r <= 0 {
		r = 1
	}
	zoom := 0.45 * float64(min(w, h)) / r
	return View{Zoom: zoom, Width: w, Height: h}
}
