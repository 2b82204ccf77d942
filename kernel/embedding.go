package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/window"
)

// Dense embeddings (ARCHITECTURE.md §4, issue 5). The owner chooses a model (UseModel, kept in
// the store as the setting embeddingSetting); the kernel opens it in the background at start
// (the kstate facility "dense": the API serves at once and the memory stays sparse, "warming
// up", until it is ready), or at once when the owner chooses it. A background worker then
// embeds every event that has no vector in the model's space, in batches, with its progress in
// the status, and deletes the vectors of other spaces once it is done; new events are embedded
// as they arrive, off the turns' critical path. Recall (cold.Dense, [dense.Search]) and the L1
// window use dense scores only for events with a vector in the active space; the others are
// ranked by BM25 alone, so spaces never mix. Anything missing (no ONNX Runtime, no model, a
// model that does not load) leaves the memory in sparse mode with the reason in the status.

// FacilityDense is the readiness facility of the dense model. It is declared only once a model
// is chosen, and is ready once one has loaded.
const FacilityDense = "dense"

// embeddingSetting is the store setting holding the active model (embed.Active as JSON).
const embeddingSetting = "embedding.active"

// Re-embedding batches and pacing.
const (
	reembedBatch    = 32                    // events embedded per model run
	reembedBackoff  = 10 * time.Second      // wait after a failed batch before trying again
	queryCacheSize  = 16                    // query vectors remembered (a turn embeds its input once)
	searchOverFetch = 3                     // dense candidates fetched per result wanted (layers filter after)
	turnPoll        = 50 * time.Millisecond // how often a yielding worker looks whether turns have ended
	maxYield        = 5 * time.Second       // the longest a batch waits for running turns to end
)

// EmbeddingDeps are the dense-embedding dependencies the binary chooses (cmd/internal/daemon).
type EmbeddingDeps struct {
	// Models is the model manager (the catalogue, DATA/models, the hubs). nil: this kernel has
	// no dense embeddings; the memory is sparse and the model calls answer unavailable.
	Models *embed.Manager
	// Runtime is ONNX Runtime; nil when its library was not found, and RuntimeErr says where it
	// was looked for. The manager must have been built with the same Runtime.
	Runtime    *embed.ORT
	RuntimeErr error
}

// dense is the kernel's dense side: the chosen model, its vectors in memory, the re-embedding
// worker. It is safe for concurrent use.
type dense struct {
	k      *Kernel
	models *embed.Manager
	rt     *embed.ORT
	rtErr  error
	vs     memory.VectorStore
	index  memory.Index

	opMu sync.Mutex // serialises model changes (UseModel, start, close)

	mu       sync.Mutex // guards the fields below
	model    string     // the chosen model ("" none)
	emb      embed.Embedder
	space    string
	vecs     *vecIndex // vectors of space
	loading  bool
	reason   string // why sparse (with a model chosen: loading or failed)
	progress client.ReembedProgress
	caughtUp bool               // the worker has embedded the backlog and cleaned other spaces
	changed  chan struct{}      // closed and replaced whenever the state above changes
	gen      int                // bumped by every model change; stale work checks it
	stop     context.CancelFunc // stops the current loader and worker
	closed   bool

	wg   sync.WaitGroup // the loader and worker goroutines
	wake chan struct{}  // new events to embed

	qmu    sync.Mutex
	qcache []queryVec // most recent last
}

type queryVec struct {
	space, text string
	vec         []float32
}

// newDense returns the dense side, or nil when the kernel has no model manager or its store
// keeps no vectors.
func newDense(k *Kernel, deps EmbeddingDeps, store memory.Store) *dense {
	vs, ok := store.(memory.VectorStore)
	idx, ok2 := store.(memory.Index)
	if deps.Models == nil || !ok || !ok2 {
		return nil
	}
	return &dense{k: k, models: deps.Models, rt: deps.Runtime, rtErr: deps.RuntimeErr, vs: vs, index: idx,
		wake: make(chan struct{}, 1), changed: make(chan struct{})}
}

