package starmap

import (
	"math"
	"math/rand/v2"
	"sync"
)

// LayoutOptions tunes Compute. The zero value is a sensible default.
type LayoutOptions struct {
	// Seed fixes the random start positions: the same graph, options and seed give a
	// bit-identical layout.
	Seed int64
	// MaxIterations bounds the simulation (0: 300).
	MaxIterations int
	// Theta is the Barnes–Hut opening angle: a cell smaller than Theta times its distance acts
	// as one body (0: 0.9). Smaller is more exact and slower.
	Theta float64
	// Previous holds earlier positions by node ID. Those nodes start there and move little; a
	// new node starts near the mean of its placed neighbours, so it does not reshuffle the sky.
	Previous map[int64]Point
	// Workers computes the repulsion on that many goroutines (0: 1). The result does not
	// depend on it.
	Workers int
}

// The physics, in sky units where an edge is about 1 long: the LinLog energy model (Noack),
// whose minima separate communities best — every pair of stars repels with k/d (Barnes–Hut),
// every edge pulls with a constant force w — plus gravity, with the move of each star capped
// by a step that cools geometrically (Fruchterman–Reingold's temperature).
const (
	defaultIterations = 300
	defaultTheta      = 0.9
	// repulsion is the strength k of the push between any two stars, k/d at distance d.
	repulsion = 1.0
	// gravity pulls every star towards the centre with force gravity·r: it keeps disconnected
	// components together; balanced against repulsion, n stars fill a disc of radius about
	// sqrt(n/gravity).
	gravity = 0.02
	// An edge of weight w pulls its ends together with the constant force w (LinLog).
	// maxWeight bounds w so absurd weights cannot overflow.
	maxWeight = 1e3
	// startStep is the largest move in the first iteration, as a fraction of the radius; it
	// shrinks by cooling each iteration, so after log(stopFraction/startStep)/log(cooling)
	// iterations (about 50) every move is below the stop criterion.
	startStep = 0.5
	cooling   = 0.9
	// refineStep and refineCooling schedule the levels of a multilevel layout that start from
	// the coarser level's positions: already roughly right, they only need refining (at most
	// about 30 iterations).
	refineStep    = 0.1
	refineCooling = 0.85
	// levelCooling cools the intermediate coarse levels faster (about 16 iterations each):
	// only the final level needs to reach the stop criterion.
	levelCooling = 0.75
	// coarsestSize: graphs larger than this are first coarsened (by merging matched
	// neighbours) and laid out coarse to fine, so communities gather early and cheaply.
	coarsestSize = 100
	// stopFraction: the layout has converged when the mean move of an iteration is below this
	// fraction of the radius.
	stopFraction = 0.001
	// anchoredStep scales the step of nodes that start at a Previous position, so an
	// incremental layout keeps the old sky in place: over a whole run such a node moves at most
	// startStep·anchoredStep/(1-cooling) = 1 % of the radius.
	anchoredStep = 0.002
	// minDist is the distance below which two stars count as coincident.
	minDist = 1e-3
	// maxCoord bounds the Previous positions that are trusted.
	maxCoord = 1e9
)

// Compute lays out g: a force-directed layout (Barnes–Hut repulsion over a quadtree, springs on
// edges, gravity towards the centre, a cooling step), run until the mean move of an iteration
// is below 0.1 % of the layout's radius or for o.MaxIterations. Without Previous positions, a
// large graph is first coarsened and laid out coarse to fine; Iterations and Converged then
// describe the final, full-size level. Self-loops and edges whose indexes are out of range are
// ignored; duplicate edges add up. It is deterministic: the same input gives bit-identical
// output whatever o.Workers.
func Compute(g Graph, o LayoutOptions) Layout {
	n := len(g.Nodes)
	if n == 0 {
		return Layout{Pos: []Point{}, Converged: true}
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = defaultIterations
	}
	if o.Theta <= 0 || math.IsNaN(o.Theta) {
		o.Theta = defaultTheta
	}
	o.Workers = max(1, min(o.Workers, n))
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5EED57A4))

	wg := sanitize(g)
	s := newSim(wg, o.Workers)
	anchored := s.start(g, o, rng)
	frac, cool := startStep, cooling
	if !anchored && n > coarsestSize {
		s.multilevel(o, rng)
		frac, cool = refineStep, refineCooling
	}
	l := Layout{Pos: make([]Point, n)}
	if n == 1 {
		l.Converged = true
	} else {
		l.Iterations, l.Converged = s.run(o, frac, cool)
	}
	if !anchored {
		s.recentre()
	}
	r2 := 0.0
	for i := range n {
		l.Pos[i] = Point{X: s.x[i], Y: s.y[i]}
		r2 = math.Max(r2, s.x[i]*s.x[i]+s.y[i]*s.y[i])
	}
	l.Radius = math.Sqrt(r2)
	return l
}

