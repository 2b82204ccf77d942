package starmap

import (
	"cmp"
	"math"
	"slices"
)

// WorldOptions tunes Worlds.
type WorldOptions struct {
	// Centre is the index of the star drawn at the centre (the owner), -1 for none. It is a hub
	// whatever its Node.Hub.
	Centre int
	// Spacing is the distance between neighbouring stars of a world, in sky units (0: 1).
	Spacing float64
	// Previous holds earlier positions by node ID (a reload). When they cover at least
	// keepFraction of the stars, those stars stay where they were and each new one takes the
	// first free place near its hub (or its first placed neighbour); otherwise the sky is laid
	// out afresh.
	Previous map[int64]Point
}

// The shape of a world: its hub sits in an empty core of coreStars stars' room; worlds on a ring
// keep worldGap spacings apart, and the centre's edges count centreWeight, so a thing the owner
// and a friend share lands in the friend's world.
const (
	coreStars    = 6
	worldGap     = 2.5
	centreWeight = 0.5
	// keepFraction is the share of stars with a Previous position needed to keep the old sky.
	keepFraction = 0.8
	// freeRoom is how near, in spacings, another star may be to a new star's place.
	freeRoom = 0.7
)

// golden is the golden angle's fraction of a turn: successive stars of a sector spread evenly.
var golden = (3 - math.Sqrt(5)) / 2

// kindOrder is the order of the kinds' sectors in a world (other kinds follow, by name).
var kindOrder = map[string]int{"person": 0, "place": 1, "org": 2, "thing": 3, "animal": 4, "event": 5, "time": 6,
	"concept": 7, "note": 8}

