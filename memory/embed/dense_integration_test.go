//go:build integration

package embed

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hologramagent/hologram/memory/memtest"
)

// needTool is memtest.NeedAsset: fail under HOLOGRAM_CI=1, skip otherwise.
var needTool = memtest.NeedAsset

var denseRT struct {
	once sync.Once
	rt   *ORT
	err  error
}

// denseRuntime returns the process's ONNX Runtime (the checkout's build/onnxruntime, or
// $HOLOGRAM_ONNXRUNTIME, or an installed one), loaded.
func denseRuntime(t testing.TB) *ORT {
	t.Helper()
	path, err := ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		needTool(t, "ONNX Runtime library missing: run `make onnxruntime` or set "+ORTLibraryEnv, err)
	}
	denseRT.once.Do(func() {
		denseRT.rt = NewORT(path, 2)
		denseRT.err = denseRT.rt.Load()
	})
	if denseRT.err != nil {
		t.Fatalf("load ONNX Runtime %s: %v", path, denseRT.err)
	}
	return denseRT.rt
}

// onnxPython is Debian's python3, which has numpy and python3-onnx (another python3 on PATH
// may lack them).
const onnxPython = "/usr/bin/python3"

var onnxPythonCheck struct {
	once sync.Once
	err  error
}

// genModel runs testdata/models/gen.py with args.
func genModel(t testing.TB, args ...string) {
	t.Helper()
	onnxPythonCheck.once.Do(func() {
		out, err := exec.Command(onnxPython, "-c", "import onnx, numpy").CombinedOutput()
		if err != nil {
			onnxPythonCheck.err = fmt.Errorf("%v: %s", err, out)
		}
	})
	if onnxPythonCheck.err != nil {
		needTool(t, "python3-onnx missing: apt-get install python3-onnx python3-numpy (the tests run "+onnxPython+")", onnxPythonCheck.err)
	}
	gen, err := filepath.Abs(filepath.Join("testdata", "models", "gen.py"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(onnxPython, append([]string{gen}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gen.py %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func mkdirs(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// bgeVocab is the vocabulary size of the bge-shaped test model: the test tokenizer keeps the
// ids of all-MiniLM's vocabulary below it (the specials, single characters, common words).
const bgeVocab = 3000

// writeBGETokenizer writes all-MiniLM's tokenizer.json cut to the ids below bgeVocab.
func writeBGETokenizer(t testing.TB, path string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "wordpiece", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(data, &tj); err != nil {
		t.Fatal(err)
	}
	model := tj["model"].(map[string]any)
	vocab := model["vocab"].(map[string]any)
	for tok, id := range vocab {
		if id.(float64) >= bgeVocab {
			delete(vocab, tok)
		}
	}
	if data, err = json.Marshal(tj); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testModels are the generated models, laid out as their hub repositories.
type testModels struct {
	bge, e5, clip, whisper string // directories
}

// makeTestModels generates, into dir, a bge-small-zh-shaped model (hidden 512, 1 layer), a
// multilingual-e5-small-shaped one (hidden 384, 1 layer, the trained SentencePiece model of
// testdata/unigram) and the CLIP-like two-tower model, each with its tokenizer and a config.
func makeTestModels(t testing.TB, dir string) testModels {
	t.Helper()
	m := testModels{bge: filepath.Join(dir, "bge"), e5: filepath.Join(dir, "e5"), clip: filepath.Join(dir, "clip"), whisper: filepath.Join(dir, "whisper")}
	mkdirs(t, m.bge+"/onnx", m.e5+"/onnx", m.clip+"/onnx")
	genModel(t, "bert", "--out", m.bge+"/onnx/model.onnx", "--vocab", strconv.Itoa(bgeVocab), "--hidden", "512",
		"--layers", "1", "--heads", "8", "--intermediate", "512", "--seed", "1")
	writeBGETokenizer(t, m.bge+"/tokenizer.json")
	spm, err := os.ReadFile(filepath.Join("testdata", "unigram", "nfkc.model"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := ParseSentencePiece(spm, SentencePieceOptions{Fairseq: true})
	if err != nil {
		t.Fatal(err)
	}
	genModel(t, "bert", "--out", m.e5+"/onnx/model.onnx", "--vocab", strconv.Itoa(len(u.scores)+1), "--hidden", "384",
		"--layers", "1", "--heads", "12", "--intermediate", "384", "--seed", "2")
	if err := os.WriteFile(m.e5+"/onnx/sentencepiece.bpe.model", spm, 0o644); err != nil {
		t.Fatal(err)
	}
	genModel(t, "clip", "--out", m.clip+"/onnx/model.onnx", "--tokenizer", m.clip+"/tokenizer.json")
	// The Whisper-shaped model of memory/stt's tests (an encoder, a decoder, its tokenizer).
	gen, err := filepath.Abs(filepath.Join("..", "stt", "testdata", "gen.py"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(onnxPython, gen, "whisper", "--dir", m.whisper).CombinedOutput(); err != nil {
		t.Fatalf("stt gen.py whisper: %v\n%s", err, out)
	}
	for _, p := range []string{m.bge + "/config.json", m.e5 + "/onnx/config.json", m.clip + "/config.json", m.clip + "/preprocessor_config.json"} {
		if err := os.WriteFile(p, []byte(`{"generated_for":"tests"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func bgeConfig(t testing.TB, dir string) TextModelConfig {
	t.Helper()
	tok, err := LoadWordPiece(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return TextModelConfig{ID: "bge-test", ModelPath: filepath.Join(dir, "onnx", "model.onnx"), Tokenizer: tok,
		Pooling: PoolCLS, Normalize: true, MaxTokens: 512}
}

var denseTexts = []string{
	"hello",
	"记忆是思考的残留。",
	"The quick brown fox jumps over the lazy dog, again and again and again.",
	"",
	"mixed 中文 and English text with numbers 123 456",
	strings.Repeat("a long memory of many words ", 20),
	"🥰 emoji",
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

func vecNorm(v []float32) float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return math.Sqrt(n)
}

func mustEmbed(t testing.TB, e Embedder, texts []string, role Role) [][]float32 {
	t.Helper()
	vecs, err := e.EmbedTexts(context.Background(), texts, role)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != e.Space().Dim {
			t.Fatalf("vector %d has %d dims, want %d", i, len(v), e.Space().Dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("vector %d has %v", i, x)
			}
		}
	}
	return vecs
}

func closeEmbedder(t testing.TB, e Embedder) {
	t.Helper()
	c, ok := e.(interface{ Close() error })
	if !ok {
		t.Fatalf("%T has no Close", e)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}

// TestDenseModels runs the dense embedder and the model manager on generated models; they are
// generated once (python3-onnx) for all subtests.
func TestDenseModels(t *testing.T) {
	rt := denseRuntime(t)
	models := makeTestModels(t, t.TempDir())
	t.Run("text embedder", func(t *testing.T) { testTextEmbedder(t, rt, models) })
	t.Run("image embedder", func(t *testing.T) { testImageEmbedder(t, rt, models) })
	t.Run("manager", func(t *testing.T) { testManager(t, rt, models) })
}

func testTextEmbedder(t *testing.T, rt *ORT, models testModels) {
	cfg := bgeConfig(t, models.bge)
	e, err := NewTextEmbedder(rt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sum, err := fileSHA256(cfg.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	if s := e.Space(); s.Dim != 512 || s.Model != "bge-test" || s.SHA256 != sum || s.Pooling != PoolCLS || !s.Normalize || s.MaxTokens != 512 {
		t.Errorf("Space = %+v", s)
	}

	t.Run("batching and padding do not change vectors", func(t *testing.T) {
		all := mustEmbed(t, e, denseTexts, Passage)
		one := cfg
		one.BatchSize = 1
		single, err := NewTextEmbedder(rt, one)
		if err != nil {
			t.Fatal(err)
		}
		defer single.Close()
		capped := cfg
		capped.BatchTokens = 64 // splits the batch by padded size
		small, err := NewTextEmbedder(rt, capped)
		if err != nil {
			t.Fatal(err)
		}
		defer small.Close()
		split := mustEmbed(t, small, denseTexts, Passage)
		for i, text := range denseTexts {
			alone := mustEmbed(t, single, []string{text}, Passage)[0]
			if d := maxAbsDiff(alone, all[i]); d > 1e-4 {
				t.Errorf("%q alone and in a padded batch differ by %g", text, d)
			}
			if d := maxAbsDiff(split[i], all[i]); d > 1e-4 {
				t.Errorf("%q in a token-capped batch and in one batch differ by %g", text, d)
			}
			if n := vecNorm(all[i]); math.Abs(n-1) > 1e-5 {
				t.Errorf("%q: norm %v, want 1", text, n)
			}
		}
		if d := maxAbsDiff(all[0], all[1]); d < 1e-3 {
			t.Errorf("different texts embed the same (diff %g)", d)
		}
	})

	t.Run("pooling and normalisation", func(t *testing.T) {
		variants := map[string]TextModelConfig{}
		for _, p := range []Pooling{PoolCLS, PoolMean} {
			for _, n := range []bool{true, false} {
				c := cfg
				c.Pooling, c.Normalize = p, n
				variants[fmt.Sprintf("%s/%v", p, n)] = c
			}
		}
		vecs := map[string][][]float32{}
		for name, c := range variants {
			ve, err := NewTextEmbedder(rt, c)
			if err != nil {
				t.Fatal(err)
			}
			vecs[name] = mustEmbed(t, ve, denseTexts[:3], Passage)
			ve.Close()
			for i, v := range vecs[name] {
				n := vecNorm(v)
				if c.Normalize && math.Abs(n-1) > 1e-5 || !c.Normalize && math.Abs(n-1) < 1e-3 {
					t.Errorf("%s text %d: norm %v", name, i, n)
				}
			}
			if ve.Space().Fingerprint() == e.Space().Fingerprint() && name != "cls/true" {
				t.Errorf("%s shares the fingerprint of cls/true", name)
			}
		}
		for i := range 3 {
			if d := maxAbsDiff(vecs["cls/true"][i], vecs["mean/true"][i]); d < 1e-3 {
				t.Errorf("text %d: CLS and mean pooling agree (diff %g)", i, d)
			}
			// Normalising is a scaling: same direction.
			if c := Cosine(vecs["mean/true"][i], vecs["mean/false"][i]); c < 0.99999 {
				t.Errorf("text %d: normalised and raw mean vectors have cosine %v", i, c)
			}
		}
	})

	t.Run("role prefixes", func(t *testing.T) {
		pre := cfg
		pre.QueryPrefix, pre.PassagePrefix = "query: ", "passage: "
		pe, err := NewTextEmbedder(rt, pre)
		if err != nil {
			t.Fatal(err)
		}
		defer pe.Close()
		texts := []string{"how much protein", "记忆"}
		q := mustEmbed(t, pe, texts, Query)
		p := mustEmbed(t, pe, texts, Passage)
		byHand := mustEmbed(t, e, []string{"query: how much protein", "query: 记忆", "passage: how much protein", "passage: 记忆"}, Passage)
		for i := range texts {
			if d := maxAbsDiff(q[i], byHand[i]); d > 1e-5 {
				t.Errorf("Query(%q) is not the embedding of the prefixed text (diff %g)", texts[i], d)
			}
			if d := maxAbsDiff(p[i], byHand[2+i]); d > 1e-5 {
				t.Errorf("Passage(%q) is not the embedding of the prefixed text (diff %g)", texts[i], d)
			}
			if d := maxAbsDiff(q[i], p[i]); d < 1e-4 {
				t.Errorf("%q: query and passage embed the same", texts[i])
			}
		}
		if _, err := pe.EmbedTexts(context.Background(), texts, Role(7)); err == nil || !strings.Contains(err.Error(), "invalid role 7") {
			t.Errorf("bad role: %v", err)
		}
	})

	t.Run("truncation", func(t *testing.T) {
		short := cfg
		short.MaxTokens = 16
		se, err := NewTextEmbedder(rt, short)
		if err != nil {
			t.Fatal(err)
		}
		defer se.Close()
		head := strings.Repeat("memory recall ", 10)
		vecs := mustEmbed(t, se, []string{head + "tail one", head + "something else entirely " + strings.Repeat("x ", 5000)}, Passage)
		if d := maxAbsDiff(vecs[0], vecs[1]); d > 1e-5 {
			t.Errorf("texts equal in their first 14 tokens embed differently under MaxTokens 16 (diff %g)", d)
		}
	})

	t.Run("empty input, cancellation and close", func(t *testing.T) {
		ce, err := NewTextEmbedder(rt, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := ce.EmbedTexts(context.Background(), nil, Query); err != nil || len(v) != 0 {
			t.Errorf("no texts: %v, %v", v, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := ce.EmbedTexts(ctx, denseTexts, Query); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
		bare := cfg
		bare.Tokenizer = loadTestUnigram(t, "nfkc", SentencePieceOptions{}) // no <s> </s>
		be, err := NewTextEmbedder(rt, bare)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := be.EmbedTexts(context.Background(), []string{"ok", ""}, Query); err == nil || !strings.Contains(err.Error(), "text 1 has no tokens") {
			t.Errorf("empty text without special tokens: %v", err)
		}
		be.Close()
		if err := ce.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := ce.EmbedTexts(context.Background(), denseTexts, Query); !errors.Is(err, ErrEmbedderClosed) {
			t.Errorf("after Close: %v", err)
		}
		if err := ce.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})

	t.Run("concurrent use", func(t *testing.T) {
		want := mustEmbed(t, e, denseTexts, Query)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				got, err := e.EmbedTexts(context.Background(), denseTexts[g:], Query)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if d := maxAbsDiff(got[i], want[g+i]); d > 1e-4 {
						t.Errorf("goroutine %d text %d differs by %g", g, i, d)
					}
				}
			})
		}
		wg.Wait()
	})

	t.Run("model does not match the config", func(t *testing.T) {
		tests := []struct {
			name   string
			change func(*TextModelConfig)
			want   string
		}{
			{"dim", func(c *TextModelConfig) { c.Dim = 384 }, "output last_hidden_state has dim 512, want 384"},
			{"output", func(c *TextModelConfig) { c.Output = "sentence_embedding" }, "has outputs [last_hidden_state], want sentence_embedding"},
			{"rank", func(c *TextModelConfig) { c.Pooling = PoolNone; c.Output = "last_hidden_state" }, "want float [batch, dim]"},
			{"image model as text", func(c *TextModelConfig) { c.ModelPath = filepath.Join(models.clip, "onnx", "model.onnx") }, "has outputs [text_embeds image_embeds], want last_hidden_state"},
			{"not onnx", func(c *TextModelConfig) { c.ModelPath = filepath.Join(models.bge, "tokenizer.json") }, "is not a usable ONNX model"},
			{"missing", func(c *TextModelConfig) { c.ModelPath = filepath.Join(models.bge, "nope.onnx") }, "is not a usable ONNX model"},
		}
		for _, tt := range tests {
			c := cfg
			tt.change(&c)
			if _, err := NewTextEmbedder(rt, c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
			}
		}
	})
}

// colourImage is a w×h image of one colour with a faint diagonal gradient (not a flat test
// pattern), for the CLIP-like model.
func colourImage(c color.RGBA, w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			d := uint8((x + y) % 16)
			px := c
			px.R, px.G, px.B = max(px.R, d)-d/2, max(px.G, d)-d/2, max(px.B, d)-d/2
			img.SetRGBA(x, y, px)
		}
	}
	return img
}

func testImageEmbedder(t *testing.T, rt *ORT, models testModels) {
	tok, err := LoadWordPiece(filepath.Join(models.clip, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewImageEmbedder(rt, ImageModelConfig{Text: TextModelConfig{
		ID: "clip-test", ModelPath: filepath.Join(models.clip, "onnx", "model.onnx"), Tokenizer: tok,
		Pooling: PoolNone, Normalize: true, MaxTokens: 52, Dim: 512,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	checkColourRetrieval(t, e)
	if _, err := e.EmbedImages(context.Background(), []image.Image{image.NewRGBA(image.Rect(0, 0, 0, 0))}); err == nil || !strings.Contains(err.Error(), "image 0 is empty") {
		t.Errorf("empty image: %v", err)
	}
	if v, err := e.EmbedImages(context.Background(), nil); err != nil || len(v) != 0 {
		t.Errorf("no images: %v %v", v, err)
	}
}

// checkColourRetrieval embeds three colour images and three texts naming the colours (Chinese
// and English) and checks that each text's nearest image, and each image's nearest text, is
// the matching one.
func checkColourRetrieval(t *testing.T, e ImageEmbedder) {
	t.Helper()
	imgs := []image.Image{
		colourImage(color.RGBA{230, 20, 25, 255}, 320, 240), // red, landscape
		colourImage(color.RGBA{20, 200, 40, 255}, 200, 260), // green, portrait
		colourImage(color.RGBA{25, 40, 235, 255}, 224, 224), // blue
	}
	texts := []string{"一张红色的花的照片", "绿草地", "a photo of the blue sky"}
	iv, err := e.EmbedImages(context.Background(), imgs)
	if err != nil {
		t.Fatal(err)
	}
	tv := mustEmbed(t, e, texts, Query)
	for i := range 3 {
		if n := vecNorm(iv[i]); math.Abs(n-1) > 1e-5 {
			t.Errorf("image %d: norm %v", i, n)
		}
		bestImg, bestText := -1, -1
		var si, st float32 = -2, -2
		for j := range 3 {
			if c := Cosine(tv[i], iv[j]); c > si {
				si, bestImg = c, j
			}
			if c := Cosine(iv[i], tv[j]); c > st {
				st, bestText = c, j
			}
		}
		if bestImg != i || bestText != i {
			t.Errorf("%q: nearest image %d (cos %.3f), image %d's nearest text %d; want %d", texts[i], bestImg, si, i, bestText, i)
		}
		if si < 0.9 {
			t.Errorf("%q and its image have cosine %.3f, want ≥ 0.9", texts[i], si)
		}
	}
}

// rssBytes is the process's resident set size (VmRSS).
func rssBytes(t testing.TB) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}