// wgraph is a weighted graph in flat arrays: the edge list and its CSR adjacency.
type wgraph struct {
	n        int
	from, to []int32
	w        []float64
	adjStart []int32 // neighbours of i: adj[adjStart[i]:adjStart[i+1]], weights in adjW
	adj      []int32
	adjW     []float64
}

// sanitize keeps the edges of g that join two distinct, existing nodes, with a usable weight.
func sanitize(g Graph) *wgraph {
	n := len(g.Nodes)
	wg := &wgraph{n: n}
	for _, e := range g.Edges {
		if e.From < 0 || e.From >= n || e.To < 0 || e.To >= n || e.From == e.To {
			continue
		}
		w := e.Weight
		if !(w > 0) || math.IsInf(w, 0) {
			w = 1
		}
		wg.from = append(wg.from, int32(e.From))
		wg.to = append(wg.to, int32(e.To))
		wg.w = append(wg.w, math.Min(w, maxWeight))
	}
	wg.index()
	return wg
}

// index builds the CSR adjacency from the edge list.
func (wg *wgraph) index() {
	n := wg.n
	wg.adjStart = make([]int32, n+1)
	for k := range wg.from {
		wg.adjStart[wg.from[k]+1]++
		wg.adjStart[wg.to[k]+1]++
	}
	for i := range n {
		wg.adjStart[i+1] += wg.adjStart[i]
	}
	wg.adj = make([]int32, wg.adjStart[n])
	wg.adjW = make([]float64, wg.adjStart[n])
	fill := make([]int32, n)
	copy(fill, wg.adjStart[:n])
	for k := range wg.from {
		a, b := wg.from[k], wg.to[k]
		wg.adj[fill[a]], wg.adjW[fill[a]] = b, wg.w[k]
		fill[a]++
		wg.adj[fill[b]], wg.adjW[fill[b]] = a, wg.w[k]
		fill[b]++
	}
}

// coarsen merges a maximal matching of wg (each node, in a random order, with its heaviest
// unmatched neighbour) into single nodes. It returns the coarse graph, whose parallel edges
// are summed, and each node's coarse node.
func (wg *wgraph) coarsen(rng *rand.Rand) (*wgraph, []int32) {
	parent := make([]int32, wg.n)
	for i := range parent {
		parent[i] = -1
	}
	nc := int32(0)
	for _, u := range rng.Perm(wg.n) {
		if parent[u] >= 0 {
			continue
		}
		best, bw := int32(-1), 0.0
		for k := wg.adjStart[u]; k < wg.adjStart[u+1]; k++ {
			if v := wg.adj[k]; parent[v] < 0 && wg.adjW[k] > bw {
				best, bw = v, wg.adjW[k]
			}
		}
		parent[u] = nc
		if best >= 0 {
			parent[best] = nc
		}
		nc++
	}
	c := &wgraph{n: int(nc)}
	seen := make(map[uint64]int32, len(wg.from)) // looked up only, never iterated
	for k := range wg.from {
		a, b := parent[wg.from[k]], parent[wg.to[k]]
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		key := uint64(a)<<32 | uint64(b)
		if e, ok := seen[key]; ok {
			c.w[e] += wg.w[k]
			continue
		}
		seen[key] = int32(len(c.from))
		c.from = append(c.from, a)
		c.to = append(c.to, b)
		c.w = append(c.w, wg.w[k])
	}
	c.index()
	return c, parent
}

