package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/cold"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/vector"
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
