package starmap

import (
	"math"
	"slices"
	"time"
)

// Timeline lays g out along time: node i at the horizontal position of at[i] (oldest left,
// newest right) in the horizontal band of lane lanes[i] (lane 0 on top; negative lanes count as
// 0), stars of the same moment and lane stacked above and below the band's middle. Nodes whose
// time is zero stand in a column left of the oldest. The layout spans about ±√n·1.5 sky units
// wide (at least ±10) and 0.6 of that high; it is deterministic. A missing time or lane counts
// as zero.
func Timeline(g Graph, at []time.Time, lanes []int) Layout {
	n := len(g.Nodes)
	if n == 0 {
		return Layout{Pos: []Point{}, Converged: true}
	}
	timeOf := func(i int) time.Time {
		if i < len(at) {
			return at[i]
		}
		return time.Time{}
	}
	laneOf := func(i int) int {
		if i < len(lanes) {
			return max(0, lanes[i])
		}
		return 0
	}
	nl := 1
	var lo, hi time.Time
	for i := range n {
		nl = max(nl, laneOf(i)+1)
		if t := timeOf(i); !t.IsZero() {
			if lo.IsZero() || t.Before(lo) {
				lo = t
			}
			if hi.IsZero() || t.After(hi) {
				hi = t
			}
		}
	}
	R := math.Max(10, 1.5*math.Sqrt(float64(n)))
	H := 0.6 * R
	band := 2 * H / float64(nl)
	cols := max(1, int(2*R))
	span := hi.Sub(lo).Seconds()
	// Each (lane, column) cell stacks its stars in time order.
	type cell struct{ lane, col int }
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return timeOf(a).Compare(timeOf(b)) })
	used := map[cell]int{}
	pos := make([]Point, n)
	for _, i := range order {
		ln, col := laneOf(i), -1
		x := -R - 2
		if t := timeOf(i); !t.IsZero() {
			f := 0.5
			if span > 0 {
				f = t.Sub(lo).Seconds() / span
			}
			col = int(math.Round(f * float64(cols-1)))
			x = -R + 2*R*float64(col)/float64(max(1, cols-1))
		}
		k := used[cell{ln, col}]
		used[cell{ln, col}] = k + 1
		// 0, +1, −1, +2, −2 … spacings from the band's middle, wrapping inside the band.
		step := float64((k+1)/2) * 0.9
		if k%2 == 1 {
			step = -step
		}
		room := math.Max(0.45*band-0.5, 0.5)
		step = math.Mod(step, room)
		y := -H + (float64(ln)+0.5)*band + step
		pos[i] = Point{X: x, Y: y}
	}
	l := Layout{Pos: pos, Converged: true}
	r2 := 0.0
	for _, p := range pos {
		r2 = math.Max(r2, p.X*p.X+p.Y*p.Y)
	}
	l.Radius = math.Sqrt(r2)
	return l
}
