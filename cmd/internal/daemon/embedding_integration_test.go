//go:build integration

package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/memtest"
	"github.com/hologramagent/hologram/memory/ocr"
)

// needTool is memtest.NeedAsset: fail under HOLOGRAM_CI=1, skip otherwise.
var needTool = memtest.NeedAsset

// rss is the process's resident set size (VmRSS) after a GC that returns freed memory.
func rss(t testing.TB) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// realShapeBGE writes a random-weight model with bge-small-zh-v1.5's real shapes (vocabulary
// 21128, hidden 512, 4 layers, intermediate 2048: a 95 MB file like the real export) and a
// WordPiece tokenizer into dir, as the model's files.
func realShapeBGE(t testing.TB, dir string) {
	t.Helper()
	if out, err := exec.Command("/usr/bin/python3", "-c", "import onnx, numpy").CombinedOutput(); err != nil {
		needTool(t, "python3-onnx missing: apt-get install python3-onnx python3-numpy", fmt.Errorf("%v: %s", err, out))
	}
	testdata := filepath.Join("..", "..", "..", "memory", "embed", "testdata")
	if err := os.MkdirAll(filepath.Join(dir, "onnx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/bin/python3", filepath.Join(testdata, "models", "gen.py"), "bert", "--out", filepath.Join(dir, "onnx", "model.onnx"),
		"--vocab", "21128", "--hidden", "512", "--layers", "4", "--heads", "8", "--intermediate", "2048").CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(testdata, "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(data, &tj); err != nil {
		t.Fatal(err)
	}
	vocab := tj["model"].(map[string]any)["vocab"].(map[string]any)
	for tok, id := range vocab {
		if id.(float64) >= 21128 {
			delete(vocab, tok)
		}
	}
	data, _ = json.Marshal(tj)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHomedRSSWithDenseModel starts homed's composition root (Start: the SQLite store, jieba,
// WordNet, ONNX Runtime, the model manager, the API on a socket), fills the memory with 300
// events, makes the bge-shaped model the active one and waits for the re-embedding, then loads
// OCR (memory/ocr) into the same ONNX Runtime and recognises an image. It reports the RSS at
// each step; the budget is ≤ 400 MB with both models loaded.
func TestHomedRSSWithDenseModel(t *testing.T) {
	ortPath, err := embed.ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		needTool(t, "ONNX Runtime library missing: run `make onnxruntime`", err)
	}
	ocrDir, err := ocr.ResolveModelsDir("", os.Getenv, "")
	if err != nil {
		needTool(t, "OCR models missing: run `make ocr-models`", err)
	}
	repo := filepath.Join(t.TempDir(), "bge")
	realShapeBGE(t, repo)

	tmp, err := os.MkdirTemp("", "hr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	env := func(k string) string {
		if k == embed.ORTLibraryEnv {
			return ortPath
		}
		return ""
	}
	cfg := config.Default(env)
	cfg.DataDir, cfg.Socket, cfg.KeyFile = filepath.Join(tmp, "data"), filepath.Join(tmp, "run", "k.sock"), filepath.Join(tmp, "key")
	cfg.LogLevel = "warn"
	cfg.Embedding.Threads = 2
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const mb = 1 << 20
	base := rss(t)
	d, err := Start(ctx, "homed", cfg, env, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	started := rss(t)
	c, err := client.Dial(client.Options{Socket: cfg.Socket, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var in []kernel.IngestEvent
	for i := range 300 {
		text := fmt.Sprintf("note %d: we talked about the budget, the trip and the garden", i)
		if i%2 == 1 {
			text = fmt.Sprintf("第%d条：我们聊了预算、旅行和花园", i)
		}
		in = append(in, kernel.IngestEvent{Session: "main", Content: text})
	}
	if _, err := d.Kernel.Ingest(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SearchMemory(ctx, client.MemoryQuery{Text: "预算 budget"}); err != nil {
		t.Fatal(err)
	}
	sparse := rss(t)
	if _, err := c.ImportModel(ctx, "bge-small-zh-v1.5", repo); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UseModel(ctx, "bge-small-zh-v1.5"); err != nil {
		t.Fatal(err)
	}
	if err := d.Kernel.SettleEmbedding(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := c.Embedding(ctx)
	if err != nil || st.Mode != client.EmbeddingDense || st.Reembed.Done != 300 {
		t.Fatalf("Embedding = %+v, %v", st, err)
	}
	if _, err := c.SearchMemory(ctx, client.MemoryQuery{Text: "预算 budget"}); err != nil {
		t.Fatal(err)
	}
	dense := rss(t)

	eng, err := ocr.New(embed.NewORT(ortPath, 2), ocrDir)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	img := image.NewRGBA(image.Rect(0, 0, 320, 64))
	for y := range 64 {
		for x := range 320 {
			img.Set(x, y, color.White)
		}
	}
	for x := 20; x < 300; x++ { // a bar of "ink"
		for y := 28; y < 36; y++ {
			img.Set(x, y, color.Black)
		}
	}
	if _, err := eng.Recognize(ctx, img); err != nil {
		t.Fatal(err)
	}
	withOCR := rss(t)
	t.Logf("RSS: test binary %.0f MB; homed started %.0f MB; 300 events stored, jieba and WordNet loaded %.0f MB; "+
		"bge-shaped model active, 300 events embedded %.0f MB; OCR loaded and run %.0f MB",
		float64(base)/mb, float64(started)/mb, float64(sparse)/mb, float64(dense)/mb, float64(withOCR)/mb)
	if withOCR > 400*mb && !raceEnabled() {
		t.Errorf("RSS with the dense model and OCR loaded is %.0f MB, over the 400 MB budget", float64(withOCR)/mb)
	}
}
