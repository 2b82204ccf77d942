package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/vector"
)

// The re-embedding worker: every event (and image block) without a vector in the active
// space is embedded in the background, yielding to turns.

// reembed embeds every event without a vector in space, then the new ones as they come (the
// store notifies), until ctx ends; with imgEmb set, every image block without one after each
// pass over the events (images.go). Once the backlog is done it deletes the vectors (of events
// and of images) of every other space. Event ids only grow, so after the backlog each pass
// starts after the last event it saw.
func (d *Dense) reembed(ctx context.Context, gen int, space string, emb embed.Embedder, vecs *vector.Index,
	imgEmb embed.ImageEmbedder, imgs *imageIndex) {
	have, total, err := d.vs.VectorCounts(ctx, space)
	if err != nil && ctx.Err() == nil {
		d.m.log.Warn("counting the vectors to re-embed", "space", space, "err", err)
	}
	p := ReembedProgress{Done: have, Total: total, Running: true}
	d.setProgress(gen, p)
	var after int64
	caughtUp := false
	for {
		err := d.reembedFrom(ctx, gen, space, emb, vecs, &after, &p, caughtUp)
		if err == nil && imgEmb != nil {
			err = d.reembedImages(ctx, gen, space, imgEmb, imgs)
		}
		if ctx.Err() != nil {
			return
		}
		var retry *time.Timer
		if err != nil {
			d.m.log.Warn("re-embedding paused after an error; it resumes shortly", "space", space, "err", err)
			retry = time.NewTimer(reembedBackoff)
		} else if !caughtUp {
			p.Done = max(p.Done, p.Total) // what was missing is embedded (or was forgotten meanwhile)
			n, err := d.vs.DeleteVectorsExcept(ctx, space)
			if err == nil {
				var ni int
				ni, err = d.bvs.DeleteBlockVectorsExcept(ctx, space)
				n += ni
			}
			if err != nil {
				d.m.log.Warn("deleting the vectors of other spaces", "err", err)
			} else {
				caughtUp = true
				d.m.log.Info("re-embedding done", "space", space, "events", p.Done, "other_space_vectors_deleted", n)
				d.mu.Lock()
				if d.gen == gen {
					d.caughtUp = true
				}
				d.mu.Unlock()
			}
		}
		p.Running = false
		d.setProgress(gen, p)
		if !d.wait(ctx, retry) {
			return
		}
	}
}

// wait blocks until new events are stored, retry fires (nil: never) or ctx ends (false).
func (d *Dense) wait(ctx context.Context, retry *time.Timer) bool {
	var fire <-chan time.Time
	if retry != nil {
		defer retry.Stop()
		fire = retry.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-d.wake:
	case <-fire:
	}
	return true
}

// reembedFrom embeds the events after *after that have no vector in space, batch by batch,
// moving *after and the progress along. New events (once caught up) count into the total too.
func (d *Dense) reembedFrom(ctx context.Context, gen int, space string, emb embed.Embedder, vecs *vector.Index, after *int64,
	p *ReembedProgress, caughtUp bool) error {
	for {
		evs, err := d.vs.Unembedded(ctx, space, *after, reembedBatch)
		if err != nil || len(evs) == 0 {
			return err
		}
		if err := d.yieldToTurns(ctx); err != nil {
			return err
		}
		p.Running = true
		if caughtUp {
			p.Total += len(evs)
		}
		d.setProgress(gen, *p)
		out, err := d.embedEvents(ctx, emb, evs)
		if err != nil {
			return err
		}
		if _, err := d.vs.PutVectors(ctx, space, out); err != nil {
			return err
		}
		for i, ev := range evs {
			if len(out[i].Vec) > 0 {
				vecs.Put(memory.VectorEntry{Event: ev.ID, Session: ev.Session, Scope: ev.Scope, Vec: out[i].Vec})
			}
		}
		*after = evs[len(evs)-1].ID
		p.Done += len(evs)
		p.Total = max(p.Total, p.Done)
		d.setProgress(gen, *p)
	}
}

// yieldToTurns waits while turns run (at most maxYield): a batch takes the CPU for tens of
// milliseconds, and on a small machine that would land on the running turn. Under continuous
// turns the batch goes ahead after maxYield, so new events are always embedded.
func (d *Dense) yieldToTurns(ctx context.Context) error {
	deadline := time.Now().Add(maxYield)
	for d.m.opts.ActiveTurns() > 0 && time.Now().Before(deadline) {
		t := time.NewTimer(turnPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// embedEvents embeds a batch of events as passages; an event with no text gets an empty
// vector (embedded, never matched). When the batch fails, each event is tried alone, and one
// that still fails is logged and gets an empty vector, so one bad text cannot stall the rest.
func (d *Dense) embedEvents(ctx context.Context, emb embed.Embedder, evs []memory.Event) ([]memory.EventVector, error) {
	out := make([]memory.EventVector, len(evs))
	var texts []string
	var at []int
	for i, ev := range evs {
		out[i].Event = ev.ID
		if t := memory.EmbeddingText(ev); t != "" {
			texts = append(texts, t)
			at = append(at, i)
		}
	}
	if len(texts) == 0 {
		return out, nil
	}
	err := embedEach(ctx, texts, func(ctx context.Context, in []string) ([][]float32, error) {
		return emb.EmbedTexts(ctx, in, embed.Passage)
	}, func(j int, v []float32) { out[at[j]].Vec = v }, func(j int, err error) {
		d.m.log.Warn("an event could not be embedded; it is ranked by BM25 alone", "event", evs[at[j]].ID, "err", err)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// embedEach embeds in as one batch; when the batch fails, each input alone, so that one bad
// input cannot stall the rest: set gets input j's vector, failed the inputs that still fail. An
// error is returned only when ctx ends.
func embedEach[T any](ctx context.Context, in []T, embedFn func(context.Context, []T) ([][]float32, error),
	set func(j int, v []float32), failed func(j int, err error)) error {
	vs, err := embedFn(ctx, in)
	if err == nil {
		for j := range in {
			set(j, vs[j])
		}
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	for j := range in {
		v, err := embedFn(ctx, in[j:j+1])
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			failed(j, err)
			continue
		}
		set(j, v[0])
	}
	return nil
}

func (d *Dense) setProgress(gen int, p ReembedProgress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen == gen {
		d.progress = p
		d.changedLocked()
	}
}

// changedLocked wakes the waiters of settle. d.mu must be held.
func (d *Dense) changedLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// settle waits until the chosen model has loaded (or failed to) and every event has a vector in
// its space, the vectors of other spaces deleted; at once when no model is chosen.
func (d *Dense) settle(ctx context.Context) error {
	for {
		d.mu.Lock()
		model, loading, emb, space, caughtUp, ch := d.model, d.loading, d.emb, d.space, d.caughtUp, d.changed
		images := d.imgEmb != nil
		d.mu.Unlock()
		switch {
		case model == "", !loading && emb == nil:
			return nil
		case emb != nil && caughtUp:
			have, total, err := d.vs.VectorCounts(ctx, space)
			if err != nil {
				return err
			}
			if have >= total && images {
				if have, total, err = d.bvs.BlockVectorCounts(ctx, space); err != nil {
					return err
				}
			}
			if have >= total {
				return nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the dense model: %w", ctx.Err())
		}
	}
}