// Worlds lays g out as people and their worlds: the centre star (the owner) at (0,0) with the
// stars that belong to it around it, and every hub (a Node.Hub star, a person) at the centre of
// its own disc — a world — holding the stars closer to it than to any other hub (the hub it has
// the heaviest edges to; else the nearest by hops). Inside a world the stars are grouped in
// sectors by kind, the most mentioned closest to the hub. Worlds are packed in rings around the
// centre, biggest first; stars connected to no hub form one last world without a hub. The layout
// is computed directly (no simulation): linear in the graph's size, deterministic, and
// Iterations is 0.
func Worlds(g Graph, o WorldOptions) Layout {
	n := len(g.Nodes)
	if n == 0 {
		return Layout{Pos: []Point{}, Converged: true}
	}
	sp := o.Spacing
	if !(sp > 0) || math.IsInf(sp, 0) {
		sp = 1
	}
	centre := o.Centre
	if centre < 0 || centre >= n {
		centre = -1
	}
	wg := sanitize(g)

	// The hubs, centre first, then by weighted degree, mentions and index.
	deg := make([]float64, n)
	for k := range wg.from {
		deg[wg.from[k]] += wg.w[k]
		deg[wg.to[k]] += wg.w[k]
	}
	world := make([]int32, n) // each star's world (an index into hubs), -1 unassigned
	for i := range world {
		world[i] = -1
	}
	var hubs []int32
	for i, nd := range g.Nodes {
		if nd.Hub || i == centre {
			hubs = append(hubs, int32(i))
		}
	}
	slices.SortStableFunc(hubs, func(a, b int32) int {
		return cmp.Or(cmp.Compare(b2i(int(b) == centre), b2i(int(a) == centre)), cmp.Compare(deg[b], deg[a]),
			cmp.Compare(g.Nodes[b].Mentions, g.Nodes[a].Mentions), cmp.Compare(a, b))
	})
	for h, i := range hubs {
		world[i] = int32(h)
	}

	// Stars next to a hub join the hub they have the heaviest edges to.
	var queue []int32
	for i := range n {
		if world[i] >= 0 {
			continue
		}
		best, bw := int32(-1), 0.0
		for k := wg.adjStart[i]; k < wg.adjStart[i+1]; k++ {
			v := wg.adj[k]
			if !g.Nodes[v].Hub && int(v) != centre {
				continue
			}
			w := wg.adjW[k]
			if int(v) == centre {
				w *= centreWeight
			}
			// Several edges to the same hub add up.
			for k2 := wg.adjStart[i]; k2 < k; k2++ {
				if wg.adj[k2] == v {
					w = -1 // counted already
					break
				}
			}
			if w < 0 {
				continue
			}
			for k2 := k + 1; k2 < wg.adjStart[i+1]; k2++ {
				if wg.adj[k2] == v {
					x := wg.adjW[k2]
					if int(v) == centre {
						x *= centreWeight
					}
					w += x
				}
			}
			if h := world[v]; w > bw || (w == bw && best >= 0 && h < best) {
				best, bw = h, w
			}
		}
		if best >= 0 {
			world[i] = best
			queue = append(queue, int32(i))
		}
	}
	// The rest join the world of the first assigned neighbour reached, breadth first.
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range wg.adj[wg.adjStart[u]:wg.adjStart[u+1]] {
			if world[v] < 0 {
				world[v] = world[u]
				queue = append(queue, v)
			}
		}
	}
	loose := int32(len(hubs)) // the world of the stars no hub reaches
	nw := len(hubs)
	for i := range n {
		if world[i] < 0 {
			world[i] = loose
			nw = len(hubs) + 1
		}
	}

	// Members of each world, by kind sector, then most mentioned first.
	members := make([][]int32, nw)
	for i := range n {
		if w := world[i]; int(w) < len(hubs) && hubs[w] == int32(i) {
			continue
		}
		members[world[i]] = append(members[world[i]], int32(i))
	}
	kindRank := func(k string) int {
		if r, ok := kindOrder[k]; ok {
			return r
		}
		return len(kindOrder)
	}
	radius := make([]float64, nw)
	pos := make([]Point, n)
	for w, ms := range members {
		slices.SortStableFunc(ms, func(a, b int32) int {
			na, nb := &g.Nodes[a], &g.Nodes[b]
			return cmp.Or(cmp.Compare(kindRank(na.Kind), kindRank(nb.Kind)), cmp.Compare(na.Kind, nb.Kind),
				cmp.Compare(nb.Mentions, na.Mentions), cmp.Compare(a, b))
		})
		core := 0.0
		if w < len(hubs) {
			core = coreStars
		}
		// Area: one star per π·(sp/2)²·… — a disc of radius sp·√(count) holds count stars about
		// sp apart.
		r0 := sp * math.Sqrt(core) * 0.6
		R := sp * 0.6 * math.Sqrt(core+float64(len(ms)))
		radius[w] = math.Max(R, sp)
		// Sectors: each kind gets a share of the turn in proportion to its stars.
		start := 0.0
		for lo := 0; lo < len(ms); {
			hi := lo
			for hi < len(ms) && g.Nodes[ms[hi]].Kind == g.Nodes[ms[lo]].Kind {
				hi++
			}
			c := hi - lo
			width := 2 * math.Pi * float64(c) / float64(len(ms))
			for t := 0; t < c; t++ {
				f := (float64(t) + 0.5) / float64(c)
				r := math.Sqrt(r0*r0 + (R*R-r0*r0)*f)
				a := start + width*frac(float64(t)*golden+0.5)
				pos[ms[lo+t]] = Point{X: r * math.Cos(a), Y: r * math.Sin(a)}
			}
			start += width
			lo = hi
		}
	}

	// Place the worlds: the centre's (or the biggest) at (0,0), the others on rings around it,
	// biggest first; each ring as thick as its first (biggest) world.
	order := make([]int, nw)
	for w := range order {
		order[w] = w
	}
	first := 0
	if centre < 0 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(radius[b], radius[a]) })
	} else {
		slices.SortStableFunc(order[1:], func(a, b int) int { return cmp.Compare(radius[b], radius[a]) })
	}
	offset := make([]Point, nw)
	inner := radius[order[first]] // the radius the next ring must clear
	gap := worldGap * sp
	for k := 1; k < nw; {
		rMax := radius[order[k]]
		rho := inner + gap + rMax
		// Fill the ring while the worlds' angular widths fit in a turn.
		used := 0.0
		end := k
		for end < nw {
			a := 2 * math.Asin(math.Min(1, (radius[order[end]]+gap/2)/rho))
			if end > k && used+a > 2*math.Pi {
				break
			}
			used += a
			end++
		}
		// Spread the ring's worlds evenly over the turn: the leftover angle goes between them.
		spare := math.Max(0, 2*math.Pi-used) / float64(end-k)
		ang := 0.0
		for j := k; j < end; j++ {
			a := 2 * math.Asin(math.Min(1, (radius[order[j]]+gap/2)/rho))
			mid := ang + a/2
			offset[order[j]] = Point{X: rho * math.Cos(mid), Y: rho * math.Sin(mid)}
			ang += a + spare
		}
		inner = rho + rMax
		k = end
	}
	l := Layout{Pos: pos, Converged: true}
	for i := range n {
		w := world[i]
		p := Point{X: pos[i].X + offset[w].X, Y: pos[i].Y + offset[w].Y}
		if int(w) < len(hubs) && hubs[w] == int32(i) {
			p = offset[w]
		}
		l.Pos[i] = p
	}
	if len(o.Previous) > 0 {
		keep(g, wg, o.Previous, world, hubs, sp, &l)
	}
	r2 := 0.0
	for _, p := range l.Pos {
		r2 = math.Max(r2, p.X*p.X+p.Y*p.Y)
	}
	l.Radius = math.Max(math.Sqrt(r2), sp)
	return l
}

