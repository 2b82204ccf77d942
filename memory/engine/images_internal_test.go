package engine

import (
	"image"
	"testing"

	"github.com/hologramagent/hologram/memory"
)

// TestImageIndex: images are found best first with their blocks and events, a block put again
// replaces its vector, and the images of forgotten events are neither found nor counted.
func TestImageIndex(t *testing.T) {
	x := newImageIndex()
	x.put(memory.BlockVectorEntry{Block: "a", Event: 1, Vec: []float32{1, 0}})
	x.put(memory.BlockVectorEntry{Block: "b", Event: 1, Vec: []float32{0, 1}})
	x.put(memory.BlockVectorEntry{Block: "c", Event: 2, Vec: []float32{1, 1}})
	best, st := x.search([]float32{1, 0}, 2, nil)
	if len(best) != 2 || best[0].block != "a" || best[0].event != 1 || best[1].block != "c" || st.N != 3 {
		t.Fatalf("search = %+v, %+v", best, st)
	}
	x.put(memory.BlockVectorEntry{Block: "a", Event: 1, Vec: []float32{0, 1}})
	if best, _ := x.search([]float32{1, 0}, 1, nil); best[0].block != "c" || x.len() != 3 {
		t.Fatalf("after replacing a: %+v (%d held)", best, x.len())
	}
	x.drop(map[int64]bool{2: true})
	if best, st := x.search([]float32{1, 0}, 3, nil); len(best) != 2 || st.N != 2 || best[0].block == "c" || best[1].block == "c" {
		t.Fatalf("after forgetting event 2: %+v, %+v", best, st)
	}
	keep := func(e memory.VectorEntry) bool { return e.Scope.Kind == memory.ScopePublic }
	if best, st := x.search([]float32{1, 0}, 3, keep); len(best) != 0 || st.N != 0 {
		t.Fatalf("a filter that keeps nothing: %+v, %+v", best, st)
	}
}

// TestShrink: an image is shrunk to embedSide on its shorter side, keeping its aspect; a small
// one is kept as it is.
func TestShrink(t *testing.T) {
	big := image.NewRGBA(image.Rect(0, 0, 4000, 2000))
	if b := shrink(big, embedSide).Bounds(); b.Dx() != 1024 || b.Dy() != 512 {
		t.Errorf("4000×2000 → %v", b)
	}
	small := image.NewRGBA(image.Rect(0, 0, 300, 900))
	if shrink(small, embedSide) != image.Image(small) {
		t.Error("a small image was copied")
	}
}
