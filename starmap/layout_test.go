package starmap

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// plantedClusters builds k clusters of size nodes: intra random edges inside clusters and inter
// random edges between them. It returns the graph and each node's cluster.
func plantedClusters(seed uint64, k, size, intra, inter int) (Graph, []int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := k * size
	g := Graph{Nodes: make([]Node, n)}
	member := make([]int, n)
	for i := range n {
		g.Nodes[i] = Node{ID: int64(i + 1), Kind: "thing"}
		member[i] = i / size
	}
	for range intra {
		c := rng.IntN(k)
		a, b := c*size+rng.IntN(size), c*size+rng.IntN(size)
		if a == b {
			b = c*size + (b-c*size+1)%size
		}
		g.Edges = append(g.Edges, Edge{From: a, To: b, Weight: 1})
	}
	for range inter {
		a, b := rng.IntN(n), rng.IntN(n)
		for member[a] == member[b] {
			b = rng.IntN(n)
		}
		g.Edges = append(g.Edges, Edge{From: a, To: b, Weight: 1})
	}
	return g, member
}

// clusterRatio is the mean distance between two nodes of the same cluster over the mean
// distance between two cluster centroids.
func clusterRatio(l Layout, member []int) float64 {
	k := 0
	for _, m := range member {
		k = max(k, m+1)
	}
	byCluster := make([][]int, k)
	for i, m := range member {
		byCluster[m] = append(byCluster[m], i)
	}
	cent := make([]Point, k)
	var intra float64
	var pairs int
	for c, nodes := range byCluster {
		for a, i := range nodes {
			cent[c].X += l.Pos[i].X / float64(len(nodes))
			cent[c].Y += l.Pos[i].Y / float64(len(nodes))
			for _, j := range nodes[a+1:] {
				intra += math.Hypot(l.Pos[i].X-l.Pos[j].X, l.Pos[i].Y-l.Pos[j].Y)
				pairs++
			}
		}
	}
	var inter float64
	var ipairs int
	for a := range cent {
		for b := a + 1; b < k; b++ {
			inter += math.Hypot(cent[a].X-cent[b].X, cent[a].Y-cent[b].Y)
			ipairs++
		}
	}
	return (intra / float64(pairs)) / (inter / float64(ipairs))
}

func TestQuality(t *testing.T) {
	g, member := plantedClusters(3, 20, 50, 20*50*6, 100)
	l := Compute(g, LayoutOptions{Seed: 1})
	r := clusterRatio(l, member)
	t.Logf("ratio %.3f iterations %d converged %v radius %.1f", r, l.Iterations, l.Converged, l.Radius)
	if r >= 0.3 {
		t.Errorf("ratio %.3f, want < 0.3", r)
	}
}

var update = flag.Bool("update", false, "rewrite the golden layouts in testdata")

func TestDeterminism(t *testing.T) {
	g, _ := plantedClusters(5, 10, 30, 900, 30)
	tests := []struct {
		name string
		a, b LayoutOptions
		same bool
	}{
		{"same seed", LayoutOptions{Seed: 7}, LayoutOptions{Seed: 7}, true},
		{"same seed, 1 vs 4 workers", LayoutOptions{Seed: 7, Workers: 1}, LayoutOptions{Seed: 7, Workers: 4}, true},
		{"other seed", LayoutOptions{Seed: 7}, LayoutOptions{Seed: 8}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			la, lb := Compute(g, tt.a), Compute(g, tt.b)
			same := reflect.DeepEqual(la, lb)
			if same != tt.same {
				t.Errorf("identical = %v, want %v", same, tt.same)
			}
		})
	}
}

// goldenLayout is the JSON form of a golden: positions rounded to 1e-6.
type goldenLayout struct {
	Pos        [][2]float64 `json:"pos"`
	Radius     float64      `json:"radius"`
	Iterations int          `json:"iterations"`
	Converged  bool         `json:"converged"`
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

func nodes(n int) []Node {
	ns := make([]Node, n)
	for i := range ns {
		ns[i] = Node{ID: int64(100 + i), Label: fmt.Sprint("n", i)}
	}
	return ns
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		g    Graph
	}{
		{"triangle", Graph{Nodes: nodes(3), Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 1, To: 2, Weight: 1}, {From: 2, To: 0, Weight: 1}}}},
		{"star", Graph{Nodes: nodes(6), Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 0, To: 2, Weight: 1}, {From: 0, To: 3, Weight: 1}, {From: 0, To: 4, Weight: 1}, {From: 0, To: 5, Weight: 1}}}},
		{"path", Graph{Nodes: nodes(5), Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 1, To: 2, Weight: 1}, {From: 2, To: 3, Weight: 1}, {From: 3, To: 4, Weight: 1}}}},
		{"two_components", Graph{Nodes: nodes(6), Edges: []Edge{{From: 0, To: 1, Weight: 1}, {From: 1, To: 2, Weight: 1}, {From: 2, To: 0, Weight: 1}, {From: 3, To: 4, Weight: 1}, {From: 4, To: 5, Weight: 1}, {From: 5, To: 3, Weight: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Compute(tt.g, LayoutOptions{Seed: 1})
			got := goldenLayout{Radius: round6(l.Radius), Iterations: l.Iterations, Converged: l.Converged}
			for _, p := range l.Pos {
				got.Pos = append(got.Pos, [2]float64{round6(p.X), round6(p.Y)})
			}
			path := filepath.Join("testdata", "layout_"+tt.name+".json")
			if *update {
				b, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden (run with -update): %v", err)
			}
			var want goldenLayout
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("layout differs from %s:\n got %+v\nwant %+v", path, got, want)
			}
			if !l.Converged {
				t.Errorf("a small graph did not converge in %d iterations", l.Iterations)
			}
		})
	}
}

