package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Embedding modes ([EmbeddingStatus].Mode).
const (
	// EmbeddingSparse: recall and the context window rank by BM25 alone.
	EmbeddingSparse = "sparse"
	// EmbeddingDense: a dense model is loaded; its cosines are fused with BM25 for every event
	// that has a vector in its space.
	EmbeddingDense = "dense"
)

// EmbeddingStatus says how the memory embeds text: which mode is active, with which model and
// vector space, why it is sparse, and how far the background re-embedding has come.
type EmbeddingStatus struct {
	// Mode is "sparse" or "dense".
	Mode string `json:"mode"`
	// Model is the model the owner chose ("" none). In sparse mode with a model set, the model
	// is loading (Loading) or failed to load (Reason).
	Model string `json:"model,omitempty"`
	// Space is the fingerprint of the active vector space (dense mode): every stored vector
	// carries the fingerprint of its space, and only vectors of this one are used.
	Space string `json:"space,omitempty"`
	// Reason says why the mode is sparse: no model chosen, ONNX Runtime missing (and where it
	// was looked for), the model still loading, or the error that kept it from loading.
	Reason string `json:"reason,omitempty"`
	// Loading is true while the chosen model warms up.
	Loading bool `json:"loading,omitempty"`
	// Runtime is the ONNX Runtime in use ("1.24.3 (/usr/lib/hologram/onnxruntime/…)"), ""
	// before it is loaded.
	Runtime string `json:"runtime,omitempty"`
	// Reembed is the background embedding of the events into the active space.
	Reembed ReembedProgress `json:"reembed"`
	// Images is the background embedding of the image blocks into the active space, when its
	// model embeds images as well as text (CLIP-like models); nil otherwise.
	Images *ReembedProgress `json:"images,omitempty"`
}

// ReembedProgress counts the events embedded in the active space: Done of Total. Running is
// true while the kernel is embedding (a new model's backlog, or new events).
type ReembedProgress struct {
	Done    int  `json:"done"`
	Total   int  `json:"total"`
	Running bool `json:"running"`
}

// EmbeddingModel is a model of the kernel's catalogue and its state in the models directory.
type EmbeddingModel struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	// Kind is "text" or "image+text" (one space for texts and images, CLIP-like).
	Kind string `json:"kind"`
	Dim  int    `json:"dim"`
	// Repo and Revision say where the files are downloaded from (a hub repository); Upstream
	// is the original model, Licence its licence.
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
	Upstream string `json:"upstream,omitempty"`
	Licence  string `json:"licence,omitempty"`
	// Size is the download size in bytes when the catalogue knows it (0: unknown), or the
	// installed size.
	Size      int64 `json:"size,omitempty"`
	Installed bool  `json:"installed"`
	// Active marks the model the owner chose (see [EmbeddingStatus] for whether it runs).
	Active bool `json:"active"`
	// Source is the hub the files came from, or "import:" and the directory.
	Source      string    `json:"source,omitempty"`
	InstalledAt time.Time `json:"installed_at,omitzero"`
	// Files are the model's files: installed ones with their size and SHA-256 and how it was
	// checked; for a model not installed, the catalogue's files with their pinned hashes.
	Files []ModelFile `json:"files"`
	// Partial counts the bytes of an interrupted download kept for resuming.
	Partial int64 `json:"partial,omitempty"`
}

// ModelFile is one file of a model.
type ModelFile struct {
	Path string `json:"path"`
	Size int64  `json:"size,omitempty"`
	// SHA256 is the installed file's hash ("" when not installed).
	SHA256 string `json:"sha256,omitempty"`
	// Pinned is the hash the catalogue pins ("" when the hub publishes none: the hash of the
	// first download is recorded instead, and later downloads must match it).
	Pinned string `json:"pinned,omitempty"`
	// Check says how SHA256 was verified: "pinned", "recorded", "matches record", "imported" or
	// "imported, differs from the published hash".
	Check    string `json:"check,omitempty"`
	Optional bool   `json:"optional,omitempty"`
}

// ModelProgress is one progress report of a model download: Done of Total bytes of one file
// (Total 0: not known yet).
type ModelProgress struct {
	Model string `json:"model"`
	File  string `json:"file"`
	Hub   string `json:"hub,omitempty"`
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
}

// Install stream event types (POST /api/v1/embedding/models/{id}/install).
const (
	ModelEventProgress = "progress" // data: a ModelProgress
	ModelEventDone     = "done"     // data: the installed EmbeddingModel
	ModelEventError    = "error"    // data: {"message": "…"}
)

