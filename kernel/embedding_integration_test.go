//go:build integration

package kernel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/memtest"
)

// needTool is memtest.NeedAsset: fail under HOLOGRAM_CI=1, skip otherwise.
var needTool = memtest.NeedAsset

var testORT struct {
	once sync.Once
	rt   *embed.ORT
	err  error
}

// testRuntime returns the process's ONNX Runtime (the checkout's build/onnxruntime, or
// $HOLOGRAM_ONNXRUNTIME), loaded once per test binary.
func testRuntime(t testing.TB) *embed.ORT {
	t.Helper()
	path, err := embed.ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		needTool(t, "ONNX Runtime library missing: run `make onnxruntime` or set "+embed.ORTLibraryEnv, err)
	}
	testORT.once.Do(func() {
		testORT.rt = embed.NewORT(path, 2)
		testORT.err = testORT.rt.Load()
	})
	if testORT.err != nil {
		t.Fatalf("load ONNX Runtime %s: %v", path, testORT.err)
	}
	return testORT.rt
}

// onnxPython is Debian's python3, which has numpy and python3-onnx.
const onnxPython = "/usr/bin/python3"

// embedTestdata is memory/embed's testdata: the model generator and the WordPiece vocabulary.
var embedTestdata = filepath.Join("..", "memory", "embed", "testdata")

