package gui

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

	"github.com/hologramagent/hologram/kernel/client"
)

// TestInspectorImageHits: a cold search whose hit has images shows each image's thumbnail
// (read from the kernel) with its name, "matched" for the one the query matched by its
// picture; an image without a thumbnail is shown by name. The star map's event dialog shows
// them as well.
func TestInspectorImageHits(t *testing.T) {
	f, c := skyKernel(t)
	f.AddMemory(client.MemoryHit{ID: 301, Session: "main", Time: time.Date(2026, 5, 3, 18, 0, 0, 0, time.UTC), Role: "user", Scope: "private",
		Layer: 2, Content: "the sunset from the balcony", Score: 0.9, Reason: "image 0.93, rank 1", Images: []client.HitImage{
			{Block: "b301", Name: "sunset.png", MIME: "image/png", Matched: true}, {Block: "b302", Name: "receipt.jpg", MIME: "image/jpeg"}}})
	thumb := image.NewRGBA(image.Rect(0, 0, 120, 80))
	for i := 0; i < len(thumb.Pix); i += 4 {
		thumb.Pix[i], thumb.Pix[i+1], thumb.Pix[i+2], thumb.Pix[i+3] = 240, 120, 20, 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, thumb); err != nil {
		t.Fatal(err)
	}
	f.SetThumbnail("b301", buf.Bytes()) // b302 has none

	test.NewTempApp(t)
	vm := NewInspectorVM(c)
	w := test.NewTempWindow(t, nil)
	w.SetContent(NewInspectorView(vm, w))
	w.Resize(fyne.NewSize(900, 700))
	for _, r := range uiRoots(w) {
		uiWalk(r, func(o fyne.CanvasObject) {
			if tabs, ok := o.(*container.AppTabs); ok {
				tabs.SelectIndex(2) // Cold memory
			}
		})
	}
	_ = vm.Query.Set("sunset")
	if err := vm.Search(context.Background()); err != nil {
		t.Fatal(err)
	}
	if th, _ := vm.Thumbs.Get(); len(th) != 1 || !bytes.Equal(th["b301"], buf.Bytes()) {
		t.Fatalf("thumbnails read: %d, want b301's", len(th))
	}
	for _, want := range []string{"sunset.png (matched)", "receipt.jpg", "the sunset from the balcony"} {
		if !uiHasText(w, want) {
			t.Errorf("the hit lacks %q: %q", want, uiTexts(w))
		}
	}
	var pics []*canvas.Image
	for _, r := range uiRoots(w) {
		uiWalk(r, func(o fyne.CanvasObject) {
			if im, ok := o.(*canvas.Image); ok && im.Resource != nil && im.Resource.Name() == "b301.png" {
				pics = append(pics, im)
			}
		})
	}
	if len(pics) != 1 || pics[0].MinSize() != fyne.NewSize(thumbSide, thumbSide) || pics[0].FillMode != canvas.ImageFillContain {
		t.Fatalf("thumbnails shown: %+v", pics)
	}
	// The star map's dialog of an event in its conversation shows its images too.
	evs, err := c.EventContext(context.Background(), 301, 1)
	if err != nil || len(evs) != 1 || len(evs[0].Images) != 2 {
		t.Fatalf("EventContext = %+v, %v", evs, err)
	}
	d := test.NewTempWindow(t, nil)
	d.Resize(fyne.NewSize(700, 500))
	showEventContext(d, 301, evs, readThumbnails(context.Background(), c, evs, inspectorThumbs))
	n := 0
	for _, r := range uiRoots(d) {
		uiWalk(r, func(o fyne.CanvasObject) {
			if im, ok := o.(*canvas.Image); ok && im.Resource != nil && im.Resource.Name() == "b301.png" {
				n++
			}
		})
	}
	if n != 1 || !uiHasText(d, "receipt.jpg") {
		t.Errorf("the event dialog shows %d thumbnails of b301 (want 1): %q", n, uiTexts(d))
	}

	// HOLOGRAM_SHOT_DIR, when set, receives a screenshot of the tab to look at.
	if dir := os.Getenv("HOLOGRAM_SHOT_DIR"); dir != "" {
		var out bytes.Buffer
		if err := png.Encode(&out, w.Canvas().Capture()); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "inspector-image-hits.png"), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