// Embedding reports the embedding mode (GET /api/v1/embedding).
func (c *HTTP) Embedding(ctx context.Context) (EmbeddingStatus, error) {
	var out EmbeddingStatus
	err := c.do(ctx, http.MethodGet, "/api/v1/embedding", nil, &out)
	return out, err
}

// EmbeddingModels lists the catalogue's models (GET /api/v1/embedding/models).
func (c *HTTP) EmbeddingModels(ctx context.Context) ([]EmbeddingModel, error) {
	var out struct {
		Models []EmbeddingModel `json:"models"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/embedding/models", nil, &out)
	return out.Models, err
}

// InstallModel downloads a model (POST /api/v1/embedding/models/{id}/install), calling progress
// (which may be nil) for each progress event of the stream. Like Chat it has no overall
// timeout: cancelling ctx closes the connection, which stops the download (the part
// downloaded is kept; installing again resumes it).
func (c *HTTP) InstallModel(ctx context.Context, id string, progress func(ModelProgress)) (EmbeddingModel, error) {
	if id == "" {
		return EmbeddingModel{}, fmt.Errorf("install model: empty id: %w", ErrInvalid)
	}
	req, err := c.newRequest(ctx, http.MethodPost, "/api/v1/embedding/models/"+url.PathEscape(id)+"/install", nil)
	if err != nil {
		return EmbeddingModel{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(req)
	if err != nil {
		return EmbeddingModel{}, fmt.Errorf("install model %s: %w", id, err)
	}
	defer resp.Body.Close()
	var (
		out  EmbeddingModel
		done bool
		fail error
	)
	err = readSSE(resp.Body, func(name string, data []byte) error {
		switch name {
		case ModelEventProgress:
			var p ModelProgress
			if err := json.Unmarshal(data, &p); err != nil {
				return fmt.Errorf("decode %q event: %w", name, err)
			}
			if progress != nil {
				progress(p)
			}
		case ModelEventDone:
			if err := json.Unmarshal(data, &out); err != nil {
				return fmt.Errorf("decode %q event: %w", name, err)
			}
			done = true
		case ModelEventError:
			var e Error
			if err := json.Unmarshal(data, &e); err != nil {
				return fmt.Errorf("decode %q event: %w", name, err)
			}
			if e.Status == 0 {
				e.Status = http.StatusInternalServerError
			}
			fail = &e
		}
		return nil
	})
	switch {
	case fail != nil:
		return EmbeddingModel{}, fmt.Errorf("install model %s: %w", id, fail)
	case done:
		return out, nil
	case ctx.Err() != nil:
		return EmbeddingModel{}, fmt.Errorf("install model %s: %w", id, ctx.Err())
	case err != nil:
		return EmbeddingModel{}, fmt.Errorf("install model %s: %w", id, err)
	}
	return EmbeddingModel{}, fmt.Errorf("install model %s: %w", id, ErrStreamEnded)
}

// ImportModel installs a model from a directory on the kernel's machine
// (POST /api/v1/embedding/models/{id}/import {"dir": "/abs"}).
func (c *HTTP) ImportModel(ctx context.Context, id, dir string) (EmbeddingModel, error) {
	if id == "" {
		return EmbeddingModel{}, fmt.Errorf("import model: empty id: %w", ErrInvalid)
	}
	var out EmbeddingModel
	err := c.do(ctx, http.MethodPost, "/api/v1/embedding/models/"+url.PathEscape(id)+"/import", ImportModelRequest{Dir: dir}, &out)
	return out, err
}

// ImportModelRequest is the body of POST /api/v1/embedding/models/{id}/import.
type ImportModelRequest struct {
	// Dir is an absolute directory on the kernel's machine holding the model's files.
	Dir string `json:"dir"`
}

// UseModelRequest is the body of POST /api/v1/embedding/use.
type UseModelRequest struct {
	// Model is the model to use; "" returns to sparse mode.
	Model string `json:"model"`
}

// UseModel makes a model the active one, "" returning to sparse mode
// (POST /api/v1/embedding/use {"model": id}), and returns the new status.
func (c *HTTP) UseModel(ctx context.Context, id string) (EmbeddingStatus, error) {
	var out EmbeddingStatus
	err := c.do(ctx, http.MethodPost, "/api/v1/embedding/use", UseModelRequest{Model: id}, &out)
	return out, err
}

// RemoveModel deletes an installed model (DELETE /api/v1/embedding/models/{id}).
func (c *HTTP) RemoveModel(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("remove model: empty id: %w", ErrInvalid)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/embedding/models/"+url.PathEscape(id), nil, nil)
}
