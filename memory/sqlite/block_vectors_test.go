package sqlite_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory"
)

// scanBlocks returns the block vectors of space by block id.
func scanBlocks(t *testing.T, f *grFix, space string) map[string]memory.BlockVectorEntry {
	t.Helper()
	out := map[string]memory.BlockVectorEntry{}
	last := ""
	if err := f.s.ScanBlockVectors(f.ctx, space, func(e memory.BlockVectorEntry) error {
		if e.Block <= last {
			t.Errorf("ScanBlockVectors out of order: %s after %s", e.Block, last)
		}
		last = e.Block
		out[e.Block] = e
		return nil
	}); err != nil {
		t.Fatalf("ScanBlockVectors(%q): %v", space, err)
	}
	return out
}

// TestBlockVectors: image blocks are listed for embedding until they have a vector in the
// space; vectors carry their block's event, session and scope, survive a reopen and a move to
// L3 (the referencing event then stands for the block), are replaced per (block, space), and
// go when the event holding the block is forgotten or their space is dropped.
func TestBlockVectors(t *testing.T) {
	f := newGrFix(t)
	withImages := f.event(memory.Event{Content: "two pictures", Scope: grA, Time: grT0, Blocks: []memory.Block{
		{ID: "b1", Kind: memory.BlockImage, MIME: "image/png", Name: "one.png", Data: []byte("png1"), Text: "OCR one"},
		{ID: "b2", Kind: memory.BlockImage, MIME: "image/png", Data: []byte("png2")},
		{ID: "b3", Kind: memory.BlockText, Text: "not an image"},
	}})
	other := f.event(memory.Event{Content: "one more", Scope: grPub, Time: grT0.Add(time.Minute), Blocks: []memory.Block{
		{ID: "b4", Kind: memory.BlockImage, MIME: "image/jpeg", Data: []byte("jpg4")},
	}})
	f.ev("text only", grPub, grT0.Add(2*time.Minute))

	imgs, err := f.s.UnembeddedImages(f.ctx, "clip:a", "", 2)
	if err != nil || len(imgs) != 2 || imgs[0].ID != "b1" || imgs[1].ID != "b2" || string(imgs[0].Data) != "png1" || imgs[0].Holder.Event != withImages.ID {
		t.Fatalf("UnembeddedImages(limit 2) = %+v, %v; want b1 and b2 with their data", imgs, err)
	}
	if imgs, err = f.s.UnembeddedImages(f.ctx, "clip:a", "b2", 0); err != nil || len(imgs) != 1 || imgs[0].ID != "b4" {
		t.Fatalf("UnembeddedImages(after b2) = %+v, %v; want b4 (b3 is text)", imgs, err)
	}
	v1, v2, v4 := []float32{1, 0, 0}, []float32{0, 1, 0}, []float32{0, 0, 1}
	n, err := f.s.PutBlockVectors(f.ctx, "clip:a", []memory.BlockVector{{Block: "b1", Vec: v1}, {Block: "b2"}, {Block: "b4", Vec: v4}, {Block: "gone"}})
	if err != nil || n != 3 {
		t.Fatalf("PutBlockVectors = %d, %v; want 3 (the unknown block skipped)", n, err)
	}
	if imgs, err := f.s.UnembeddedImages(f.ctx, "clip:a", "", 0); err != nil || len(imgs) != 0 {
		t.Errorf("UnembeddedImages after embedding = %+v, %v", imgs, err)
	}
	if have, total, err := f.s.BlockVectorCounts(f.ctx, "clip:a"); err != nil || have != 3 || total != 3 {
		t.Errorf("BlockVectorCounts = %d of %d, %v; want 3 of 3 (the empty vector counts)", have, total, err)
	}
	got := scanBlocks(t, f, "clip:a")
	want := map[string]memory.BlockVectorEntry{
		"b1": {Block: "b1", Event: withImages.ID, Session: "chat", Scope: grA, Vec: v1},
		"b4": {Block: "b4", Event: other.ID, Session: "chat", Scope: grPub, Vec: v4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanBlockVectors = %+v; want %+v (the empty vector of b2 is never scanned)", got, want)
	}
	if _, err := f.s.PutBlockVectors(f.ctx, "clip:a", []memory.BlockVector{{Block: "b1", Vec: []float32{1, 2}}, {Block: "b4", Vec: v4}}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("vectors of two lengths: %v, want ErrInvalid", err)
	}
	if _, err := f.s.PutBlockVectors(f.ctx, "clip:a", []memory.BlockVector{{Block: "b2", Vec: v2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutBlockVectors(f.ctx, "clip:b", []memory.BlockVector{{Block: "b1", Vec: v2}}); err != nil {
		t.Fatal(err)
	}

	// Pinned to L3, b1 keeps its vector and is found through the event that brought it.
	if _, err := f.s.PinBlock(f.ctx, "b1", 0); err != nil {
		t.Fatalf("PinBlock: %v", err)
	}
	f.reopen()
	got = scanBlocks(t, f, "clip:a")
	if len(got) != 3 || got["b1"].Event != withImages.ID || !reflect.DeepEqual(got["b2"].Vec, v2) {
		t.Fatalf("after pinning b1 and a reopen: %+v", got)
	}

	// Forget: the blocks the event held go with their vectors; b1 (now held by its entity)
	// stays, but no event references it any more, so recall never sees it.
	if _, err := f.s.Forget(f.ctx, []int64{withImages.ID}); err != nil {
		t.Fatal(err)
	}
	if got := scanBlocks(t, f, "clip:a"); len(got) != 1 || got["b4"].Event != other.ID {
		t.Fatalf("after Forget: %+v; want b4 alone", got)
	}
	var rows int
	if err := rawDB(t, f.path, "").QueryRow(`SELECT count(*) FROM block_vectors WHERE block = 'b2'`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("b2's vectors after Forget: %d rows, %v", rows, err)
	}
	if n, err := f.s.DeleteBlockVectorsExcept(f.ctx, "clip:b"); err != nil || n != 2 {
		t.Errorf("DeleteBlockVectorsExcept = %d, %v; want 2 (b1's and b4's in clip:a)", n, err)
	}
	if have, total, err := f.s.BlockVectorCounts(f.ctx, "clip:b"); err != nil || have != 1 || total != 2 {
		t.Errorf("BlockVectorCounts(clip:b) = %d of %d, %v; want b1's of 2 images", have, total, err)
	}
	if _, err := f.s.UnembeddedImages(f.ctx, "", "", 0); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("UnembeddedImages with no space: %v", err)
	}
}