func TestIncremental(t *testing.T) {
	g, _ := plantedClusters(9, 10, 20, 600, 20)
	old := Compute(g, LayoutOptions{Seed: 3})
	prev := make(map[int64]Point, len(g.Nodes))
	for i, nd := range g.Nodes {
		prev[nd.ID] = old.Pos[i]
	}
	g.Nodes = append(g.Nodes, Node{ID: 9999, Label: "new"})
	g.Edges = append(g.Edges, Edge{From: 200, To: 5}, Edge{From: 200, To: 17})
	l := Compute(g, LayoutOptions{Seed: 3, Previous: prev})
	var moved float64
	for i := range 200 {
		moved += math.Hypot(l.Pos[i].X-old.Pos[i].X, l.Pos[i].Y-old.Pos[i].Y)
	}
	moved /= 200
	t.Logf("mean displacement %.4f, radius %.2f (%.2f %%)", moved, old.Radius, 100*moved/old.Radius)
	if moved >= 0.02*old.Radius {
		t.Errorf("mean displacement of old nodes %.4f ≥ 2%% of radius %.2f", moved, old.Radius)
	}
	// The new node lands near its neighbours, not somewhere random.
	mid := Point{(l.Pos[5].X + l.Pos[17].X) / 2, (l.Pos[5].Y + l.Pos[17].Y) / 2}
	if d := math.Hypot(l.Pos[200].X-mid.X, l.Pos[200].Y-mid.Y); d > 0.25*old.Radius {
		t.Errorf("new node %.2f from its neighbours' mean, radius %.2f", d, old.Radius)
	}
}

func TestBadInputs(t *testing.T) {
	same := map[int64]Point{}
	for i := range 50 {
		same[int64(100+i)] = Point{3, 3}
	}
	tests := []struct {
		name  string
		g     Graph
		o     LayoutOptions
		iters int // expected iterations, -1: any
	}{
		{"empty", Graph{}, LayoutOptions{}, 0},
		{"one node", Graph{Nodes: nodes(1)}, LayoutOptions{}, 0},
		{"two nodes", Graph{Nodes: nodes(2), Edges: []Edge{{From: 0, To: 1, Weight: 1}}}, LayoutOptions{}, -1},
		{"two nodes, no edge", Graph{Nodes: nodes(2)}, LayoutOptions{}, -1},
		{"self-loops and duplicates", Graph{Nodes: nodes(4), Edges: []Edge{{From: 0, To: 0, Weight: 1}, {From: 1, To: 1, Weight: 5}, {From: 0, To: 1, Weight: 1}, {From: 0, To: 1, Weight: 1}, {From: 1, To: 0, Weight: 1}, {From: 2, To: 3, Weight: 1}}}, LayoutOptions{}, -1},
		{"out-of-range edges", Graph{Nodes: nodes(3), Edges: []Edge{{From: -1, To: 0, Weight: 1}, {From: 0, To: 3, Weight: 1}, {From: 7, To: 9, Weight: 1}, {From: 0, To: 1, Weight: 1}}}, LayoutOptions{}, -1},
		{"odd weights", Graph{Nodes: nodes(3), Edges: []Edge{{From: 0, To: 1, Weight: math.NaN()}, {From: 1, To: 2, Weight: math.Inf(1)}, {From: 2, To: 0, Weight: -4}, {From: 0, To: 2, Weight: 1e300}}}, LayoutOptions{}, -1},
		{"disconnected", Graph{Nodes: nodes(40)}, LayoutOptions{Workers: 3}, -1},
		{"identical starts", Graph{Nodes: nodes(50)}, LayoutOptions{Previous: same}, -1},
		{"bad previous", Graph{Nodes: nodes(3), Edges: []Edge{{From: 0, To: 1, Weight: 1}}}, LayoutOptions{Previous: map[int64]Point{100: {math.NaN(), 0}, 101: {math.Inf(-1), 1}, 102: {1e300, 1}}}, -1},
		{"bad options", Graph{Nodes: nodes(5)}, LayoutOptions{MaxIterations: -3, Theta: math.NaN(), Workers: -1}, -1},
		{"one iteration", Graph{Nodes: nodes(30)}, LayoutOptions{MaxIterations: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Compute(tt.g, tt.o)
			if len(l.Pos) != len(tt.g.Nodes) {
				t.Fatalf("%d positions for %d nodes", len(l.Pos), len(tt.g.Nodes))
			}
			if tt.iters >= 0 && l.Iterations != tt.iters {
				t.Errorf("iterations = %d, want %d", l.Iterations, tt.iters)
			}
			// Gravity holds the sky together: n stars fill about sqrt(n/gravity).
			if bound := 3 * math.Sqrt(float64(len(tt.g.Nodes))/gravity); !usable(l.Radius) || l.Radius > bound {
				t.Errorf("radius %v, want ≤ %v", l.Radius, bound)
			}
			for i, p := range l.Pos {
				if !usable(p.X) || !usable(p.Y) || math.Hypot(p.X, p.Y) > l.Radius*(1+1e-9) {
					t.Errorf("node %d at %v, radius %v", i, p, l.Radius)
				}
				for j := range i {
					if p == l.Pos[j] && len(l.Pos) > 1 {
						t.Errorf("nodes %d and %d coincide at %v", i, j, p)
					}
				}
			}
		})
	}
}
