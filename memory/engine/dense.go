package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/vector"
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

// DenseOptions are the dense side's dependencies, which the binary chooses.
type DenseOptions struct {
	// Models is the model manager (the catalogue, DATA/models, the hubs). nil: this kernel has
	// no dense embeddings; the memory is sparse and the model calls answer unavailable.
	Models *embed.Manager
	// Runtime is ONNX Runtime; nil when its library was not found, and RuntimeErr says where it
	// was looked for. The manager must have been built with the same Runtime.
	Runtime    *embed.ORT
	RuntimeErr error
	// Loading and Ready, when set, are told when a model starts loading and once it has (the
	// kernel's readiness facility "dense").
	Loading, Ready func()
}

// Embedding modes of [DenseStatus].
const (
	ModeSparse = "sparse"
	ModeDense  = "dense"
)

// DenseStatus says how the memory embeds text: sparse or dense, the model, its vector space,
// why it is sparse, and the re-embedding's progress.
type DenseStatus struct {
	Mode, Model, Space, Reason string
	Loading                    bool
	Runtime                    string // ONNX Runtime's version and path, once loaded
	Reembed                    ReembedProgress
	// Images is the embedding of the image blocks, when the model embeds images (nil otherwise).
	Images *ReembedProgress
}

// ReembedProgress is the background re-embedding's progress.
type ReembedProgress struct {
	Done, Total int
	Running     bool
}

// Dense is the memory's dense side: the chosen model, its vectors in memory, the re-embedding
// worker. It is safe for concurrent use.
type Dense struct {
	m      *Engine
	opts   DenseOptions
	models *embed.Manager
	rt     *embed.ORT
	rtErr  error
	vs     memory.VectorStore
	bvs    memory.BlockVectorStore
	index  memory.Index

	opMu sync.Mutex // serialises model changes (UseModel, start, close)

	mu       sync.Mutex // guards the fields below
	model    string     // the chosen model ("" none)
	emb      embed.Embedder
	space    string
	vecs     *vector.Index       // vectors of space
	imgEmb   embed.ImageEmbedder // emb when it embeds images too, else nil
	imgs     *imageIndex         // image vectors of space (nil: imgEmb is nil)
	loading  bool
	reason   string // why sparse (with a model chosen: loading or failed)
	progress ReembedProgress
	imgProg  ReembedProgress    // of the image blocks (imgEmb set)
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

// newDense returns the dense side of m (deps.Models is set).
func newDense(m *Engine, deps DenseOptions) *Dense {
	return &Dense{m: m, opts: deps, models: deps.Models, rt: deps.Runtime, rtErr: deps.RuntimeErr, vs: m.store, bvs: m.store, index: m.store,
		wake: make(chan struct{}, 1), changed: make(chan struct{})}
}

// loadingHook and readyHook tell the kernel of a model loading and loaded.
func (d *Dense) loadingHook() {
	if d.opts.Loading != nil {
		d.opts.Loading()
	}
}

func (d *Dense) readyHook() {
	if d.opts.Ready != nil {
		d.opts.Ready()
	}
}

// start reads the chosen model and, if there is one, loads it in the background.
func (d *Dense) start(ctx context.Context) error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	act, err := d.readSetting(ctx)
	if err != nil {
		return err
	}
	if act.Model == "" {
		return nil
	}
	d.loadingHook()
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
		emb, img, err := d.open(act.Model)
		if err != nil {
			d.m.log.Warn("dense model unavailable; memory stays sparse", "model", act.Model, "err", err)
			d.mu.Lock()
			if d.gen == gen {
				d.loading, d.reason = false, err.Error()
				d.changedLocked()
			}
			d.mu.Unlock()
			return
		}
		if err := d.activate(lctx, gen, act.Model, emb, img); err != nil {
			closeEmbedder(emb)
			if lctx.Err() == nil {
				d.m.log.Warn("dense model unavailable; memory stays sparse", "model", act.Model, "err", err)
			}
			return
		}
		d.m.log.Info("facility ready", "facility", "dense", "model", act.Model, "ms", time.Since(t0).Milliseconds())
	}()
	return nil
}