// start reads the chosen model and, if there is one, loads it in the background.
func (d *dense) start(ctx context.Context) error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	act, err := d.readSetting(ctx)
	if err != nil {
		return err
	}
	if act.Model == "" {
		return nil
	}
	d.k.state.Declare(FacilityDense)
	d.mu.Lock()
	d.model, d.loading, d.reason = act.Model, true, "warming up: loading model "+act.Model
	d.gen++
	gen := d.gen
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = cancel
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		t0 := time.Now()
		emb, err := d.open(act.Model)
		if err != nil {
			d.k.log.Warn("dense model unavailable; memory stays sparse", "model", act.Model, "err", err)
			d.mu.Lock()
			if d.gen == gen {
				d.loading, d.reason = false, err.Error()
				d.changedLocked()
			}
			d.mu.Unlock()
			return
		}
		if err := d.activate(lctx, gen, act.Model, emb); err != nil {
			closeEmbedder(emb)
			if lctx.Err() == nil {
				d.k.log.Warn("dense model unavailable; memory stays sparse", "model", act.Model, "err", err)
			}
			return
		}
		d.k.log.Info("facility ready", "facility", FacilityDense, "model", act.Model, "ms", time.Since(t0).Milliseconds())
	}()
	return nil
}

// readSetting returns the stored choice (the zero Active when none).
func (d *dense) readSetting(ctx context.Context) (embed.Active, error) {
	v, err := d.k.store.GetSetting(ctx, embeddingSetting)
	if errors.Is(err, memory.ErrNotFound) {
		return embed.Active{}, nil
	}
	if err != nil {
		return embed.Active{}, fmt.Errorf("read the dense model setting: %w", err)
	}
	var act embed.Active
	if err := json.Unmarshal([]byte(v), &act); err != nil {
		return embed.Active{}, fmt.Errorf("corrupt setting %s %q: %w", embeddingSetting, v, err)
	}
	return act, nil
}

func (d *dense) writeSetting(ctx context.Context, act embed.Active) error {
	if act.Model == "" {
		if err := d.k.store.DeleteSetting(ctx, embeddingSetting); err != nil && !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("store the dense model setting: %w", err)
		}
		return nil
	}
	b, err := json.Marshal(act)
	if err != nil {
		return err
	}
	if err := d.k.store.SetSetting(ctx, embeddingSetting, string(b)); err != nil {
		return fmt.Errorf("store the dense model setting: %w", err)
	}
	return nil
}

// modelError is a failure to open a model: its message is what the status shows as the
// reason for sparse mode, and it matches the client sentinel that says whose it is to fix.
type modelError struct {
	kind error // client.ErrNotFound, ErrUnavailable or ErrInvalid
	msg  string
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.kind }

// open opens an installed model, saying clearly what is missing.
func (d *dense) open(id string) (embed.Embedder, error) {
	info, err := d.models.Info(id)
	switch {
	case errors.Is(err, embed.ErrUnknownModel):
		return nil, &modelError{client.ErrNotFound, err.Error()}
	case err != nil:
		return nil, err
	case !info.Installed:
		return nil, &modelError{client.ErrNotFound, fmt.Sprintf("model %s is not installed (install or import it first: `waiter model install %s`)", id, id)}
	}
	if d.rt == nil {
		return nil, &modelError{client.ErrUnavailable, fmt.Sprintf("dense model %s needs ONNX Runtime, which was not found: %v", id, d.rtErr)}
	}
	var emb embed.Embedder
	_, emb, err = d.models.Use(id)
	if err != nil {
		switch {
		case errors.Is(err, embed.ErrUnknownModel), errors.Is(err, embed.ErrNotInstalled):
			return nil, &modelError{client.ErrNotFound, err.Error()}
		case errors.Is(err, embed.ErrORTNotFound):
			return nil, &modelError{client.ErrUnavailable, err.Error()}
		}
		return nil, &modelError{client.ErrInvalid, fmt.Sprintf("model %s failed to load: %v", id, err)}
	}
	return emb, nil
}

