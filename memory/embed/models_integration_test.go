//go:build integration

package embed

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHub serves files like a model hub: GET /{repo}/resolve/{revision}/{path}, with Range
// support. It can cut a response half-way (the connection drops) and records every request.
type fakeHub struct {
	srv *httptest.Server

	mu       sync.Mutex
	files    map[string][]byte // "repo/revision/path" → content
	cut      map[string]int64  // key → cut the next response after this many bytes
	requests []hubRequest
}

type hubRequest struct {
	key, rangeHeader string
}

func newFakeHub(t testing.TB) *fakeHub {
	h := &fakeHub{files: map[string][]byte{}, cut: map[string]int64{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	repo, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/resolve/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	key := repo + "/" + rest
	h.mu.Lock()
	h.requests = append(h.requests, hubRequest{key: key, rangeHeader: r.Header.Get("Range")})
	content, found := h.files[key]
	cut, cutting := h.cut[key]
	delete(h.cut, key)
	h.mu.Unlock()
	if !found {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if cutting {
		w.Header().Set("Content-Length", itoa64(int64(len(content))))
		w.WriteHeader(http.StatusOK)
		w.Write(content[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drops the connection mid-body
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func (h *fakeHub) requestCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.requests)
}

// publish serves the files of dir as repository repo at revision main.
func (h *fakeHub) publish(t testing.TB, repo, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.mu.Lock()
		h.files[repo+"/main/"+filepath.ToSlash(rel)] = data
		h.mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (h *fakeHub) set(key string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[key] = data
}

func (h *fakeHub) cutNext(key string, after int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cut[key] = after
}

func (h *fakeHub) requestsFor(key string) []hubRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hubRequest
	for _, r := range h.requests {
		if r.key == key {
			out = append(out, r)
		}
	}
	return out
}

// testCatalog is the real catalogue with the generated files' hashes pinned where the real
// catalogue pins one (the e5 model and tokenizer), so the same specs (repositories, file
// paths, inputs and outputs, dims, pooling) are exercised on the test models.
func testCatalog(t testing.TB, models testModels) []ModelSpec {
	t.Helper()
	dirs := map[string]string{"bge-small-zh-v1.5": models.bge, "multilingual-e5-small": models.e5, "chinese-clip-vit-base-patch16": models.clip,
		"whisper-base": models.whisper}
	cat := Catalog()
	for i := range cat {
		s := &cat[i]
		for j := range s.Files {
			f := &s.Files[j]
			if f.SHA256 == "" {
				continue
			}
			sum, size, err := fileHash(filepath.Join(dirs[s.ID], filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			f.SHA256, f.Size = sum, size
		}
	}
	return cat
}

// progressLog collects Progress reports.
type progressLog struct {
	mu    sync.Mutex
	calls []Progress
}

func (p *progressLog) report(pr Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, pr)
}

func (p *progressLog) last(file string) (Progress, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var last Progress
	n := 0
	for _, c := range p.calls {
		if c.File == file {
			last = c
			n++
		}
	}
	return last, n
}

type managerEnv struct {
	hub    *fakeHub
	dir    string
	sleeps []time.Duration
}

func newManagerEnv(t *testing.T, models testModels) *managerEnv {
	env := &managerEnv{hub: newFakeHub(t), dir: t.TempDir()}
	env.hub.publish(t, "Xenova/bge-small-zh-v1.5", models.bge)
	env.hub.publish(t, "intfloat/multilingual-e5-small", models.e5)
	env.hub.publish(t, "Xenova/chinese-clip-vit-base-patch16", models.clip)
	env.hub.publish(t, "onnx-community/whisper-base", models.whisper)
	return env
}

func (env *managerEnv) manager(t *testing.T, rt *ORT, cat []ModelSpec, hubs []string, attempts int) *Manager {
	t.Helper()
	if hubs == nil {
		hubs = []string{env.hub.srv.URL}
	}
	m, err := NewManager(ManagerOptions{Dir: env.dir, Hubs: hubs, Catalog: cat, Runtime: rt, Attempts: attempts,
		Logger: testLogger(t), Now: func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) },
		Sleep: func(ctx context.Context, d time.Duration) error { env.sleeps = append(env.sleeps, d); return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// closedURL is a base URL nothing listens on.
func closedURL(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func testManager(t *testing.T, rt *ORT, models testModels) {
	cat := testCatalog(t, models)

	t.Run("install, list, use, remove", func(t *testing.T) {
		env := newManagerEnv(t, models)
		m := env.manager(t, rt, cat, nil, 0)
		var prog progressLog
		if _, err := m.Speech(""); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Speech before any install: %v", err)
		}
		for _, id := range []string{"bge-small-zh-v1.5", "multilingual-e5-small", "chinese-clip-vit-base-patch16", "whisper-base"} {
			info, err := m.Install(context.Background(), id, prog.report)
			if err != nil {
				t.Fatal(err)
			}
			if !info.Installed || info.Source != env.hub.srv.URL || !info.InstalledAt.Equal(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("%s: %+v", id, info)
			}
		}
		// Progress: every file reported up to its full size.
		model, _ := os.ReadFile(filepath.Join(models.bge, "onnx", "model.onnx"))
		last, n := prog.last("onnx/model.onnx")
		if last.Done != last.Total || n < 2 {
			t.Errorf("progress of onnx/model.onnx: last %+v after %d reports", last, n)
		}
		list, err := m.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range list {
			if !info.Installed || info.Partial != 0 {
				t.Errorf("%s: installed %v, partial %d", info.Spec.ID, info.Installed, info.Partial)
			}
			for _, f := range info.Files {
				want := "recorded"
				for _, sf := range info.Spec.Files {
					if sf.Path == f.Path && sf.SHA256 != "" {
						want = "pinned"
					}
				}
				if f.Check != want || len(f.SHA256) != 64 || f.Size == 0 {
					t.Errorf("%s %s: %+v, want check %q", info.Spec.ID, f.Path, f, want)
				}
			}
		}
		got, err := os.ReadFile(filepath.Join(env.dir, "bge-small-zh-v1.5", "files", "onnx", "model.onnx"))
		if err != nil || !bytes.Equal(got, model) {
			t.Errorf("installed model differs from the served one (%v)", err)
		}
		// Installing again is a no-op.
		before := env.hub.requestCount()
		if _, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil); err != nil || env.hub.requestCount() != before {
			t.Errorf("second install: %v, %d new requests", err, env.hub.requestCount()-before)
		}

		// Use: the setting to persist and an embedder per model.
		for _, tc := range []struct {
			id  string
			dim int
		}{{"bge-small-zh-v1.5", 512}, {"multilingual-e5-small", 384}, {"chinese-clip-vit-base-patch16", 512}} {
			active, e, err := m.Use(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if active.Model != tc.id || active.Fingerprint != e.Space().Fingerprint() || e.Space().Dim != tc.dim {
				t.Errorf("Use(%s) = %+v, space %+v", tc.id, active, e.Space())
			}
			mustEmbed(t, e, denseTexts, Query)
			if img, ok := e.(ImageEmbedder); ok {
				checkColourRetrieval(t, img)
			} else if tc.id == "chinese-clip-vit-base-patch16" {
				t.Errorf("%s does not embed images", tc.id)
			}
			closeEmbedder(t, e)
		}
		// The speech model is installed for voice messages (memory/stt opens its files), never
		// used as an embedder.
		sf, err := m.Speech("")
		if err != nil || sf.ID != "whisper-base" || filepath.Base(sf.Decoder) != "decoder_model.onnx" {
			t.Fatalf("Speech = %+v, %v", sf, err)
		}
		for _, p := range []string{sf.Encoder, sf.Decoder, sf.Tokenizer} {
			if _, err := os.Stat(p); err != nil {
				t.Error(err)
			}
		}
		if _, _, err := m.Use("whisper-base"); err == nil || !strings.Contains(err.Error(), "speech-to-text model") {
			t.Errorf("Use of the speech model: %v", err)
		}
		// e5's prefixes are applied: a query is the passage embedding of "query: …" under the
		// same model with the passage prefix stripped off.
		e, err := m.Open("multilingual-e5-small")
		if err != nil {
			t.Fatal(err)
		}
		sp := e.Space()
		if sp.QueryPrefix != "query: " || sp.PassagePrefix != "passage: " || sp.Pooling != PoolMean {
			t.Errorf("e5 space %+v", sp)
		}
		q := mustEmbed(t, e, []string{"记忆"}, Query)[0]
		p := mustEmbed(t, e, []string{"记忆"}, Passage)[0]
		if maxAbsDiff(q, p) < 1e-4 {
			t.Error("e5 query and passage embeddings are equal")
		}
		closeEmbedder(t, e)

		if err := m.Remove("bge-small-zh-v1.5"); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Open("bge-small-zh-v1.5"); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Open after Remove: %v", err)
		}
		if _, err := os.Stat(filepath.Join(env.dir, "bge-small-zh-v1.5")); !os.IsNotExist(err) {
			t.Errorf("model directory left after Remove: %v", err)
		}
	})

	t.Run("interrupted download resumes with Range", func(t *testing.T) {
		env := newManagerEnv(t, models)
		key := "Xenova/bge-small-zh-v1.5/main/onnx/model.onnx"
		size := int64(len(env.hub.files[key]))
		env.hub.cutNext(key, size/2)
		m := env.manager(t, rt, cat, nil, 1)
		_, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil)
		if err == nil || !strings.Contains(err.Error(), "the part downloaded is kept") {
			t.Fatalf("interrupted install: %v", err)
		}
		info, _ := m.Info("bge-small-zh-v1.5")
		if info.Installed || info.Partial < size/2 {
			t.Errorf("after the interruption: installed %v, partial %d of %d", info.Installed, info.Partial, size)
		}
		var prog progressLog
		if _, err := m.Install(context.Background(), "bge-small-zh-v1.5", prog.report); err != nil {
			t.Fatal(err)
		}
		reqs := env.hub.requestsFor(key)
		if len(reqs) != 2 || reqs[0].rangeHeader != "" || reqs[1].rangeHeader != "bytes="+itoa64(size/2)+"-" {
			t.Errorf("requests for the model: %+v, want a full one then Range bytes=%d-", reqs, size/2)
		}
		if first := prog.calls[0]; first.File != "onnx/model.onnx" || first.Done != size/2 || first.Total != size {
			t.Errorf("resumed progress starts at %+v", first)
		}
		got, _ := os.ReadFile(filepath.Join(env.dir, "bge-small-zh-v1.5", "files", "onnx", "model.onnx"))
		if !bytes.Equal(got, env.hub.files[key]) {
			t.Error("resumed file differs from the served one")
		}
		// Within one install, a later round resumes too (after an injected wait).
		env.sleeps = nil
		key = "Xenova/chinese-clip-vit-base-patch16/main/onnx/model.onnx"
		env.hub.cutNext(key, int64(len(env.hub.files[key]))/3)
		m2 := env.manager(t, rt, cat, nil, 2)
		if _, err := m2.Install(context.Background(), "chinese-clip-vit-base-patch16", nil); err != nil {
			t.Fatal(err)
		}
		if reqs := env.hub.requestsFor(key); len(reqs) != 2 || !strings.HasPrefix(reqs[1].rangeHeader, "bytes=") || !slices.Equal(env.sleeps, []time.Duration{2 * time.Second}) {
			t.Errorf("in-install retry: requests %+v, sleeps %v", reqs, env.sleeps)
		}
	})

	t.Run("checksum mismatch is not installed", func(t *testing.T) {
		env := newManagerEnv(t, models)
		key := "intfloat/multilingual-e5-small/main/onnx/sentencepiece.bpe.model"
		good := env.hub.files[key]
		env.hub.set(key, append(slices.Clone(good[:len(good)-1]), good[len(good)-1]^0xff))
		m := env.manager(t, rt, cat, nil, 1)
		_, err := m.Install(context.Background(), "multilingual-e5-small", nil)
		if err == nil || !strings.Contains(err.Error(), "checksum mismatch for onnx/sentencepiece.bpe.model") || !strings.Contains(err.Error(), "not installed") {
			t.Fatalf("install with a corrupted file: %v", err)
		}
		if _, err := m.Open("multilingual-e5-small"); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Open after the mismatch: %v", err)
		}
		if _, err := os.Stat(filepath.Join(m.stagingDir("multilingual-e5-small"), "onnx", "sentencepiece.bpe.model.part")); !os.IsNotExist(err) {
			t.Errorf("the bad file is kept: %v", err)
		}
		// The caller stays in sparse mode.
		if a, e, err := m.Use(""); err != nil || e != nil || a.Model != "" {
			t.Errorf("sparse mode: %v %v %v", a, e, err)
		}
		// Fixed upstream: the install completes, reusing the verified model file.
		env.hub.set(key, good)
		modelKey := "intfloat/multilingual-e5-small/main/onnx/model.onnx"
		before := len(env.hub.requestsFor(modelKey))
		if _, err := m.Install(context.Background(), "multilingual-e5-small", nil); err != nil {
			t.Fatal(err)
		}
		if after := len(env.hub.requestsFor(modelKey)); after != before {
			t.Errorf("the verified model file was downloaded again (%d → %d requests)", before, after)
		}
	})

	t.Run("hash recorded at first download", func(t *testing.T) {
		env := newManagerEnv(t, models)
		m := env.manager(t, rt, cat, nil, 1)
		if _, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil); err != nil {
			t.Fatal(err)
		}
		if err := m.Remove("bge-small-zh-v1.5"); err != nil {
			t.Fatal(err)
		}
		// Same files: the reinstall matches the record.
		info, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range info.Files {
			if f.Check != "matches record" {
				t.Errorf("reinstalled %s: check %q", f.Path, f.Check)
			}
		}
		if err := m.Remove("bge-small-zh-v1.5"); err != nil {
			t.Fatal(err)
		}
		// The hub now serves another tokenizer: refused.
		key := "Xenova/bge-small-zh-v1.5/main/tokenizer.json"
		env.hub.set(key, append(slices.Clone(env.hub.files[key]), ' '))
		if _, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil); err == nil || !strings.Contains(err.Error(), "was recorded at its first download") {
			t.Fatalf("changed file: %v", err)
		}
		if info, _ := m.Info("bge-small-zh-v1.5"); info.Installed {
			t.Error("installed despite the changed file")
		}
	})

	t.Run("corrupt model file", func(t *testing.T) {
		env := newManagerEnv(t, models)
		key := "Xenova/bge-small-zh-v1.5/main/onnx/model.onnx"
		env.hub.set(key, []byte("this is not an ONNX protobuf, just bytes"))
		m := env.manager(t, rt, cat, nil, 1)
		_, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil)
		if err == nil || !strings.Contains(err.Error(), "is not a usable ONNX model") {
			t.Fatalf("corrupt model: %v", err)
		}
		info, _ := m.Info("bge-small-zh-v1.5")
		if info.Installed || info.Partial != 0 {
			t.Errorf("corrupt model left: installed %v, partial %d", info.Installed, info.Partial)
		}
		if recs, _ := m.readRecords(); len(recs) != 0 {
			t.Errorf("hashes of a model that does not open were recorded: %v", recs)
		}
	})

	t.Run("mirror fallback", func(t *testing.T) {
		env := newManagerEnv(t, models)
		down := closedURL(t)
		m := env.manager(t, rt, cat, []string{down, env.hub.srv.URL}, 1)
		info, err := m.Install(context.Background(), "bge-small-zh-v1.5", nil)
		if err != nil {
			t.Fatal(err)
		}
		if info.Source != env.hub.srv.URL {
			t.Errorf("source %q, want the mirror %s", info.Source, env.hub.srv.URL)
		}
		// Every hub down: the error names each.
		m2 := env.manager(t, rt, cat, []string{down, closedURL(t)}, 2)
		_, err = m2.Install(context.Background(), "multilingual-e5-small", nil)
		if err == nil || !strings.Contains(err.Error(), "failed from every hub (2 rounds") || !strings.Contains(err.Error(), down) {
			t.Errorf("all hubs down: %v", err)
		}
		// An optional file missing from every hub is skipped.
		env.hub.mu.Lock()
		delete(env.hub.files, "intfloat/multilingual-e5-small/main/onnx/config.json")
		env.hub.mu.Unlock()
		info, err = env.manager(t, rt, cat, nil, 1).Install(context.Background(), "multilingual-e5-small", nil)
		if err != nil || len(info.Files) != 2 {
			t.Errorf("install without the optional config: %v, files %+v", err, info.Files)
		}
		// A hub without the repository (404) falls back too.
		empty := newFakeHub(t)
		m3 := env.manager(t, rt, cat, []string{empty.srv.URL, env.hub.srv.URL}, 1)
		if _, err := m3.Install(context.Background(), "chinese-clip-vit-base-patch16", nil); err != nil {
			t.Errorf("404 then mirror: %v", err)
		}
	})

	t.Run("cancelled download keeps the part", func(t *testing.T) {
		env := newManagerEnv(t, models)
		m := env.manager(t, rt, cat, nil, 1)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := m.Install(ctx, "bge-small-zh-v1.5", func(p Progress) {
			if p.File == "onnx/model.onnx" && p.Done > 0 {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled install: %v", err)
		}
		if info, _ := m.Info("bge-small-zh-v1.5"); info.Installed || info.Partial == 0 {
			t.Errorf("after cancel: %+v", info)
		}
	})

	t.Run("import", func(t *testing.T) {
		env := newManagerEnv(t, models)
		m := env.manager(t, rt, cat, nil, 1)
		// Flat layout, optional config absent.
		flat := t.TempDir()
		for _, f := range []string{"onnx/model.onnx", "onnx/sentencepiece.bpe.model"} {
			data, _ := os.ReadFile(filepath.Join(models.e5, filepath.FromSlash(f)))
			os.WriteFile(filepath.Join(flat, filepath.Base(f)), data, 0o644)
		}
		info, err := m.Import(context.Background(), "multilingual-e5-small", flat)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Installed || info.Source != "import:"+flat || len(info.Files) != 2 || info.Files[0].Check != "imported" {
			t.Errorf("imported: %+v", info)
		}
		e, err := m.Open("multilingual-e5-small")
		if err != nil {
			t.Fatal(err)
		}
		mustEmbed(t, e, denseTexts, Passage)
		closeEmbedder(t, e)
		if _, err := m.Import(context.Background(), "multilingual-e5-small", flat); err == nil || !strings.Contains(err.Error(), "already installed") {
			t.Errorf("second import: %v", err)
		}
		// Missing files are named.
		if _, err := m.Import(context.Background(), "bge-small-zh-v1.5", t.TempDir()); err == nil || !strings.Contains(err.Error(), "lacks onnx/model.onnx, tokenizer.json") {
			t.Errorf("empty dir: %v", err)
		}
		// The wrong model for the entry (bge's 512-dim model as CLIP): the ONNX check names it.
		wrong := t.TempDir()
		os.MkdirAll(filepath.Join(wrong, "onnx"), 0o755)
		data, _ := os.ReadFile(filepath.Join(models.bge, "onnx", "model.onnx"))
		os.WriteFile(filepath.Join(wrong, "onnx", "model.onnx"), data, 0o644)
		data, _ = os.ReadFile(filepath.Join(models.clip, "tokenizer.json"))
		os.WriteFile(filepath.Join(wrong, "tokenizer.json"), data, 0o644)
		if _, err := m.Import(context.Background(), "chinese-clip-vit-base-patch16", wrong); err == nil || !strings.Contains(err.Error(), "has outputs [last_hidden_state], want text_embeds") {
			t.Errorf("wrong model: %v", err)
		}
		if info, _ := m.Info("chinese-clip-vit-base-patch16"); info.Installed {
			t.Error("a model that failed validation is installed")
		}
		// A bad tokenizer is named too.
		os.WriteFile(filepath.Join(wrong, "tokenizer.json"), []byte("{"), 0o644)
		if _, err := m.Import(context.Background(), "bge-small-zh-v1.5", wrong); err == nil || !strings.Contains(err.Error(), "tokenizer") {
			t.Errorf("bad tokenizer: %v", err)
		}
	})
}