func genModel(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(onnxPython, "-c", "import onnx, numpy").CombinedOutput(); err != nil {
		needTool(t, "python3-onnx missing: apt-get install python3-onnx python3-numpy (the tests run "+onnxPython+")", fmt.Errorf("%v: %s", err, out))
	}
	gen, err := filepath.Abs(filepath.Join(embedTestdata, "models", "gen.py"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(onnxPython, append([]string{gen}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("gen.py %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// bgeVocab is the vocabulary of the bge-shaped test model: the WordPiece tokenizer is cut to
// the ids below it.
const bgeVocab = 3000

// testModels generates, laid out as their hub repositories, a bge-small-zh-shaped model
// (random weights, hidden 512) and the designed CLIP-like model of gen.py, in which a colour
// word and its synonyms ("green", "grass", "绿", "草"; "blue", "sky", "蓝", "天"; "red", "红")
// embed alike, so recall of a paraphrase can be tested for real. Both fit the catalogue's
// entries (bge-small-zh-v1.5, chinese-clip-vit-base-patch16).
func testModels(t testing.TB) (bge, clip string) {
	t.Helper()
	dir := t.TempDir()
	bge, clip = filepath.Join(dir, "bge"), filepath.Join(dir, "clip")
	if err := os.MkdirAll(filepath.Join(bge, "onnx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(clip, "onnx"), 0o755); err != nil {
		t.Fatal(err)
	}
	genModel(t, "bert", "--out", filepath.Join(bge, "onnx", "model.onnx"), "--vocab", fmt.Sprint(bgeVocab), "--hidden", "512",
		"--layers", "1", "--heads", "8", "--intermediate", "512", "--seed", "1")
	data, err := os.ReadFile(filepath.Join(embedTestdata, "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(data, &tj); err != nil {
		t.Fatal(err)
	}
	vocab := tj["model"].(map[string]any)["vocab"].(map[string]any)
	for tok, id := range vocab {
		if id.(float64) >= bgeVocab {
			delete(vocab, tok)
		}
	}
	if data, err = json.Marshal(tj); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bge, "tokenizer.json"), data)
	genModel(t, "clip", "--out", filepath.Join(clip, "onnx", "model.onnx"), "--tokenizer", filepath.Join(clip, "tokenizer.json"))
	for _, p := range []string{filepath.Join(bge, "config.json"), filepath.Join(clip, "config.json"), filepath.Join(clip, "preprocessor_config.json")} {
		writeFile(t, p, []byte(`{"generated_for":"tests"}`+"\n"))
	}
	return bge, clip
}

// testHub serves repository directories as a model hub does (GET /{repo}/resolve/main/{path},
// with ranges) and records the Range header of every request.
type testHub struct {
	*httptest.Server
	mu     sync.Mutex
	repos  map[string]string // repo → directory
	ranges map[string][]string
}

func newTestHub(t testing.TB, repos map[string]string) *testHub {
	h := &testHub{repos: repos, ranges: map[string][]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/resolve/main/")
		dir, known := h.repos[repo]
		if !ok || !known {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		h.ranges[repo+"/"+rest] = append(h.ranges[repo+"/"+rest], r.Header.Get("Range"))
		h.mu.Unlock()
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rest)))
		if err != nil {
			http.Error(w, "Entry not found", http.StatusNotFound)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *testHub) rangesOf(key string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ranges[key]...)
}

// tickClock advances one second per call: the kernel's progress throttle then lets every
// download report through.
func tickClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

const (
	clipID = "chinese-clip-vit-base-patch16"
	bgeID  = "bge-small-zh-v1.5"
)

var denseEvents = []string{
	"we had a picnic on the grass by the river", // green, in the colour model
	"the train to the city was late this morning",
	"my sister started a new job at the bank",
	"I finished reading the novel about the war",
	"the plumber fixed the kitchen sink",
	"we need to buy coffee and bread",
	"the meeting moved to thursday afternoon",
	"the cat slept on the sofa all day",
	"the concert tickets sold out in an hour",
	"the sky over the mountains was clear", // blue
	"remember to call the dentist on monday",
	"he repaired the bicycle chain himself",
	"那片草地怎么样？", // "how was that lawn?": the last user message, the window's input (草: grass)
}

func search(t *testing.T, c client.Service, text string) []client.MemoryHit {
	t.Helper()
	hits, err := c.SearchMemory(context.Background(), client.MemoryQuery{Text: text, K: 5})
	if err != nil {
		t.Fatalf("SearchMemory(%q): %v", text, err)
	}
	return hits
}

func firstHit(hits []client.MemoryHit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Content
}

// TestDenseEndToEnd goes through the real paths: the generated models are served by a local
// hub, installed over the HTTP API (progress streamed), an interrupted install resumes, the
// model is used, the events are re-embedded in the background, recall and the window rank a
// paraphrase that sparse recall misses, new events are embedded as they arrive, switching the
// model re-embeds into the new space alone, and a corrupt model file leaves a restarted kernel
// in sparse mode with a clear reason while recall goes on.
func TestDenseEndToEnd(t *testing.T) {
	rt := testRuntime(t)
	bgeDir, clipDir := testModels(t)
	hub := newTestHub(t, map[string]string{"Xenova/" + bgeID: bgeDir, "Xenova/" + clipID: clipDir})
	dir := t.TempDir()
	models, err := embed.NewManager(embed.ManagerOptions{Dir: filepath.Join(dir, "data", "models"), Hubs: []string{hub.URL}, Runtime: rt,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	deps := kernel.EmbeddingDeps{Models: models, Runtime: rt}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := newEmbKernel(t, embOptions{Dir: dir, Deps: deps, Clock: tickClock(), Recent: 2})
	c := serveHTTP(t, k.Kernel)
	if _, err := c.CreateSession(ctx, client.Session{ID: "chat", Channel: "qq", Partner: "ann"}); err != nil {
		t.Fatal(err)
	}
	var in []kernel.IngestEvent
	for _, text := range denseEvents {
		in = append(in, kernel.IngestEvent{Session: "chat", Content: text})
	}
	if _, err := k.Ingest(ctx, in); err != nil {
		t.Fatal(err)
	}

	// Sparse: no model chosen, and the paraphrase is not found.
	st, err := c.Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingSparse || !strings.Contains(st.Reason, "no dense model chosen") {
		t.Fatalf("Embedding before any model = %+v, %v", st, err)
	}
	if got := firstHit(search(t, c, "green")); got == denseEvents[0] {
		t.Fatalf("sparse recall already finds the paraphrase; the test proves nothing")
	}

	// An install cancelled part-way keeps its part, and the next one resumes it.
	const onnxKey = "Xenova/" + bgeID + "/onnx/model.onnx"
	icx, stop := context.WithCancel(ctx)
	_, err = k.Service().InstallModel(icx, bgeID, func(p client.ModelProgress) {
		if p.File == "onnx/model.onnx" && p.Done >= 256<<10 {
			stop()
		}
	})
	stop()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled install = %v, want context.Canceled", err)
	}
	ms, err := c.EmbeddingModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	partial := modelByID(t, ms, bgeID)
	if partial.Installed || partial.Partial < 256<<10 {
		t.Fatalf("after a cancelled install: %+v; want a partial download kept", partial)
	}

	// Install over HTTP, progress streamed.
	for _, id := range []string{clipID, bgeID} {
		var seen []client.ModelProgress
		m, err := c.InstallModel(ctx, id, func(p client.ModelProgress) { seen = append(seen, p) })
		if err != nil {
			t.Fatalf("InstallModel(%s): %v", id, err)
		}
		if !m.Installed || m.Source != hub.URL || len(m.Files) < 2 || m.Files[0].SHA256 == "" || m.Files[0].Check != "recorded" {
			t.Fatalf("installed %s: %+v", id, m)
		}
		if len(seen) == 0 || seen[len(seen)-1].Done != seen[len(seen)-1].Total {
			t.Fatalf("progress of %s: %+v", id, seen)
		}
	}
	if rs := hub.rangesOf(onnxKey); len(rs) != 2 || rs[0] != "" || !strings.HasPrefix(rs[1], "bytes=") || rs[1] == "bytes=0-" {
		t.Fatalf("requests for %s had ranges %q; want the second to resume the first", onnxKey, rs)
	}

	// Use the colour model: re-embedding runs in the background, then the paraphrase ranks.
	st, err = c.UseModel(ctx, clipID)
	if err != nil || st.Mode != client.EmbeddingDense || st.Model != clipID || !strings.HasPrefix(st.Space, clipID+":") {
		t.Fatalf("UseModel(%s) = %+v, %v", clipID, st, err)
	}
	clipSpace := st.Space
	settle(t, k)
	checkSpaces(t, k, clipSpace)
	st, _ = c.Embedding(ctx)
	if st.Reembed.Done != len(denseEvents) || st.Reembed.Total != len(denseEvents) || st.Reembed.Running || st.Runtime == "" {
		t.Fatalf("Embedding after re-embedding = %+v", st)
	}
	for _, q := range []struct{ query, want string }{{"green", denseEvents[0]}, {"something blue", denseEvents[9]}} {
		hits := search(t, c, q.query)
		if firstHit(hits) != q.want || !strings.Contains(hits[0].Reason, "dense") {
			t.Fatalf("dense recall of %q = %+v; want %q first, by its dense score", q.query, hits, q.want)
		}
	}
	w, err := c.Window(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	var kept *client.WindowItem
	for i := range w.Items {
		if w.Items[i].Content == denseEvents[0] {
			kept = &w.Items[i]
		}
	}
	if kept == nil || kept.Source != "scored" || !strings.Contains(kept.Reason, "dense 1.00") {
		t.Fatalf("the window for %q does not keep the paraphrase by its dense score: %+v", w.Input, w.Items)
	}

	// A new event is embedded as it arrives (here: across languages, 红 for red).
	if _, err := k.Ingest(ctx, []kernel.IngestEvent{{Session: "chat", Content: "the red apple was sweet"}}); err != nil {
		t.Fatal(err)
	}
	settle(t, k)
	if got := firstHit(search(t, c, "红")); got != "the red apple was sweet" {
		t.Fatalf("dense recall of a new event = %q", got)
	}

	// Switch models: everything is re-embedded into the new space, the old space is deleted.
	if st, err = c.UseModel(ctx, bgeID); err != nil || st.Model != bgeID || st.Space == clipSpace {
		t.Fatalf("UseModel(%s) = %+v, %v", bgeID, st, err)
	}
	settle(t, k)
	checkSpaces(t, k, st.Space)
	if err := c.RemoveModel(ctx, bgeID); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("RemoveModel of the active model = %v", err)
	}
	if err := c.RemoveModel(ctx, clipID); err != nil {
		t.Fatalf("RemoveModel(%s): %v", clipID, err)
	}
	if ms, err := c.EmbeddingModels(ctx); err != nil || modelByID(t, ms, clipID).Installed || !modelByID(t, ms, bgeID).Active {
		t.Fatalf("models after removing %s: %+v, %v", clipID, ms, err)
	}

	// A corrupt model file: the restarted kernel stays sparse, says why, and recall goes on.
	onnx := filepath.Join(dir, "data", "models", bgeID, "files", "onnx", "model.onnx")
	if err := os.WriteFile(onnx, []byte("this is not an ONNX model"), 0o644); err != nil {
		t.Fatal(err)
	}
	k.Close()
	k.Store.Close()
	k2 := newEmbKernel(t, embOptions{Dir: dir, Deps: deps, Recent: 2})
	c2 := serveHTTP(t, k2.Kernel)
	settle(t, k2)
	st, err = c2.Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingSparse || st.Model != bgeID || !strings.Contains(st.Reason, "model "+bgeID+" failed to load") {
		t.Fatalf("Embedding with a corrupt model = %+v, %v", st, err)
	}
	t.Logf("the status says: %s", st.Reason)
	if got := firstHit(search(t, c2, "apple")); got != "the red apple was sweet" {
		t.Fatalf("sparse recall with a corrupt model = %q", got)
	}
	if _, err := c2.UseModel(ctx, bgeID); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "failed to load") {
		t.Fatalf("UseModel of a corrupt model = %v", err)
	}
	if st, err := c2.UseModel(ctx, ""); err != nil || st.Mode != client.EmbeddingSparse || st.Model != "" {
		t.Fatalf(`UseModel("") = %+v, %v`, st, err)
	}
	if err := c2.RemoveModel(ctx, bgeID); err != nil {
		t.Fatalf("RemoveModel of the corrupt model: %v", err)
	}
}

func modelByID(t *testing.T, ms []client.EmbeddingModel, id string) client.EmbeddingModel {
	t.Helper()
	for _, m := range ms {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("model %s not listed in %+v", id, ms)
	return client.EmbeddingModel{}
}

func settle(t testing.TB, k embKernel) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := k.SettleEmbedding(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkSpaces: every event has a vector in space, and no other space has any.
func checkSpaces(t *testing.T, k embKernel, space string) {
	t.Helper()
	ctx := context.Background()
	spaces, err := k.Store.VectorSpaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	have, total, err := k.Store.VectorCounts(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if len(spaces) != 1 || spaces[space] != total || have != total || total == 0 {
		t.Fatalf("vector spaces %v with %d events; want only %s, every event in it", spaces, total, space)
	}
	var _ memory.VectorStore = k.Store
}