// readSetting returns the stored choice (the zero Active when none).
func (d *Dense) readSetting(ctx context.Context) (embed.Active, error) {
	v, err := d.m.store.GetSetting(ctx, embeddingSetting)
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

func (d *Dense) writeSetting(ctx context.Context, act embed.Active) error {
	if act.Model == "" {
		if err := d.m.store.DeleteSetting(ctx, embeddingSetting); err != nil && !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("store the dense model setting: %w", err)
		}
		return nil
	}
	b, err := json.Marshal(act)
	if err != nil {
		return err
	}
	if err := d.m.store.SetSetting(ctx, embeddingSetting, string(b)); err != nil {
		return fmt.Errorf("store the dense model setting: %w", err)
	}
	return nil
}

// modelError is a failure to open a model: its message is what the status shows as the
// reason for sparse mode, and it matches the client sentinel that says whose it is to fix.
type modelError struct {
	kind error // memory.ErrNotFound, ErrUnavailable or ErrInvalid
	msg  string
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.kind }

// open opens an installed model, saying clearly what is missing; the second embedder is the
// same model when it embeds images too (nil for a text model).
func (d *Dense) open(id string) (embed.Embedder, embed.ImageEmbedder, error) {
	info, err := d.models.Info(id)
	switch {
	case errors.Is(err, embed.ErrUnknownModel):
		return nil, nil, &modelError{memory.ErrNotFound, err.Error()}
	case err != nil:
		return nil, nil, err
	case !info.Installed:
		return nil, nil, &modelError{memory.ErrNotFound, fmt.Sprintf("model %s is not installed (install or import it first: `waiter model install %s`)", id, id)}
	}
	if d.rt == nil {
		return nil, nil, &modelError{ErrUnavailable, fmt.Sprintf("dense model %s needs ONNX Runtime, which was not found: %v", id, d.rtErr)}
	}
	emb, img, err := d.models.OpenImages(id)
	if err != nil {
		switch {
		case errors.Is(err, embed.ErrUnknownModel), errors.Is(err, embed.ErrNotInstalled):
			return nil, nil, &modelError{memory.ErrNotFound, err.Error()}
		case errors.Is(err, embed.ErrORTNotFound):
			return nil, nil, &modelError{ErrUnavailable, err.Error()}
		}
		return nil, nil, &modelError{ErrInvalid, fmt.Sprintf("model %s failed to load: %v", id, err)}
	}
	return emb, img, nil
}

// activate makes emb (model id) the active embedder if gen is still current: it stores the
// setting, loads the space's vectors and starts the worker. imgEmb is emb when the model embeds
// images too (else nil). It takes ownership of emb only on success.
func (d *Dense) activate(ctx context.Context, gen int, id string, emb embed.Embedder, imgEmb embed.ImageEmbedder) error {
	space := emb.Space().Fingerprint()
	if err := d.writeSetting(ctx, embed.Active{Model: id, Fingerprint: space}); err != nil {
		return err
	}
	vecs := vector.New()
	if err := d.vs.ScanVectors(ctx, space, func(e memory.VectorEntry) error {
		vecs.Put(e)
		return nil
	}); err != nil {
		return fmt.Errorf("load the vectors of %s: %w", space, err)
	}
	// A model whose space holds images (imgEmb, the same model) embeds the image blocks too.
	var imgs *imageIndex
	if imgEmb != nil {
		var err error
		if imgs, err = d.loadImages(ctx, space); err != nil {
			return err
		}
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
	d.imgEmb, d.imgs, d.imgProg = imgEmb, imgs, ReembedProgress{}
	d.progress = ReembedProgress{Done: have, Total: total, Running: have < total}
	d.changedLocked()
	d.mu.Unlock()
	d.readyHook()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.reembed(ctx, gen, space, emb, vecs, imgEmb, imgs)
	}()
	return nil
}

// use makes id the active model ("" returns to sparse mode). The new model is opened before
// anything changes, so a model that does not open (not installed, no runtime, a corrupt file)
// leaves the mode as it was; a store failure after the switch leaves sparse mode with the
// reason.
func (d *Dense) use(ctx context.Context, id string) error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	d.mu.Lock()
	same := id != "" && id == d.model && d.emb != nil
	d.mu.Unlock()
	if same {
		return nil
	}
	var (
		emb embed.Embedder
		img embed.ImageEmbedder
	)
	if id != "" {
		var err error
		if emb, img, err = d.open(id); err != nil {
			return err
		}
	}
	// Stop the old model's work, then switch.
	old := d.halt()
	if err := closeEmbedder(old); err != nil {
		d.m.log.Warn("closing the previous dense model", "err", err)
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
		d.m.log.Info("dense embeddings off: sparse mode")
		return nil
	}
	d.loadingHook()
	d.mu.Lock()
	d.model, d.loading, d.reason = id, true, "warming up: loading model "+id
	d.gen++
	gen := d.gen
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = cancel
	d.mu.Unlock()
	if err := d.activate(wctx, gen, id, emb, img); err != nil {
		closeEmbedder(emb)
		d.mu.Lock()
		if d.gen == gen {
			d.loading, d.reason = false, fmt.Sprintf("model %s failed to load: %v", id, err)
			d.changedLocked()
		}
		d.mu.Unlock()
		return err
	}
	d.m.log.Info("dense model in use", "model", id, "space", emb.Space().Fingerprint())
	return nil
}

