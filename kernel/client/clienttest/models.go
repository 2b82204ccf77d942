package clienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hologramagent/hologram/kernel/client"
)

// Models is a fake kernel's dense-model side: it serves the /api/v1/embedding routes of
// docs/api.md over an in-memory catalogue (validating like the kernel), adds the embedding
// status to GET /api/v1/status, and hands every other request to Next (usually a [Fake]).
// Create it with [NewModels]. It is safe for concurrent use.
type Models struct {
	// Next serves every other route.
	Next http.Handler

	mu      sync.Mutex
	models  []client.EmbeddingModel
	active  string
	fail    map[string]string // model id → install error after the first progress event
	corrupt map[string]bool   // model id → use fails: the model does not load
}

// NewModels returns a fake with two catalogue models, bge-small-zh-v1.5 (95 MB in two files)
// and multilingual-e5-small (a pinned hash), neither installed.
func NewModels(next http.Handler) *Models {
	return &Models{Next: next, fail: map[string]string{}, corrupt: map[string]bool{}, models: []client.EmbeddingModel{
		{ID: "bge-small-zh-v1.5", Description: "BAAI bge-small-zh v1.5: Chinese text, 512 dims", Kind: "text", Dim: 512,
			Repo: "Xenova/bge-small-zh-v1.5", Revision: "main", Licence: "MIT", Size: 95_000_000,
			Files: []client.ModelFile{{Path: "onnx/model.onnx", Size: 94_000_000}, {Path: "tokenizer.json", Size: 1_000_000}}},
		{ID: "multilingual-e5-small", Description: "intfloat multilingual-e5-small: ≈ 100 languages, 384 dims", Kind: "text", Dim: 384,
			Repo: "intfloat/multilingual-e5-small", Revision: "main", Licence: "MIT",
			Files: []client.ModelFile{{Path: "onnx/model.onnx", Pinned: "ca456c06b3a9505ddfd9131408916dd79290368331e7d76bb621f1cba6bc8665"}}},
	}}
}

// FailInstall makes installing id fail with msg after its first progress event.
func (m *Models) FailInstall(id, msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail[id] = msg
}

// Corrupt makes using id fail as a model that does not load.
func (m *Models) Corrupt(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.corrupt[id] = true
}

// Active returns the model in use ("" sparse).
func (m *Models) Active() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active
}

// ServeHTTP implements the embedding routes and passes the rest to Next.
func (m *Models) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && path == "/api/v1/status":
		m.status(w, r)
		return
	case !strings.HasPrefix(path, "/api/v1/embedding"):
		m.Next.ServeHTTP(w, r)
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/api/v1/"), "/")
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		WriteError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	switch {
	case r.Method == http.MethodGet && len(parts) == 1:
		writeJSON(w, http.StatusOK, m.embeddingStatus())
	case r.Method == http.MethodGet && len(parts) == 2 && parts[1] == "models":
		m.mu.Lock()
		out := make([]client.EmbeddingModel, len(m.models))
		copy(out, m.models)
		m.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"models": out})
	case r.Method == http.MethodPost && len(parts) == 2 && parts[1] == "use":
		var in struct {
			Model *string `json:"model"`
		}
		if !decode(w, body, &in) {
			return
		}
		if in.Model == nil {
			WriteError(w, http.StatusBadRequest, `field "model" is required ("" returns to sparse mode)`)
			return
		}
		m.use(w, *in.Model)
	case len(parts) == 4 && parts[1] == "models" && r.Method == http.MethodPost && parts[3] == "install":
		m.install(w, parts[2])
	case len(parts) == 4 && parts[1] == "models" && r.Method == http.MethodPost && parts[3] == "import":
		var in client.ImportModelRequest
		if !decode(w, body, &in) {
			return
		}
		m.importModel(w, parts[2], in.Dir)
	case len(parts) == 4 && parts[1] == "models" && r.Method == http.MethodPost && parts[3] == "use":
		m.use(w, parts[2])
	case len(parts) == 3 && parts[1] == "models" && r.Method == http.MethodDelete:
		m.remove(w, parts[2])
	default:
		WriteError(w, http.StatusNotFound, "no route "+r.Method+" "+path)
	}
}

// status is the Next's status with the embedding status added.
func (m *Models) status(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	m.Next.ServeHTTP(rec, r)
	var st client.Status
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &st) != nil {
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	}
	es := m.embeddingStatus()
	st.Embedding = &es
	writeJSON(w, http.StatusOK, st)
}