// activate makes emb (model id) the active embedder if gen is still current: it stores the
// setting, loads the space's vectors and starts the worker. It takes ownership of emb only on
// success.
func (d *dense) activate(ctx context.Context, gen int, id string, emb embed.Embedder) error {
	space := emb.Space().Fingerprint()
	if err := d.writeSetting(ctx, embed.Active{Model: id, Fingerprint: space}); err != nil {
		return err
	}
	vecs := newVecIndex()
	if err := d.vs.ScanVectors(ctx, space, func(e memory.VectorEntry) error {
		vecs.put(e)
		return nil
	}); err != nil {
		return fmt.Errorf("load the vectors of %s: %w", space, err)
	}
	have, total, err := d.vs.VectorCounts(ctx, space)
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.gen != gen || d.closed {
		d.mu.Unlock()
		return context.Canceled
	}
	d.emb, d.space, d.vecs, d.loading, d.reason, d.caughtUp = emb, space, vecs, false, "", false
	d.progress = client.ReembedProgress{Done: have, Total: total, Running: have < total}
	d.changedLocked()
	d.mu.Unlock()
	d.k.state.MarkReady(FacilityDense)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.reembed(ctx, gen, space, emb, vecs)
	}()
	return nil
}

// use makes id the active model ("" returns to sparse mode). The new model is opened before
// anything changes, so a model that does not open (not installed, no runtime, a corrupt file)
// leaves the mode as it was; a store failure after the switch leaves sparse mode with the
// reason.
func (d *dense) use(ctx context.Context, id string) error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	d.mu.Lock()
	same := id != "" && id == d.model && d.emb != nil
	d.mu.Unlock()
	if same {
		return nil
	}
	var emb embed.Embedder
	if id != "" {
		var err error
		if emb, err = d.open(id); err != nil {
			return err
		}
	}
	// Stop the old model's work, then switch.
	old := d.halt()
	if err := closeEmbedder(old); err != nil {
		d.k.log.Warn("closing the previous dense model", "err", err)
	}
	d.clearQueries()
	if id == "" {
		if err := d.writeSetting(ctx, embed.Active{}); err != nil {
			return err
		}
		d.mu.Lock()
		d.model, d.reason = "", ""
		d.changedLocked()
		d.mu.Unlock()
		d.k.log.Info("dense embeddings off: sparse mode")
		return nil
	}
	d.k.state.Declare(FacilityDense)
	d.mu.Lock()
	d.model, d.loading, d.reason = id, true, "warming up: loading model "+id
	d.gen++
	gen := d.gen
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = cancel
	d.mu.Unlock()
	if err := d.activate(wctx, gen, id, emb); err != nil {
		closeEmbedder(emb)
		d.mu.Lock()
		if d.gen == gen {
			d.loading, d.reason = false, fmt.Sprintf("model %s failed to load: %v", id, err)
			d.changedLocked()
		}
		d.mu.Unlock()
		return err
	}
	d.k.log.Info("dense model in use", "model", id, "space", emb.Space().Fingerprint())
	return nil
}

// halt stops the current loader and worker, waits for them, and returns the embedder they
// used (the caller closes it).
func (d *dense) halt() embed.Embedder {
	d.mu.Lock()
	d.gen++
	if d.stop != nil {
		d.stop()
		d.stop = nil
	}
	emb := d.emb
	d.emb, d.space, d.vecs, d.loading, d.caughtUp = nil, "", nil, false, false
	d.progress = client.ReembedProgress{}
	d.changedLocked()
	d.mu.Unlock()
	d.wg.Wait()
	return emb
}

// close stops everything and releases the model (a kstate closer: after the turns ended,
// before the binary closes the store).
func (d *dense) close() error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	emb := d.halt()
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	return closeEmbedder(emb)
}