// keep turns the fresh layout l into an update of the previous sky when prev covers enough of
// the stars: known stars go back where they were, and each new star (in index order) takes the
// first free place on a sunflower spiral around its hub, else its first placed neighbour, else
// the centre.
func keep(g Graph, wg *wgraph, prev map[int64]Point, world []int32, hubs []int32, sp float64, l *Layout) {
	n := len(g.Nodes)
	placed := make([]bool, n)
	known := 0
	for _, nd := range g.Nodes {
		if p, ok := prev[nd.ID]; ok && usable(p.X) && usable(p.Y) {
			known++
		}
	}
	if float64(known) < keepFraction*float64(n) {
		return // a new sky: nothing to keep
	}
	for i, nd := range g.Nodes {
		if p, ok := prev[nd.ID]; ok && usable(p.X) && usable(p.Y) {
			placed[i] = true
			l.Pos[i] = p
		}
	}
	cell := freeRoom * sp
	type key struct{ x, y int64 }
	grid := map[key][]int32{}
	at := func(p Point) key { return key{int64(math.Floor(p.X / cell)), int64(math.Floor(p.Y / cell))} }
	for i := range n {
		if placed[i] {
			k := at(l.Pos[i])
			grid[k] = append(grid[k], int32(i))
		}
	}
	free := func(p Point) bool {
		k := at(p)
		for dx := int64(-1); dx <= 1; dx++ {
			for dy := int64(-1); dy <= 1; dy++ {
				for _, j := range grid[key{k.x + dx, k.y + dy}] {
					if dist2(l.Pos[j], p) < cell*cell {
						return false
					}
				}
			}
		}
		return true
	}
	for i := range n {
		if placed[i] {
			continue
		}
		anchor := Point{}
		if w := world[i]; int(w) < len(hubs) && placed[hubs[w]] {
			anchor = l.Pos[hubs[w]]
		} else {
			for _, v := range wg.adj[wg.adjStart[i]:wg.adjStart[i+1]] {
				if placed[v] {
					anchor = l.Pos[v]
					break
				}
			}
		}
		for k := 1; ; k++ {
			r := 0.6 * sp * math.Sqrt(float64(k))
			a := 2 * math.Pi * golden * float64(k)
			p := Point{X: anchor.X + r*math.Cos(a), Y: anchor.Y + r*math.Sin(a)}
			if free(p) {
				l.Pos[i] = p
				break
			}
		}
		placed[i] = true
		kk := at(l.Pos[i])
		grid[kk] = append(grid[kk], int32(i))
	}
}

func dist2(a, b Point) float64 { return (a.X-b.X)*(a.X-b.X) + (a.Y-b.Y)*(a.Y-b.Y) }

func frac(f float64) float64 { return f - math.Floor(f) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
