package engine

import (
	"context"
	"fmt"
	"image"
	"sync"

	"golang.org/x/image/draw"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/ocr"
	"github.com/hologramagent/hologram/memory/vector"
)

// Image vectors (issue 34). When the active model embeds images as well as text
// (embed.ImageEmbedder: Chinese-CLIP and the other CLIP-like models), the re-embedding worker
// also embeds every image block that has no vector in the model's space (attachments,
// screenshots, video keyframes, tool images: every block of kind image), in small batches after
// the events, and recall searches those vectors with the query embedded by the text tower
// (cold.DenseResult.Images). A model that embeds text only leaves images without vectors and
// recall as it was.

// imageBatch is how many images one model run embeds.
const imageBatch = 8

// embedSide bounds the shorter side of an image kept for embedding: each is shrunk as it is
// decoded, so a batch of 8K screenshots (133 MB each decoded) holds ≈ 1 MB apiece. CLIP-like
// models take a 224–336 px square, so nothing they see is lost.
const embedSide = 512

// imageIndex holds the image vectors of one space by block. Entries are kept in a
// vector.Index under a sequence number of their own (an event may bring several images), whose
// Event field is the sequence number; blocks maps it back.
type imageIndex struct {
	idx *vector.Index

	mu      sync.RWMutex
	seq     map[string]int64 // block id → key in idx
	blocks  []imageRef       // key-1 → the block and its event
	dropped map[int64]bool   // keys of forgotten blocks (their vectors stay in idx, unused)
}

type imageRef struct {
	block string
	event int64
}

func newImageIndex() *imageIndex {
	return &imageIndex{idx: vector.New(), seq: map[string]int64{}, dropped: map[int64]bool{}}
}

// put adds or replaces a block's vector.
func (x *imageIndex) put(e memory.BlockVectorEntry) {
	x.mu.Lock()
	k, ok := x.seq[e.Block]
	if !ok {
		x.blocks = append(x.blocks, imageRef{block: e.Block, event: e.Event})
		k = int64(len(x.blocks))
		x.seq[e.Block] = k
	} else {
		x.blocks[k-1].event = e.Event
	}
	delete(x.dropped, k)
	x.mu.Unlock()
	x.idx.Put(memory.VectorEntry{Event: k, Session: e.Session, Scope: e.Scope, Vec: e.Vec})
}

// len is the number of image vectors held.
func (x *imageIndex) len() int { return x.idx.Len() }

// scoredImage is a block, its event and its cosine to a query.
type scoredImage struct {
	block string
	event int64
	cos   float64
}

// search returns the k images nearest q that keep accepts (by their event's session and the
// block's scope), best first, and the statistics of every accepted cosine.
func (x *imageIndex) search(q []float32, k int, keep func(memory.VectorEntry) bool) ([]scoredImage, vector.Stats) {
	best, st := x.idx.Search(q, k, func(e memory.VectorEntry) bool {
		x.mu.RLock()
		gone := x.dropped[e.Event]
		x.mu.RUnlock()
		return !gone && (keep == nil || keep(e))
	})
	out := make([]scoredImage, len(best))
	x.mu.RLock()
	for i, b := range best {
		ref := x.blocks[b.Event-1]
		out[i] = scoredImage{block: ref.block, event: ref.event, cos: b.Cos}
	}
	x.mu.RUnlock()
	return out, st
}

// drop stops using the images of forgotten events (the store has deleted their blocks, and
// with them their vectors): they no longer count in a search's statistics either.
func (x *imageIndex) drop(events map[int64]bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, ref := range x.blocks {
		if events[ref.event] {
			x.dropped[int64(i+1)] = true
		}
	}
}