// halt stops the current loader and worker, waits for them, and returns the embedder they
// used (the caller closes it).
func (d *Dense) halt() embed.Embedder {
	d.mu.Lock()
	d.gen++
	if d.stop != nil {
		d.stop()
		d.stop = nil
	}
	emb := d.emb
	d.emb, d.space, d.vecs, d.loading, d.caughtUp = nil, "", nil, false, false
	d.imgEmb, d.imgs = nil, nil
	d.progress = ReembedProgress{}
	d.changedLocked()
	d.mu.Unlock()
	d.wg.Wait()
	return emb
}

// close stops everything and releases the model (a kstate closer: after the turns ended,
// before the binary closes the store).
func (d *Dense) close() error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	emb := d.halt()
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	return closeEmbedder(emb)
}

// notify wakes the worker: events were stored.
func (d *Dense) notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// active returns the loaded embedder, its space and vectors (nil when sparse).
func (d *Dense) active() (embed.Embedder, string, *vector.Index) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.emb, d.space, d.vecs
}

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
			d.m.log.Warn("an event could not be embedded; it is ranked by BM25 alone", "event", evs[i].ID, "err", err)
			continue
		}
		out[i].Vec = v[0]
	}
	return out, nil
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

// queryVec embeds a query (the turn's input, a recall query) in the active space, normalised;
// the last few are remembered, so a turn's window and recall embed its input once.
func (d *Dense) queryVec(ctx context.Context, emb embed.Embedder, space, text string) ([]float32, error) {
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
	v := vector.Normalized(vs[0])
	d.qmu.Lock()
	d.qcache = append(d.qcache, queryVec{space: space, text: text, vec: v})
	if len(d.qcache) > queryCacheSize {
		d.qcache = slices.Delete(d.qcache, 0, len(d.qcache)-queryCacheSize)
	}
	d.qmu.Unlock()
	return v, nil
}

func (d *Dense) clearQueries() {
	d.qmu.Lock()
	d.qcache = nil
	d.qmu.Unlock()
}

// windowScores returns the dense scores of a session's window candidates for input, or nil
// (sparse) when no model is ready or the input cannot be embedded.
func (d *Dense) windowScores(ctx context.Context, input string) (func(ids []int64) []window.DenseScore, bool) {
	emb, space, vecs := d.active()
	if emb == nil || strings.TrimSpace(input) == "" {
		return nil, false
	}
	qv, err := d.queryVec(ctx, emb, space, input)
	if err != nil {
		d.m.log.Warn("embedding the input failed; this window is ranked by BM25 alone", "err", err)
		return nil, false
	}
	return func(ids []int64) []window.DenseScore {
		out := make([]window.DenseScore, len(ids))
		cos, ok := vecs.Cosines(qv, ids)
		for i := range ids {
			out[i] = window.DenseScore{Cos: cos[i], OK: ok[i]}
		}
		return out
	}, true
}