// multilevel sets s's start positions by laying out ever coarser versions of its graph, from
// the coarsest up: each level starts where its coarse node ended, spread to its own size.
func (s *sim) multilevel(o LayoutOptions, rng *rand.Rand) {
	graphs := []*wgraph{s.g}
	var parents [][]int32
	for last := s.g; last.n > coarsestSize; {
		c, p := last.coarsen(rng)
		if c.n > last.n*4/5 { // the matching no longer shrinks the graph much
			break
		}
		graphs, parents = append(graphs, c), append(parents, p)
		last = c
	}
	if len(parents) == 0 {
		return
	}
	// Coarsest level: random start, full schedule.
	top := len(graphs) - 1
	cs := newSim(graphs[top], o.Workers)
	cs.scatter(rng, math.Sqrt(float64(cs.n)))
	cs.run(o, startStep, cooling)
	for lvl := top - 1; lvl >= 0; lvl-- {
		fs := s
		if lvl > 0 {
			fs = newSim(graphs[lvl], o.Workers)
		}
		scale := math.Sqrt(float64(fs.n) / float64(cs.n))
		for i, p := range parents[lvl] {
			ang := rng.Float64() * 2 * math.Pi
			fs.x[i] = cs.x[p]*scale + 0.3*math.Cos(ang)
			fs.y[i] = cs.y[p]*scale + 0.3*math.Sin(ang)
		}
		if lvl > 0 {
			fs.run(o, refineStep, levelCooling)
		}
		cs = fs
	}
}

// sim is the state of one layout: flat arrays, allocated once.
type sim struct {
	n      int
	g      *wgraph
	x, y   []float64
	fx, fy []float64
	step   []float64 // per-node step factor: 1, or anchoredStep for Previous nodes
	tree   quadtree
	order  []int32   // bodies in tree order, so consecutive traversals share cache
	stacks [][]int32 // one traversal stack per worker
}

func newSim(g *wgraph, workers int) *sim {
	n := g.n
	s := &sim{
		n: n, g: g, x: make([]float64, n), y: make([]float64, n),
		fx: make([]float64, n), fy: make([]float64, n), step: make([]float64, n),
		stacks: make([][]int32, workers),
	}
	for i := range s.step {
		s.step[i] = 1
	}
	return s
}

// scatter places every node uniformly at random in the disc of radius r.
func (s *sim) scatter(rng *rand.Rand, r float64) {
	for i := range s.n {
		rad := r * math.Sqrt(rng.Float64())
		ang := rng.Float64() * 2 * math.Pi
		s.x[i], s.y[i] = rad*math.Cos(ang), rad*math.Sin(ang)
	}
}

// start sets the initial positions: Previous ones where given (anchored), new nodes near the
// mean of their placed neighbours (breadth first from the anchored ones), and the rest at
// random in a disc. It reports whether any node was anchored.
func (s *sim) start(g Graph, o LayoutOptions, rng *rand.Rand) bool {
	placed := make([]bool, s.n)
	var queue []int32
	r2 := 0.0
	for i, nd := range g.Nodes {
		p, ok := o.Previous[nd.ID]
		if !ok || !usable(p.X) || !usable(p.Y) {
			continue
		}
		s.x[i], s.y[i], s.step[i], placed[i] = p.X, p.Y, anchoredStep, true
		queue = append(queue, int32(i))
		r2 = math.Max(r2, p.X*p.X+p.Y*p.Y)
	}
	anchored := len(queue) > 0
	adj, adjStart := s.g.adj, s.g.adjStart
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range adj[adjStart[u]:adjStart[u+1]] {
			if placed[v] {
				continue
			}
			var mx, my float64
			k := 0
			for _, nb := range adj[adjStart[v]:adjStart[v+1]] {
				if placed[nb] {
					mx += s.x[nb]
					my += s.y[nb]
					k++
				}
			}
			ang := rng.Float64() * 2 * math.Pi
			s.x[v] = mx/float64(k) + 0.5*math.Cos(ang)
			s.y[v] = my/float64(k) + 0.5*math.Sin(ang)
			placed[v] = true
			queue = append(queue, v)
		}
	}
	// The rest: uniformly in the disc a settled layout of n stars would fill, or the old sky.
	r := math.Max(math.Sqrt(float64(s.n)), math.Sqrt(r2))
	for i := range s.n {
		if placed[i] {
			continue
		}
		rad := r * math.Sqrt(rng.Float64())
		ang := rng.Float64() * 2 * math.Pi
		s.x[i], s.y[i] = rad*math.Cos(ang), rad*math.Sin(ang)
	}
	return anchored
}