func closeEmbedder(e embed.Embedder) error {
	if c, ok := e.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// notify wakes the worker: events were stored.
func (d *dense) notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// active returns the loaded embedder, its space and vectors (nil when sparse).
func (d *dense) active() (embed.Embedder, string, *vecIndex) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.emb, d.space, d.vecs
}

// reembed embeds every event without a vector in space, then the new ones as they come (the
// store notifies), until ctx ends. Once the backlog is done it deletes the vectors of every
// other space. Event ids only grow, so after the backlog each pass starts after the last event
// it saw.
func (d *dense) reembed(ctx context.Context, gen int, space string, emb embed.Embedder, vecs *vecIndex) {
	have, total, err := d.vs.VectorCounts(ctx, space)
	if err != nil && ctx.Err() == nil {
		d.k.log.Warn("counting the vectors to re-embed", "space", space, "err", err)
	}
	p := client.ReembedProgress{Done: have, Total: total, Running: true}
	d.setProgress(gen, p)
	var after int64
	caughtUp := false
	for {
		err := d.reembedFrom(ctx, gen, space, emb, vecs, &after, &p, caughtUp)
		if ctx.Err() != nil {
			return
		}
		var retry *time.Timer
		if err != nil {
			d.k.log.Warn("re-embedding paused after an error; it resumes shortly", "space", space, "err", err)
			retry = time.NewTimer(reembedBackoff)
		} else if !caughtUp {
			p.Done = max(p.Done, p.Total) // what was missing is embedded (or was forgotten meanwhile)
			if n, err := d.vs.DeleteVectorsExcept(ctx, space); err != nil {
				d.k.log.Warn("deleting the vectors of other spaces", "err", err)
			} else {
				caughtUp = true
				d.k.log.Info("re-embedding done", "space", space, "events", p.Done, "other_space_vectors_deleted", n)
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
func (d *dense) wait(ctx context.Context, retry *time.Timer) bool {
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
func (d *dense) reembedFrom(ctx context.Context, gen int, space string, emb embed.Embedder, vecs *vecIndex, after *int64,
	p *client.ReembedProgress, caughtUp bool) error {
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
				vecs.put(memory.VectorEntry{Event: ev.ID, Session: ev.Session, Scope: ev.Scope, Vec: out[i].Vec})
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
func (d *dense) yieldToTurns(ctx context.Context) error {
	deadline := time.Now().Add(maxYield)
	for d.k.activeTurns() > 0 && time.Now().Before(deadline) {
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

// activeTurns counts the turns running now.
func (k *Kernel) activeTurns() int {
	k.turnMu.Lock()
	defer k.turnMu.Unlock()
	return len(k.turns)
}

// embedEvents embeds a batch of events as passages; an event with no text gets an empty
// vector (embedded, never matched). When the batch fails, each event is tried alone, and one
// that still fails is logged and gets an empty vector, so one bad text cannot stall the rest.
func (d *dense) embedEvents(ctx context.Context, emb embed.Embedder, evs []memory.Event) ([]memory.EventVector, error) {
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
	vs, err := emb.EmbedTexts(ctx, texts, embed.Passage)
	if err == nil {
		for j, i := range at {
			out[i].Vec = vs[j]
		}
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	for j, i := range at {
		v, err := emb.EmbedTexts(ctx, texts[j:j+1], embed.Passage)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			d.k.log.Warn("an event could not be embedded; it is ranked by BM25 alone", "event", evs[i].ID, "err", err)
			continue
		}
		out[i].Vec = v[0]
	}
	return out, nil
}

func (d *dense) setProgress(gen int, p client.ReembedProgress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen == gen {
		d.progress = p
		d.changedLocked()
	}
}

// changedLocked wakes the waiters of settle. d.mu must be held.
func (d *dense) changedLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// settle waits until the chosen model has loaded (or failed to) and every event has a vector in
// its space, the vectors of other spaces deleted; at once when no model is chosen.
func (d *dense) settle(ctx context.Context) error {
	for {
		d.mu.Lock()
		model, loading, emb, space, caughtUp, ch := d.model, d.loading, d.emb, d.space, d.caughtUp, d.changed
		d.mu.Unlock()
		switch {
		case model == "", !loading && emb == nil:
			return nil
		case emb != nil && caughtUp:
			have, total, err := d.vs.VectorCounts(ctx, space)
			if err != nil {
				return err
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

// queryVec embeds a query (the turn's input, a recall query) in the active space, normalised;
// the last few are remembered, so a turn's window and recall embed its input once.
func (d *dense) queryVec(ctx context.Context, emb embed.Embedder, space, text string) ([]float32, error) {
	d.qmu.Lock()
	for _, q := range d.qcache {
		if q.space == space && q.text == text {
			d.qmu.Unlock()
			return q.vec, nil
		}
	}
	d.qmu.Unlock()
	vs, err := emb.EmbedTexts(ctx, []string{text}, embed.Query)
	if err != nil {
		return nil, err
	}
	v := normalized(vs[0])
	d.qmu.Lock()
	d.qcache = append(d.qcache, queryVec{space: space, text: text, vec: v})
	if len(d.qcache) > queryCacheSize {
		d.qcache = slices.Delete(d.qcache, 0, len(d.qcache)-queryCacheSize)
	}
	d.qmu.Unlock()
	return v, nil
}

func (d *dense) clearQueries() {
	d.qmu.Lock()
	d.qcache = nil
	d.qmu.Unlock()
}

// windowScores returns the dense scores of a session's window candidates for input, or nil
// (sparse) when no model is ready or the input cannot be embedded.
func (d *dense) windowScores(ctx context.Context, input string) (func(ids []int64) []window.DenseScore, bool) {
	emb, space, vecs := d.active()
	if emb == nil || strings.TrimSpace(input) == "" {
		return nil, false
	}
	qv, err := d.queryVec(ctx, emb, space, input)
	if err != nil {
		d.k.log.Warn("embedding the input failed; this window is ranked by BM25 alone", "err", err)
		return nil, false
	}
	return func(ids []int64) []window.DenseScore {
		out := make([]window.DenseScore, len(ids))
		vecs.mu.RLock()
		defer vecs.mu.RUnlock()
		for i, id := range ids {
			if at, ok := vecs.at[id]; ok {
				out[i] = window.DenseScore{Cos: dot(qv, vecs.entries[at].Vec), OK: true}
			}
		}
		return out
	}, true
}

// Search implements cold.Dense: a scan of the active space's vectors that q.Viewer may see
// (in q.Session when set), the cosine of each to the query, their mean and spread, and the
// best events in q.Layers. With no model ready, or when the query cannot be embedded, it
// returns nothing (recall goes on sparse).
func (d *dense) Search(ctx context.Context, q cold.DenseQuery) (cold.DenseResult, error) {
	emb, space, vecs := d.active()
	if emb == nil || q.Limit <= 0 {
		return cold.DenseResult{}, nil
	}
	qv, err := d.queryVec(ctx, emb, space, q.Text)
	if err != nil {
		d.k.log.Warn("embedding a recall query failed; recall is sparse", "err", err)
		return cold.DenseResult{}, nil
	}
	var (
		res     cold.DenseResult
		sum, sq float64
	)
	best := topK{k: q.Limit * searchOverFetch}
	vecs.mu.RLock()
	for _, e := range vecs.entries {
		if !q.Viewer.CanSee(e.Scope) || (q.Session != "" && e.Session != q.Session) {
			continue
		}
		c := dot(qv, e.Vec)
		res.N++
		sum += c
		sq += c * c
		best.offer(e.Event, c)
	}
	vecs.mu.RUnlock()
	if res.N == 0 {
		return res, nil
	}
	res.Mean = sum / float64(res.N)
	res.SD = math.Sqrt(math.Max(0, sq/float64(res.N)-res.Mean*res.Mean))
	sort.Slice(best.h, func(i, j int) bool {
		if best.h[i].cos != best.h[j].cos {
			return best.h[i].cos > best.h[j].cos
		}
		return best.h[i].id < best.h[j].id
	})
	ids := make([]int64, len(best.h))
	cos := make(map[int64]float64, len(best.h))
	for i, b := range best.h {
		ids[i] = b.id
		cos[b.id] = b.cos
	}
	hits, err := d.index.Events(ctx, ids)
	if err != nil {
		return cold.DenseResult{}, fmt.Errorf("dense search: %w", err)
	}
	for _, h := range hits { // forgotten events are simply missing
		if !layerIn(h.Event.Layer, q.Layers) {
			continue
		}
		res.Hits = append(res.Hits, cold.DenseHit{Event: h.Event, Indexed: h.Indexed, Cos: cos[h.Event.ID]})
	}
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Cos > res.Hits[j].Cos })
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
	}
	return res, nil
}

func layerIn(l memory.Layer, ls []memory.Layer) bool { return len(ls) == 0 || slices.Contains(ls, l) }

// status is the embedding part of the kernel's status.
func (d *dense) status() client.EmbeddingStatus {
	d.mu.Lock()
	st := client.EmbeddingStatus{Mode: client.EmbeddingSparse, Model: d.model, Reason: d.reason, Loading: d.loading}
	if d.emb != nil {
		st.Mode, st.Space, st.Reembed = client.EmbeddingDense, d.space, d.progress
	}
	d.mu.Unlock()
	if d.rt != nil && d.rt.Loaded() {
		st.Runtime = d.rt.Version() + " (" + d.rt.Path() + ")"
	}
	if st.Model == "" {
		st.Reason = "no dense model chosen (see `waiter model list`, then `waiter model use ID`)"
		if d.rt == nil {
			st.Reason += fmt.Sprintf("; ONNX Runtime, which dense models need, was not found: %v", d.rtErr)
		}
	}
	return st
}

// vecIndex holds the vectors of the active space in memory, normalised, for the window and
// for recall's scan. It is safe for concurrent use.
type vecIndex struct {
	mu      sync.RWMutex
	entries []memory.VectorEntry
	at      map[int64]int // event id → index in entries
}

func newVecIndex() *vecIndex { return &vecIndex{at: map[int64]int{}} }

// put adds or replaces an event's vector.
func (x *vecIndex) put(e memory.VectorEntry) {
	e.Vec = normalized(e.Vec)
	x.mu.Lock()
	defer x.mu.Unlock()
	if i, ok := x.at[e.Event]; ok {
		x.entries[i] = e
		return
	}
	x.at[e.Event] = len(x.entries)
	x.entries = append(x.entries, e)
}

// normalized returns v scaled to unit length (v itself when it already is; a copy otherwise; a
// zero vector stays zero), so that a dot product is a cosine.
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) < 1e-6 {
		return v // already unit length (normalising models)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// dot is the dot product of two vectors of one space (0 when their lengths differ). Four
// running sums let the CPU overlap the multiplications (≈ 2× a single sum).
func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}

// scored is an event and its cosine to a query.
type scored struct {
	id  int64
	cos float64
}

// topK keeps the k best of the scores offered: a min-heap, so most offers cost one comparison.
type topK struct {
	k int
	h []scored
}

func (t *topK) offer(id int64, cos float64) {
	if len(t.h) < t.k {
		t.h = append(t.h, scored{id, cos})
		for i := len(t.h) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if t.h[p].cos <= t.h[i].cos {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if t.k == 0 || cos <= t.h[0].cos {
		return
	}
	t.h[0] = scored{id, cos}
	for i := 0; ; { // sift down
		l, m := 2*i+1, i
		if l < len(t.h) && t.h[l].cos < t.h[m].cos {
			m = l
		}
		if r := l + 1; r < len(t.h) && t.h[r].cos < t.h[m].cos {
			m = r
		}
		if m == i {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// --- client.Service ---

// errNoDense answers the model calls of a kernel without dense embeddings.
func errNoDense() error {
	return fmt.Errorf("%w: this kernel has no dense embeddings (no model manager, or a store that keeps no vectors)", client.ErrUnavailable)
}

// Embedding implements client.Service.
func (k *Kernel) Embedding(ctx context.Context) (client.EmbeddingStatus, error) {
	return k.embeddingStatus(), nil
}

// embeddingStatus is Status.Embedding.
func (k *Kernel) embeddingStatus() client.EmbeddingStatus {
	if k.dense == nil {
		return client.EmbeddingStatus{Mode: client.EmbeddingSparse, Reason: "dense embeddings are not set up in this kernel"}
	}
	return k.dense.status()
}

// SettleEmbedding waits until the chosen dense model has loaded (or failed to) and every
// stored event has a vector in its space, the vectors of other spaces deleted; at once when no
// model is chosen. Benchmarks and tests call it between storing and asking, as SettleMemory.
func (k *Kernel) SettleEmbedding(ctx context.Context) error {
	if k.dense == nil {
		return nil
	}
	return k.dense.settle(ctx)
}

// EmbeddingModels implements client.Service.
func (k *Kernel) EmbeddingModels(ctx context.Context) ([]client.EmbeddingModel, error) {
	if k.dense == nil {
		return nil, errNoDense()
	}
	infos, err := k.dense.models.List()
	if err != nil {
		return nil, err
	}
	act := k.dense.chosen()
	out := make([]client.EmbeddingModel, len(infos))
	for i, info := range infos {
		out[i] = modelOut(info, act)
	}
	return out, nil
}

// chosen returns the chosen model id.
func (d *dense) chosen() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.model
}

// modelOut converts a manager's model info for the API.
func modelOut(info embed.ModelInfo, active string) client.EmbeddingModel {
	s := info.Spec
	m := client.EmbeddingModel{ID: s.ID, Description: s.Description, Kind: string(s.Kind), Dim: s.Dim, Repo: s.Repo,
		Revision: s.Revision, Upstream: s.Upstream, Licence: s.Licence, Installed: info.Installed, Active: s.ID == active,
		Source: info.Source, InstalledAt: info.InstalledAt, Partial: info.Partial, Files: []client.ModelFile{}}
	pinned := map[string]embed.ModelFile{}
	known := true
	for _, f := range s.Files {
		pinned[f.Path] = f
		if f.Size == 0 && !f.Optional {
			known = false
		}
	}
	if info.Installed {
		for _, f := range info.Files {
			m.Files = append(m.Files, client.ModelFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256, Pinned: pinned[f.Path].SHA256,
				Check: f.Check, Optional: pinned[f.Path].Optional})
			m.Size += f.Size
		}
		return m
	}
	for _, f := range s.Files {
		m.Files = append(m.Files, client.ModelFile{Path: f.Path, Size: f.Size, Pinned: f.SHA256, Optional: f.Optional})
		if known {
			m.Size += f.Size
		}
	}
	return m
}

// modelErr maps the manager's errors onto the client's.
func (k *Kernel) modelErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, embed.ErrUnknownModel), errors.Is(err, embed.ErrNotInstalled):
		return fmt.Errorf("%w: %w", client.ErrNotFound, err)
	case errors.Is(err, embed.ErrORTNotFound):
		return fmt.Errorf("%w: %w", client.ErrUnavailable, err)
	}
	return err
}

// needRuntime refuses model work that needs ONNX Runtime when it was not found.
func (k *Kernel) needRuntime(what string) error {
	if k.dense.rt == nil {
		return fmt.Errorf("%w: %s needs ONNX Runtime, which was not found: %v", client.ErrUnavailable, what, k.dense.rtErr)
	}
	return nil
}

// installProgressEvery bounds how often InstallModel reports a file's progress (the first and
// the last report of each file always go out).
const installProgressEvery = 200 * time.Millisecond

// InstallModel implements client.Service.
func (k *Kernel) InstallModel(ctx context.Context, id string, progress func(client.ModelProgress)) (client.EmbeddingModel, error) {
	if k.dense == nil {
		return client.EmbeddingModel{}, errNoDense()
	}
	if strings.TrimSpace(id) == "" {
		return client.EmbeddingModel{}, invalid("the model id is empty")
	}
	if _, err := k.dense.models.Info(id); err != nil {
		return client.EmbeddingModel{}, k.modelErr(err)
	}
	if err := k.needRuntime("installing model " + id); err != nil {
		return client.EmbeddingModel{}, err
	}
	var (
		last     time.Time
		lastFile string
	)
	report := func(p embed.Progress) {
		if progress == nil {
			return
		}
		now := k.clock()
		end := p.Total > 0 && p.Done >= p.Total
		if p.File == lastFile && !end && now.Sub(last) < installProgressEvery {
			return
		}
		last, lastFile = now, p.File
		progress(client.ModelProgress{Model: p.Model, File: p.File, Hub: p.Hub, Done: p.Done, Total: p.Total})
	}
	info, err := k.dense.models.Install(ctx, id, report)
	if err != nil {
		return client.EmbeddingModel{}, k.modelErr(err)
	}
	return modelOut(info, k.dense.chosen()), nil
}

// ImportModel implements client.Service.
func (k *Kernel) ImportModel(ctx context.Context, id, dir string) (client.EmbeddingModel, error) {
	if k.dense == nil {
		return client.EmbeddingModel{}, errNoDense()
	}
	switch {
	case strings.TrimSpace(id) == "":
		return client.EmbeddingModel{}, invalid("the model id is empty")
	case !filepath.IsAbs(dir):
		return client.EmbeddingModel{}, invalid("the import directory %q must be an absolute path on the kernel's machine", dir)
	}
	if _, err := k.dense.models.Info(id); err != nil {
		return client.EmbeddingModel{}, k.modelErr(err)
	}
	if err := k.needRuntime("importing model " + id); err != nil {
		return client.EmbeddingModel{}, err
	}
	info, err := k.dense.models.Import(ctx, id, dir)
	if err != nil {
		if errors.Is(err, embed.ErrUnknownModel) {
			return client.EmbeddingModel{}, k.modelErr(err)
		}
		// Missing files, a directory that is not one, an already installed model, a model
		// that does not open: all the request's to fix.
		return client.EmbeddingModel{}, fmt.Errorf("%w: %w", client.ErrInvalid, err)
	}
	return modelOut(info, k.dense.chosen()), nil
}

// UseModel implements client.Service.
func (k *Kernel) UseModel(ctx context.Context, id string) (client.EmbeddingStatus, error) {
	if k.dense == nil {
		if id == "" {
			return k.embeddingStatus(), nil
		}
		return client.EmbeddingStatus{}, errNoDense()
	}
	if err := k.dense.use(ctx, strings.TrimSpace(id)); err != nil {
		return client.EmbeddingStatus{}, err
	}
	return k.dense.status(), nil
}

// RemoveModel implements client.Service.
func (k *Kernel) RemoveModel(ctx context.Context, id string) error {
	if k.dense == nil {
		return errNoDense()
	}
	if strings.TrimSpace(id) == "" {
		return invalid("the model id is empty")
	}
	k.dense.opMu.Lock()
	defer k.dense.opMu.Unlock()
	if id == k.dense.chosen() {
		return invalid("model %s is in use: choose another model or sparse mode first (`waiter model use ''`)", id)
	}
	return k.modelErr(k.dense.models.Remove(id))
}

var _ cold.Dense = (*dense)(nil)

// windowDense returns how to score a session's window candidates densely for input, or nil
// when the window is sparse (no model ready, or the input could not be embedded).
func (m *mem) windowDense(ctx context.Context, input string) func(cands []window.Candidate) []window.DenseScore {
	if m.k.dense == nil {
		return nil
	}
	scores, ok := m.k.dense.windowScores(ctx, input)
	if !ok {
		return nil
	}
	return func(cands []window.Candidate) []window.DenseScore {
		ids := make([]int64, len(cands))
		for i, c := range cands {
			ids[i] = c.Event.ID
		}
		return scores(ids)
	}
}