// forgotten tells the dense side that events were forgotten.
func (d *Dense) forgotten(ids []int64) {
	d.mu.Lock()
	imgs := d.imgs
	d.mu.Unlock()
	if imgs == nil {
		return
	}
	gone := make(map[int64]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	imgs.drop(gone)
}

// loadImages reads the block vectors of space into a new index.
func (d *Dense) loadImages(ctx context.Context, space string) (*imageIndex, error) {
	imgs := newImageIndex()
	if err := d.bvs.ScanBlockVectors(ctx, space, func(e memory.BlockVectorEntry) error {
		imgs.put(e)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load the image vectors of %s: %w", space, err)
	}
	return imgs, nil
}

// reembedImages embeds every image block without a vector in space, batch by batch. Block ids
// are random, so each pass starts from the first id: a new image may sort anywhere. Each block
// embedded gets its entry in imgs; an image that does not decode or embed gets an empty vector
// (embedded, never matched), so one bad image cannot stall the rest.
func (d *Dense) reembedImages(ctx context.Context, gen int, space string, emb embed.ImageEmbedder, imgs *imageIndex) error {
	have, total, err := d.bvs.BlockVectorCounts(ctx, space)
	if err != nil {
		return err
	}
	p := ReembedProgress{Done: have, Total: total, Running: have < total}
	d.setImageProgress(gen, p)
	after := ""
	for {
		bs, err := d.bvs.UnembeddedImages(ctx, space, after, imageBatch)
		if err != nil || len(bs) == 0 {
			p.Running = false
			d.setImageProgress(gen, p)
			return err
		}
		if err := d.yieldToTurns(ctx); err != nil {
			return err
		}
		out, err := d.embedImages(ctx, emb, bs)
		if err != nil {
			return err
		}
		if _, err := d.bvs.PutBlockVectors(ctx, space, out); err != nil {
			return err
		}
		for i, b := range bs {
			if len(out[i].Vec) > 0 && b.Holder.Event != 0 {
				imgs.put(memory.BlockVectorEntry{Block: b.ID, Event: b.Holder.Event, Session: d.sessionOf(ctx, b.Holder.Event), Scope: b.Scope, Vec: out[i].Vec})
			}
		}
		after = bs[len(bs)-1].ID
		p.Done = min(p.Total, p.Done+len(bs))
		d.setImageProgress(gen, p)
	}
}

func (d *Dense) setImageProgress(gen int, p ReembedProgress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen == gen {
		d.imgProg = p
		d.changedLocked()
	}
}

// sessionOf is the session of an event ("" when it cannot be read; the entry then matches only
// searches of every session).
func (d *Dense) sessionOf(ctx context.Context, id int64) string {
	hits, err := d.index.Events(ctx, []int64{id})
	if err != nil || len(hits) == 0 {
		return ""
	}
	return hits[0].Event.Session
}

// shrink returns img scaled so that its shorter side is at most side (img itself when it is).
func shrink(img image.Image, side int) image.Image {
	r := img.Bounds()
	short := min(r.Dx(), r.Dy())
	if short <= side {
		return img
	}
	w, h := max(1, r.Dx()*side/short), max(1, r.Dy()*side/short)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, r, draw.Src, nil)
	return dst
}

// embedImages decodes and embeds a batch of image blocks; see reembedImages for failures.
func (d *Dense) embedImages(ctx context.Context, emb embed.ImageEmbedder, bs []memory.Block) ([]memory.BlockVector, error) {
	out := make([]memory.BlockVector, len(bs))
	var decoded []image.Image
	var at []int
	for i, b := range bs {
		out[i].Block = b.ID
		img, err := ocr.Decode(b.Data)
		if err != nil {
			d.m.log.Warn("an image block could not be decoded; it is found by its text alone", "block", b.ID, "err", err)
			continue
		}
		decoded = append(decoded, shrink(img, embedSide))
		at = append(at, i)
	}
	if len(decoded) == 0 {
		return out, nil
	}
	err := embedEach(ctx, decoded, emb.EmbedImages, func(j int, v []float32) { out[at[j]].Vec = v }, func(j int, err error) {
		d.m.log.Warn("an image block could not be embedded; it is found by its text alone", "block", bs[at[j]].ID, "err", err)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
