package starmap

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"testing"
	"time"
)

func TestNewScene(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g := Graph{
		Nodes: []Node{
			{ID: 7, Label: "Alice", Kind: "person", Mentions: 3, Hub: true, Recalled: now.Add(-time.Hour)},
			{ID: 8, Label: "Paris", Kind: "place", Mentions: -2, Pinned: true, Recalled: now.Add(-48 * time.Hour)},
			{ID: 9, Label: "Bob", Kind: "person"},
		},
		Edges: []Edge{{From: 0, To: 1, Class: 2}, {From: 1, To: 1}, {From: 0, To: 5}, {From: 2, To: 0, Class: 99}},
	}
	l := Layout{Pos: []Point{{1.234567, -2}, {3, 4}}, Radius: 5.555}
	s := NewScene(g, l, now)
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"kinds", s.Kinds, []string{"person", "place"}},
		{"kind colours", s.KindColors, []string{"#ffc878", "#6edcaa"}},
		{"kind index", s.Kind, []int{0, 1, 0}},
		{"mentions", s.Mentions, []int{3, 0, 0}},
		{"x (rounded; a node without a position at 0)", s.X, []float64{1.23, 3, 0}},
		{"flags", s.Flags, []int{FlagHub | FlagGlow, FlagPinned, 0}},
		{"edges (self-loops and bad ends dropped, bad classes 0)", s.Edges, []int32{0, 1, 2, 2, 0, 0}},
		{"radius", s.Radius, 5.56},
		{"relation colours", len(s.RelationColors), RelationClasses},
	} {
		if a, b := mustJSON(t, tc.got), mustJSON(t, tc.want); a != b {
			t.Errorf("%s: %s, want %s", tc.name, a, b)
		}
	}
	if z := NewScene(g, l, time.Time{}); z.Flags[0]&FlagGlow != 0 {
		t.Errorf("a zero clock lit a star: %v", z.Flags)
	}
	// Every column is a JSON array (a browser indexes them), none a base64 string.
	var cols map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, s)), &cols); err != nil {
		t.Fatal(err)
	}
	for name, v := range cols {
		if _, ok := v.(string); ok {
			t.Errorf("column %s is a JSON string: %v", name, v)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkWebStarMap measures the two ways a browser could show the star map of 10,000 stars /
// 20,000 edges at 1280×800 (issue 28): the desktop's frame (this package's rasteriser,
// anti-aliased), a server-rendered frame (the same, PNG-encoded: one per pan or zoom, its size
// reported as bytes/frame) and the scene as JSON (NewScene + encoding, once per load, bytes
// reported), which the web UI draws in a canvas.
func BenchmarkWebStarMap(b *testing.B) {
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
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewRenderer(RenderOptions{Font: f, Now: func() time.Time { return now }})
	dst := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	v := Fit(l, 1280, 800)
	st := State{AntiAlias: true, Selected: -1, Hover: -1}
	b.Run("desktop-frame", func(b *testing.B) {
		for b.Loop() {
			r.Render(dst, g, l, v, st)
		}
	})
	b.Run("png-frame", func(b *testing.B) {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		for b.Loop() {
			buf.Reset()
			r.Render(dst, g, l, v, st)
			if err := enc.Encode(&buf, dst); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes/frame")
	})
	b.Run("scene-json", func(b *testing.B) {
		var n int
		for b.Loop() {
			raw, err := json.Marshal(NewScene(g, l, now))
			if err != nil {
				b.Fatal(err)
			}
			n = len(raw)
		}
		b.ReportMetric(float64(n), "bytes/load")
	})
}
