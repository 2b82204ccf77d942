//go:build integration

package main

import (
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/hologramagent/hologram/gui"
	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/llm/llmtest"
	"github.com/hologramagent/hologram/memory/sqlite"
	"github.com/hologramagent/hologram/starmap"
)

// labelFixtureEvents is the size of the synthetic memory the labels test distils: over 1,000
// entities.
const labelFixtureEvents = 800

// TestStarMapLabels lays out and draws the star map of real distilled memories — a synthetic
// one of over 1,000 entities and an imported ChatGPT export — as the app does (its view-model
// over the kernel's service, the starmap renderer) at 1280×800, fitted, and checks the labels
// the renderer placed: at least 10 of at least 11 px, pairwise disjoint, none off-screen, the
// owner and the people among them. The frames are saved to build/screenshots/sky-*.png.
func TestStarMapLabels(t *testing.T) {
	font, err := starmap.LoadFont()
	if err != nil {
		t.Fatalf("no label font: %v", err)
	}
	for _, tc := range []struct {
		name         string
		seed         func(t *testing.T, ctx context.Context, k *kernel.Kernel, store *sqlite.Store)
		minEntities  int
		minPeopleLbl int
		owner        bool // the memory has the owner's own statements
	}{
		{"synthetic", func(t *testing.T, ctx context.Context, k *kernel.Kernel, store *sqlite.Store) {
			seedSynth(t, ctx, k, store, labelFixtureEvents)
		}, 1000, 3, false},
		{"chatgpt", func(t *testing.T, ctx context.Context, k *kernel.Kernel, _ *sqlite.Store) { seedChatGPT(t, ctx, k) }, 10, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInstall(t, "")
			llm := llmtest.NewServer(t)
			var sky *gui.Sky
			entities, _ := withStarKernel(t, in, llm.URL(), func(ctx context.Context, k *kernel.Kernel, store *sqlite.Store) {
				tc.seed(t, ctx, k, store)
				vm := gui.NewStarMapVM(k.Service(), nil)
				if err := vm.Load(ctx); err != nil {
					t.Fatal(err)
				}
				sky = vm.Sky()
			})
			if entities < tc.minEntities {
				t.Fatalf("the fixture has %d entities, want ≥ %d", entities, tc.minEntities)
			}
			const W, H = 1280, 800
			r := starmap.NewRenderer(starmap.RenderOptions{Font: font})
			img := image.NewRGBA(image.Rect(0, 0, W, H))
			r.Render(img, sky.Graph, sky.Layout, starmap.Fit(sky.Layout, W, H), starmap.State{AntiAlias: true, Selected: -1, Hover: -1,
				Highlight: sky.Highlight, Dim: sky.Dim})
			labels := r.Labels()
			big, people := 0, 0
			for k, a := range labels {
				if a.Size >= 11 {
					big++
				}
				if !a.Rect.In(img.Rect) || a.Rect.Empty() {
					t.Errorf("the label of %q at %v is off the screen", sky.Graph.Nodes[a.Node].Label, a.Rect)
				}
				for _, b := range labels[k+1:] {
					if a.Rect.Overlaps(b.Rect) {
						t.Errorf("the labels of %q %v and %q %v overlap", sky.Graph.Nodes[a.Node].Label, a.Rect, sky.Graph.Nodes[b.Node].Label, b.Rect)
					}
				}
				if sky.Graph.Nodes[a.Node].Hub {
					people++
				}
			}
			t.Logf("%d entities, %d stars, %d links: %d labels, %d of ≥ 11 px, %d of people", entities, len(sky.Graph.Nodes),
				len(sky.Graph.Edges), len(labels), big, people)
			if big < 10 {
				t.Errorf("%d labels of ≥ 11 px, want ≥ 10", big)
			}
			if people < tc.minPeopleLbl {
				t.Errorf("%d people labelled, want ≥ %d", people, tc.minPeopleLbl)
			}
			ownerNamed := false
			for _, a := range labels {
				ownerNamed = ownerNamed || (sky.Owner >= 0 && a.Node == sky.Owner)
			}
			if tc.owner && !ownerNamed {
				t.Errorf("the owner (star %d) is not labelled", sky.Owner)
			}
			// The export's owner says "My name is Sasha": one star, Sasha, at the centre.
			if tc.owner {
				sashas := 0
				for _, n := range sky.Graph.Nodes {
					if n.Label == "Sasha" || n.Label == "owner" {
						sashas++
					}
				}
				if sky.Owner < 0 || sky.Graph.Nodes[sky.Owner].Label != "Sasha" || sashas != 1 || sky.Layout.Pos[sky.Owner] != (starmap.Point{}) {
					t.Errorf("the owner's star is not the one Sasha at the centre (%d stars named Sasha or owner; the owner is %q)", sashas, ownerLabel(sky))
				}
			}
			dir := filepath.Join("..", "..", "build", "screenshots")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, "sky-"+tc.name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := png.Encode(f, img); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ownerLabel is the label of the sky's owner star ("" when it has none).
func ownerLabel(sky *gui.Sky) string {
	if sky.Owner < 0 {
		return ""
	}
	return sky.Graph.Nodes[sky.Owner].Label
}
