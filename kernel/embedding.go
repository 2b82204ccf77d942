package kernel

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/engine"
)

// Dense embeddings (ARCHITECTURE.md §4): the memory engine's dense side (memory/engine.Dense)
// holds the chosen model, its vectors and the re-embedding worker; this file is the owner's side
// of it (status, the model catalogue, install, import, use, remove) for the API.

// FacilityDense is the readiness facility of the dense model. It is declared only once a model
// is chosen, and is ready once one has loaded.
const FacilityDense = "dense"

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

// errNoDense answers the model calls of a kernel without dense embeddings.
func errNoDense() error {
	return fmt.Errorf("%w: this kernel has no dense embeddings (no model manager)", client.ErrUnavailable)
}

// engineErr maps the engine's and the model manager's errors onto the client's.
func engineErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrInvalid):
		return fmt.Errorf("%w: %w", client.ErrInvalid, err)
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, embed.ErrORTNotFound):
		return fmt.Errorf("%w: %w", client.ErrUnavailable, err)
	case errors.Is(err, embed.ErrUnknownModel), errors.Is(err, embed.ErrNotInstalled), errors.Is(err, memory.ErrNotFound):
		return fmt.Errorf("%w: %w", client.ErrNotFound, err)
	}
	return err
}

// Embedding implements client.Service.
func (k modelRole) Embedding(ctx context.Context) (client.EmbeddingStatus, error) {
	return k.embeddingStatus(), nil
}

// embeddingStatus is Status.Embedding.
func (k *Kernel) embeddingStatus() client.EmbeddingStatus {
	d := k.mem.Dense()
	if d == nil {
		return client.EmbeddingStatus{Mode: client.EmbeddingSparse, Reason: "dense embeddings are not set up in this kernel"}
	}
	st := d.Status()
	out := client.EmbeddingStatus{Mode: st.Mode, Model: st.Model, Space: st.Space, Reason: st.Reason, Loading: st.Loading, Runtime: st.Runtime,
		Reembed: client.ReembedProgress{Done: st.Reembed.Done, Total: st.Reembed.Total, Running: st.Reembed.Running}}
	if p := st.Images; p != nil {
		out.Images = &client.ReembedProgress{Done: p.Done, Total: p.Total, Running: p.Running}
	}
	return out
}

// SettleEmbedding waits until the chosen dense model has loaded (or failed to) and every
// stored event has a vector in its space, the vectors of other spaces deleted; at once when no
// model is chosen. Benchmarks and tests call it between storing and asking, as SettleMemory.
func (k *Kernel) SettleEmbedding(ctx context.Context) error {
	if d := k.mem.Dense(); d != nil {
		return d.Settle(ctx)
	}
	return nil
}

// EmbeddingModels implements client.Service.
func (k modelRole) EmbeddingModels(ctx context.Context) ([]client.EmbeddingModel, error) {
	d := k.mem.Dense()
	if d == nil {
		return nil, errNoDense()
	}
	infos, err := d.Models().List()
	if err != nil {
		return nil, err
	}
	act := d.Chosen()
	out := make([]client.EmbeddingModel, len(infos))
	for i, info := range infos {
		out[i] = memadmin.ModelOut(info, act)
	}
	return out, nil
}

// installProgressEvery bounds how often InstallModel reports a file's progress (the first and
// the last report of each file always go out).
const installProgressEvery = 200 * time.Millisecond

// InstallModel implements client.Service.
func (k modelRole) InstallModel(ctx context.Context, id string, progress func(client.ModelProgress)) (client.EmbeddingModel, error) {
	d := k.mem.Dense()
	if d == nil {
		return client.EmbeddingModel{}, errNoDense()
	}
	if strings.TrimSpace(id) == "" {
		return client.EmbeddingModel{}, invalid("the model id is empty")
	}
	if _, err := d.Models().Info(id); err != nil {
		return client.EmbeddingModel{}, engineErr(err)
	}
	if err := d.NeedRuntime("installing model " + id); err != nil {
		return client.EmbeddingModel{}, engineErr(err)
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
	info, err := d.Models().Install(ctx, id, report)
	if err != nil {
		return client.EmbeddingModel{}, engineErr(err)
	}
	return memadmin.ModelOut(info, d.Chosen()), nil
}

// ImportModel implements client.Service.
func (k modelRole) ImportModel(ctx context.Context, id, dir string) (client.EmbeddingModel, error) {
	d := k.mem.Dense()
	if d == nil {
		return client.EmbeddingModel{}, errNoDense()
	}
	switch {
	case strings.TrimSpace(id) == "":
		return client.EmbeddingModel{}, invalid("the model id is empty")
	case !filepath.IsAbs(dir):
		return client.EmbeddingModel{}, invalid("the import directory %q must be an absolute path on the kernel's machine", dir)
	}
	if _, err := d.Models().Info(id); err != nil {
		return client.EmbeddingModel{}, engineErr(err)
	}
	if err := d.NeedRuntime("importing model " + id); err != nil {
		return client.EmbeddingModel{}, engineErr(err)
	}
	info, err := d.Models().Import(ctx, id, dir)
	if err != nil {
		if errors.Is(err, embed.ErrUnknownModel) {
			return client.EmbeddingModel{}, engineErr(err)
		}
		// Missing files, a directory that is not one, an already installed model, a model
		// that does not open: all the request's to fix.
		return client.EmbeddingModel{}, fmt.Errorf("%w: %w", client.ErrInvalid, err)
	}
	return memadmin.ModelOut(info, d.Chosen()), nil
}

// UseModel implements client.Service.
func (k modelRole) UseModel(ctx context.Context, id string) (client.EmbeddingStatus, error) {
	d := k.mem.Dense()
	if d == nil {
		if id == "" {
			return k.embeddingStatus(), nil
		}
		return client.EmbeddingStatus{}, errNoDense()
	}
	if err := d.Use(ctx, strings.TrimSpace(id)); err != nil {
		return client.EmbeddingStatus{}, engineErr(err)
	}
	return k.embeddingStatus(), nil
}

// RemoveModel implements client.Service.
func (k modelRole) RemoveModel(ctx context.Context, id string) error {
	d := k.mem.Dense()
	if d == nil {
		return errNoDense()
	}
	if strings.TrimSpace(id) == "" {
		return invalid("the model id is empty")
	}
	return engineErr(d.Remove(id))
}