// Search implements cold.Dense: a scan of the active space's vectors that q.Viewer may see
// (in q.Session when set), the cosine of each to the query, their mean and spread, and the
// best events in q.Layers; with a model that embeds images, the same over the image blocks'
// vectors (each found with the event that brought it). With no model ready, or when the query
// cannot be embedded, it returns nothing (recall goes on sparse).
func (d *Dense) Search(ctx context.Context, q cold.DenseQuery) (cold.DenseResult, error) {
	emb, space, vecs := d.active()
	if emb == nil || q.Limit <= 0 {
		return cold.DenseResult{}, nil
	}
	d.mu.Lock()
	imgs := d.imgs
	d.mu.Unlock()
	qv, err := d.queryVec(ctx, emb, space, q.Text)
	if err != nil {
		d.m.log.Warn("embedding a recall query failed; recall is sparse", "err", err)
		return cold.DenseResult{}, nil
	}
	keep := func(e memory.VectorEntry) bool {
		return q.Viewer.CanSee(e.Scope) && (q.Session == "" || e.Session == q.Session)
	}
	best, st := vecs.Search(qv, q.Limit*searchOverFetch, keep)
	res := cold.DenseResult{N: st.N, Mean: st.Mean, SD: st.SD}
	var bestImgs []scoredImage
	if imgs != nil && imgs.len() > 0 {
		var ist vector.Stats
		bestImgs, ist = imgs.search(qv, q.Limit*searchOverFetch, keep)
		res.ImageN, res.ImageMean, res.ImageSD = ist.N, ist.Mean, ist.SD
	}
	if res.N == 0 && len(bestImgs) == 0 {
		return res, nil
	}
	ids := make([]int64, 0, len(best)+len(bestImgs))
	cos := make(map[int64]float64, len(best))
	for _, b := range best {
		ids = append(ids, b.Event)
		cos[b.Event] = b.Cos
	}
	seen := make(map[int64]bool, len(bestImgs))
	for _, b := range bestImgs {
		if _, ok := cos[b.event]; !ok && !seen[b.event] {
			seen[b.event] = true
			ids = append(ids, b.event)
		}
	}
	hits, err := d.index.Events(ctx, ids)
	if err != nil {
		return cold.DenseResult{}, fmt.Errorf("dense search: %w", err)
	}
	byID := make(map[int64]memory.TextHit, len(hits))
	for _, h := range hits { // forgotten events are simply missing
		if !layerIn(h.Event.Layer, q.Layers) {
			continue
		}
		byID[h.Event.ID] = h
		if c, ok := cos[h.Event.ID]; ok {
			res.Hits = append(res.Hits, cold.DenseHit{Event: h.Event, Indexed: h.Indexed, Cos: c})
		}
	}
	for _, b := range bestImgs { // best first
		if h, ok := byID[b.event]; ok {
			res.Images = append(res.Images, cold.ImageHit{Block: b.block, Event: h.Event, Indexed: h.Indexed, Cos: b.cos})
		}
	}
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].Cos > res.Hits[j].Cos })
	if len(res.Hits) > q.Limit {
		res.Hits = res.Hits[:q.Limit]
	}
	return res, nil
}

func layerIn(l memory.Layer, ls []memory.Layer) bool { return len(ls) == 0 || slices.Contains(ls, l) }

// Status says how the memory embeds text now.
func (d *Dense) Status() DenseStatus {
	d.mu.Lock()
	st := DenseStatus{Mode: ModeSparse, Model: d.model, Reason: d.reason, Loading: d.loading}
	if d.emb != nil {
		st.Mode, st.Space, st.Reembed = ModeDense, d.space, d.progress
		if d.imgEmb != nil {
			p := d.imgProg
			st.Images = &p
		}
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

// Chosen returns the chosen model id ("" none).
func (d *Dense) Chosen() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.model
}

// Models returns the model manager.
func (d *Dense) Models() *embed.Manager { return d.models }

// NeedRuntime refuses model work that needs ONNX Runtime when it was not found.
func (d *Dense) NeedRuntime(what string) error {
	if d.rt == nil {
		return fmt.Errorf("%w: %s needs ONNX Runtime, which was not found: %v", ErrUnavailable, what, d.rtErr)
	}
	return nil
}

// Use makes id the active model ("" returns to sparse mode); see [Dense.use].
func (d *Dense) Use(ctx context.Context, id string) error { return d.use(ctx, id) }

// Settle waits until the chosen model has loaded (or failed to) and every stored event has a
// vector in its space, the vectors of other spaces deleted; at once when no model is chosen.
func (d *Dense) Settle(ctx context.Context) error { return d.settle(ctx) }

// Remove deletes an installed model; the chosen one cannot be removed.
func (d *Dense) Remove(id string) error {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	if id == d.Chosen() {
		return fmt.Errorf("%w: model %s is in use: choose another model or sparse mode first (`waiter model use ''`)", ErrInvalid, id)
	}
	return d.models.Remove(id)
}

var _ cold.Dense = (*Dense)(nil)

// windowDense returns how to score a session's window candidates densely for input, or nil
// when the window is sparse (no model ready, or the input could not be embedded).
func (m *Engine) windowDense(ctx context.Context, input string) func(cands []window.Candidate) []window.DenseScore {
	if m.dense == nil {
		return nil
	}
	scores, ok := m.dense.windowScores(ctx, input)
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