// usable reports whether f is finite and within maxCoord.
func usable(f float64) bool { return !math.IsNaN(f) && math.Abs(f) <= maxCoord }

// run iterates until convergence or o.MaxIterations: the largest move starts at frac of the
// radius and shrinks by cool each iteration.
func (s *sim) run(o LayoutOptions, frac, cool float64) (iterations int, converged bool) {
	theta2 := o.Theta * o.Theta
	radius := s.radius()
	for it := 1; it <= o.MaxIterations; it++ {
		s.tree.build(s.x, s.y)
		s.order, s.stacks[0] = s.tree.order(s.order[:0], s.stacks[0])
		s.repel(theta2, o.Workers)
		s.attract()
		limit := frac * math.Max(radius, 1)
		moved := 0.0
		for i := range s.n {
			fx, fy := s.fx[i], s.fy[i]
			f := math.Sqrt(fx*fx + fy*fy)
			lim := limit * s.step[i]
			if f > lim {
				k := lim / f
				fx, fy, f = fx*k, fy*k, lim
			}
			if !(f > 0) { // zero or NaN force: stay
				continue
			}
			s.x[i] += fx
			s.y[i] += fy
			moved += f
		}
		radius = s.radius()
		frac *= cool
		if moved/float64(s.n) < stopFraction*math.Max(radius, 1) {
			return it, true
		}
	}
	return o.MaxIterations, false
}

// radius is the largest distance of a node from the centre (0,0).
func (s *sim) radius() float64 {
	r2 := 0.0
	for i := range s.n {
		r2 = math.Max(r2, s.x[i]*s.x[i]+s.y[i]*s.y[i])
	}
	return math.Sqrt(r2)
}

// repel sets fx, fy to the repulsion (Barnes–Hut) plus gravity on every node. Each node's force
// is computed independently from the tree, so splitting the nodes among workers does not
// change the result.
func (s *sim) repel(theta2 float64, workers int) {
	if workers <= 1 {
		s.repelRange(0, s.n, theta2, 0)
		return
	}
	var wg sync.WaitGroup
	chunk := (s.n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, s.n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.repelRange(lo, hi, theta2, w)
		}()
	}
	wg.Wait()
}

func (s *sim) repelRange(lo, hi int, theta2 float64, worker int) {
	stack := s.stacks[worker]
	for _, i := range s.order[lo:hi] {
		var fx, fy float64
		fx, fy, stack = s.tree.repulsion(i, s.x[i], s.y[i], theta2, repulsion, stack)
		s.fx[i] = fx - gravity*s.x[i]
		s.fy[i] = fy - gravity*s.y[i]
	}
	s.stacks[worker] = stack
}

// attract adds the springs: each edge pulls its ends together with the constant force w.
func (s *sim) attract() {
	g := s.g
	for k := range g.from {
		a, b := g.from[k], g.to[k]
		dx, dy := s.x[b]-s.x[a], s.y[b]-s.y[a]
		f := g.w[k] / math.Sqrt(dx*dx+dy*dy+minDist*minDist) // (w)·(dx/d): a constant pull, as in LinLog
		s.fx[a] += dx * f
		s.fy[a] += dy * f
		s.fx[b] -= dx * f
		s.fy[b] -= dy * f
	}
}

// recentre moves the centroid to (0,0).
func (s *sim) recentre() {
	var cx, cy float64
	for i := range s.n {
		cx += s.x[i]
		cy += s.y[i]
	}
	cx /= float64(s.n)
	cy /= float64(s.n)
	for i := range s.n {
		s.x[i] -= cx
		s.y[i] -= cy
	}
}