func (m *Models) embeddingStatus() client.EmbeddingStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == "" {
		return client.EmbeddingStatus{Mode: client.EmbeddingSparse, Reason: "no dense model chosen (see `waiter model list`, then `waiter model use ID`)"}
	}
	return client.EmbeddingStatus{Mode: client.EmbeddingDense, Model: m.active, Space: m.active + ":0123456789abcdef01234567",
		Runtime: "1.24.3 (/usr/lib/hologram/onnxruntime/libonnxruntime.so.1)", Reembed: client.ReembedProgress{Done: 40, Total: 40}}
}

// find returns the index of a model, or answers 404 and returns -1. m.mu must be held.
func (m *Models) find(w http.ResponseWriter, id string) int {
	for i, mod := range m.models {
		if mod.ID == id {
			return i
		}
	}
	WriteError(w, http.StatusNotFound, "not found: unknown model "+strconv.Quote(id))
	return -1
}

func (m *Models) use(w http.ResponseWriter, id string) {
	m.mu.Lock()
	if id != "" {
		i := m.find(w, id)
		if i < 0 {
			m.mu.Unlock()
			return
		}
		switch {
		case !m.models[i].Installed:
			m.mu.Unlock()
			WriteError(w, http.StatusNotFound, "model "+id+" is not installed (install or import it first: `waiter model install "+id+"`)")
			return
		case m.corrupt[id]:
			m.mu.Unlock()
			WriteError(w, http.StatusBadRequest, "model "+id+" failed to load: embed: model "+id+": not a usable ONNX model: protobuf parsing failed")
			return
		}
	}
	m.active = id
	for i := range m.models {
		m.models[i].Active = m.models[i].ID == id
	}
	m.mu.Unlock()
	writeJSON(w, http.StatusOK, m.embeddingStatus())
}

// install streams three progress events per file and the installed model, or fails after the
// first event when FailInstall says so.
func (m *Models) install(w http.ResponseWriter, id string) {
	m.mu.Lock()
	i := m.find(w, id)
	if i < 0 {
		m.mu.Unlock()
		return
	}
	mod := m.models[i]
	failure := m.fail[id]
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	for _, f := range mod.Files {
		size := f.Size
		if size == 0 {
			size = 1000
		}
		for _, done := range []int64{0, size / 2, size} {
			send(client.ModelEventProgress, client.ModelProgress{Model: id, File: f.Path, Hub: "https://hf-mirror.com", Done: done, Total: size})
			if failure != "" {
				send(client.ModelEventError, client.Error{Status: http.StatusInternalServerError, Message: failure})
				return
			}
		}
	}
	m.mu.Lock()
	mod = m.installedLocked(i, "https://hf-mirror.com")
	m.mu.Unlock()
	send(client.ModelEventDone, mod)
}

// installedLocked marks model i installed from source and returns it. m.mu must be held.
func (m *Models) installedLocked(i int, source string) client.EmbeddingModel {
	mod := &m.models[i]
	mod.Installed, mod.Source = true, source
	mod.InstalledAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for j := range mod.Files {
		f := &mod.Files[j]
		if f.Size == 0 {
			f.Size = 1000
		}
		f.SHA256 = strings.Repeat(strconv.Itoa(j+1), 64)
		f.Check = "recorded"
		if f.Pinned != "" {
			f.SHA256, f.Check = f.Pinned, "pinned"
		}
	}
	return *mod
}

func (m *Models) importModel(w http.ResponseWriter, id, dir string) {
	if strings.TrimSpace(dir) == "" {
		WriteError(w, http.StatusBadRequest, `field "dir" (an absolute directory on the kernel's machine) is required`)
		return
	}
	if !filepath.IsAbs(dir) {
		WriteError(w, http.StatusBadRequest, "invalid request: the import directory "+strconv.Quote(dir)+" must be an absolute path on the kernel's machine")
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(w, id)
	if i < 0 {
		return
	}
	if m.models[i].Installed {
		WriteError(w, http.StatusBadRequest, "invalid request: embed: import "+id+": already installed; remove it first")
		return
	}
	writeJSON(w, http.StatusCreated, m.installedLocked(i, "import:"+dir))
}

func (m *Models) remove(w http.ResponseWriter, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(w, id)
	switch {
	case i < 0:
		return
	case id == m.active:
		WriteError(w, http.StatusBadRequest, "invalid request: model "+id+" is in use: choose another model or sparse mode first (`waiter model use ''`)")
		return
	case !m.models[i].Installed:
		WriteError(w, http.StatusNotFound, "not found: embed: model not installed: "+id+" (install or import it first)")
		return
	}
	mod := &m.models[i]
	mod.Installed, mod.Source, mod.InstalledAt = false, "", time.Time{}
	for j := range mod.Files {
		mod.Files[j].SHA256, mod.Files[j].Check = "", ""
	}
	w.WriteHeader(http.StatusNoContent)
}
