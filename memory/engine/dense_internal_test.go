package engine

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/memtest"
	"github.com/hologramagent/hologram/memory/vector"
)

// fixedEmbedder embeds every text as the same vector (the scan's cost does not depend on it).
type fixedEmbedder struct{ v []float32 }

func (f fixedEmbedder) Close() error       { return nil }
func (f fixedEmbedder) Space() embed.Space { return embed.Space{Model: "fixed", Dim: len(f.v)} }
func (f fixedEmbedder) EmbedTexts(_ context.Context, texts []string, _ embed.Role) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = f.v
	}
	return out, nil
}

// denseOver returns a dense side whose active space holds n random vectors of dim 512 for the
// events of a fresh memtest store, in one session, half of them in a group the viewer may not
// see.
func denseOver(tb testing.TB, n int) (*Dense, memory.Viewer) {
	tb.Helper()
	ctx := context.Background()
	m := memtest.NewMem(nil)
	if _, err := m.CreateSession(ctx, memory.Session{ID: "s"}); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	evs := make([]memory.Event, n)
	for i := range evs {
		evs[i] = memory.Event{Session: "s", Role: memory.RoleUser, Content: "event"}
		if i%2 == 1 {
			evs[i].Scope = memory.Scope{Kind: memory.ScopeGroup, Group: "g"}
		}
	}
	stored, err := m.AppendEvents(ctx, evs)
	if err != nil {
		tb.Fatal(err)
	}
	vecs := vector.New()
	for _, e := range stored {
		v := make([]float32, 512)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		vecs.Put(memory.VectorEntry{Event: e.ID, Session: e.Session, Scope: e.Scope, Vec: v})
	}
	q := make([]float32, 512)
	for j := range q {
		q[j] = float32(rng.NormFloat64())
	}
	e := &Engine{log: slog.New(slog.DiscardHandler)}
	d := &Dense{m: e, index: m, emb: fixedEmbedder{vector.Normalized(q)}, space: "fixed", vecs: vecs, changed: make(chan struct{})}
	return d, memory.Viewer{Group: "g"}
}

// TestDenseSearch: the scan keeps to what the viewer may see, returns the best first with their
// cosines, and describes the cosines of every event it compared.
func TestDenseSearch(t *testing.T) {
	d, group := denseOver(t, 200)
	res, err := d.Search(context.Background(), cold.DenseQuery{Text: "q", Viewer: memory.Viewer{}, Limit: 5})
	if err != nil || len(res.Hits) != 0 || res.N != 0 {
		t.Fatalf("a public viewer sees no private or group event: %+v, %v", res, err)
	}
	res, err = d.Search(context.Background(), cold.DenseQuery{Text: "q", Viewer: group, Limit: 5})
	if err != nil || len(res.Hits) != 5 || res.N != 100 {
		t.Fatalf("Search = %d hits of %d compared, %v; want 5 of the group's 100", len(res.Hits), res.N, err)
	}
	for i, h := range res.Hits {
		if h.Event.Scope.Group != "g" || (i > 0 && h.Cos > res.Hits[i-1].Cos) || h.Cos < res.Mean {
			t.Fatalf("hit %d: %+v (mean %v)", i, h, res.Mean)
		}
	}
	if res.SD <= 0 || res.Mean < -0.2 || res.Mean > 0.2 {
		t.Errorf("cosines of random vectors: mean %v, sd %v", res.Mean, res.SD)
	}
	res, _ = d.Search(context.Background(), cold.DenseQuery{Text: "q", Viewer: group, Limit: 5, Layers: []memory.Layer{memory.LayerL2}})
	if len(res.Hits) != 0 {
		t.Errorf("every event is L1; an L2 search found %d", len(res.Hits))
	}
	d.emb = nil
	if res, err := d.Search(context.Background(), cold.DenseQuery{Text: "q", Viewer: group, Limit: 5}); err != nil || res.N != 0 {
		t.Errorf("with no model ready, Search = %+v, %v; want nothing", res, err)
	}
}

// BenchmarkDenseSearch10k is recall's dense side over 10,000 vectors of dim 512 (the query's
// embedding excluded: it is cached): the scan, the statistics, the top candidates' events.
func BenchmarkDenseSearch10k(b *testing.B) {
	d, _ := denseOver(b, 10000)
	q := cold.DenseQuery{Text: "q", Viewer: memory.OwnerViewer, Limit: 30}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}
