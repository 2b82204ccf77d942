//go:build integration

package ocr

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/math/f64"
)

// accuracyFonts are the two fonts each language is rendered in.
var accuracyFonts = map[string][2]testFont{
	"English": {dejaVuSans, dejaVuSerif},
	"Chinese": {notoSansSC, notoSerifSC},
}

// sizes are the pixel sizes the lines cycle through.
var sizes = []float64{14, 16, 18, 20, 22, 24, 15, 17}

// TestAccuracy renders every sentence of each language in its two fonts at 14–24 px, reads the
// pages back and requires 1 − CER ≥ 95 % for English and ≥ 90 % for Chinese (Levenshtein
// over each language's whole text, after normalise).
func TestAccuracy(t *testing.T) {
	e := sharedEngine(t)
	for _, tt := range []struct {
		lang       string
		lines      []string
		dropSpaces bool
		min        float64
	}{
		{"English", englishLines, false, 0.95},
		{"Chinese", chineseLines, true, 0.90},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			var edits, total, lines int
			start := time.Now()
			for _, f := range accuracyFonts[tt.lang] {
				var fe, ft int
				for chunk := 0; chunk < len(tt.lines); chunk += 8 {
					part := tt.lines[chunk:min(chunk+8, len(tt.lines))]
					c := page(t, f, part, sizes[chunk/8%2*4:])
					res, err := e.Recognize(context.Background(), c.img)
					if err != nil {
						t.Fatalf("%s: Recognize: %v", f.name, err)
					}
					ed, to, report := score(c.placed, res.Lines, tt.dropSpaces)
					fe, ft = fe+ed, ft+to
					for _, r := range report {
						t.Logf("%s: %s", f.name, r)
					}
					lines += len(part)
				}
				t.Logf("%s %s: accuracy %.2f%% (%d edits / %d chars)", tt.lang, f.name, 100*(1-float64(fe)/float64(ft)), fe, ft)
				edits, total = edits+fe, total+ft
			}
			acc := 1 - float64(edits)/float64(total)
			t.Logf("%s: accuracy %.2f%% over %d lines, %d chars (%v)", tt.lang, 100*acc, lines, total, time.Since(start).Round(time.Millisecond))
			if acc < tt.min {
				t.Errorf("%s accuracy %.2f%%, want ≥ %.0f%%", tt.lang, 100*acc, 100*tt.min)
			}
		})
	}
}

// screenshot renders a 1280×800 window of a chat app: a dark title bar, a sidebar, chat
// messages in English and Chinese, a status line.
func screenshot(t testing.TB) *canvas {
	ui := func(px float64) font.Face { return dejaVuSans.face(t, px) }
	zh := func(px float64) font.Face { return notoSansSC.face(t, px) }
	c := newCanvas(1280, 800, color.White)
	c.fill(image.Rect(0, 0, 1280, 40), color.RGBA{0x2b, 0x2d, 0x31, 0xff})
	c.text(zh(16), color.RGBA{0xf0, 0xf0, 0xf0, 0xff}, 20, 11, "HologramAgent 记忆助手")
	c.fill(image.Rect(0, 40, 250, 800), color.RGBA{0xee, 0xf0, 0xf3, 0xff})
	side := []struct {
		zh   bool
		text string
	}{
		{false, "Conversations"}, {true, "今天的待办事项"}, {false, "Project Apollo"},
		{true, "家庭旅行计划"}, {false, "Reading notes"}, {true, "设置与插件"},
	}
	for i, s := range side {
		f := ui(15)
		if s.zh {
			f = zh(15)
		}
		c.text(f, color.RGBA{0x30, 0x33, 0x38, 0xff}, 24, 70+i*44, s.text)
	}
	msgs := []struct {
		zh   bool
		text string
	}{
		{false, "You: Can you summarise the meeting notes from Tuesday?"},
		{true, "助手：周二的会议决定下个月发布新版本。"},
		{false, "The release checklist has 14 items; 9 are done."},
		{true, "我已经把剩下的任务分配给了小王和小李。"},
		{false, "Reminder: renew the TLS certificate before May 3."},
		{true, "需要我明天早上提醒你吗？"},
		{false, "Yes please, at 8:30 would be perfect."},
	}
	for i, m := range msgs {
		f := ui(16)
		if m.zh {
			f = zh(16)
		}
		c.text(f, color.RGBA{0x1e, 0x1f, 0x22, 0xff}, 290, 80+i*56, m.text)
	}
	c.fill(image.Rect(250, 740, 1280, 800), color.RGBA{0xf7, 0xf7, 0xf9, 0xff})
	c.text(ui(14), color.RGBA{0x60, 0x64, 0x6b, 0xff}, 290, 762, "Type a message and press Enter to send")
	return c
}

// TestScreenshot reads a 1280×800 app-like window with mixed English and Chinese text.
func TestScreenshot(t *testing.T) {
	e := sharedEngine(t)
	c := screenshot(t)
	start := time.Now()
	res, err := e.Recognize(context.Background(), c.img)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	edits, total, report := score(c.placed, res.Lines, true)
	for _, r := range report {
		t.Log(r)
	}
	acc := 1 - float64(edits)/float64(total)
	t.Logf("screenshot: %d lines, accuracy %.2f%% (%d edits / %d chars, spaces ignored), %v", len(res.Lines), 100*acc, edits, total, took.Round(time.Millisecond))
	if acc < 0.9 {
		t.Errorf("screenshot accuracy %.2f%%, want ≥ 90%%\n%s", 100*acc, res.Text)
	}
	if want := len(c.placed); len(res.Lines) < want-1 {
		t.Errorf("read %d lines of %d:\n%s", len(res.Lines), want, res.Text)
	}
}

// TestSmallTextFullHD reads 12 px text (English and Chinese) spread over a 1920×1080 screen:
// with PaddleOCR's 960 px detection limit it read 21 % of it (9 of 20 lines), 98.7 % at 1920.
func TestSmallTextFullHD(t *testing.T) {
	e := sharedEngine(t)
	c := newCanvas(1920, 1080, color.White)
	ink := color.RGBA{0x20, 0x20, 0x20, 0xff}
	for i, s := range englishLines[12:24] {
		c.text(dejaVuSans.face(t, 12), ink, 40+(i%2)*900, 60+i/2*60, s)
	}
	for i, s := range chineseLines[12:20] {
		c.text(notoSansSC.face(t, 12), ink, 40+(i%2)*900, 500+i/2*60, s)
	}
	res, err := e.Recognize(context.Background(), c.img)
	if err != nil {
		t.Fatal(err)
	}
	edits, total, report := score(c.placed, res.Lines, true)
	for _, r := range report {
		t.Log(r)
	}
	acc := 1 - float64(edits)/float64(total)
	t.Logf("12 px on 1920×1080: %d lines, accuracy %.2f%% (spaces ignored)", len(res.Lines), 100*acc)
	if acc < 0.9 {
		t.Errorf("accuracy %.2f%%, want ≥ 90%%", 100*acc)
	}
}

var engineOnce struct {
	sync.Once
	e   *Engine
	err error
}

// sharedEngine returns one Engine for the test binary (the models load once).
func sharedEngine(t testing.TB) *Engine {
	t.Helper()
	rt, dir := requireAssets(t)
	engineOnce.Do(func() { engineOnce.e, engineOnce.err = New(rt, dir) })
	if engineOnce.err != nil {
		t.Fatalf("New: %v", engineOnce.err)
	}
	return engineOnce.e
}

// turn returns img turned by deg degrees (clockwise on screen) on a canvas large enough to
// hold it, the background filled with bg.
func turn(img *image.RGBA, deg float64, bg color.Color) *image.RGBA {
	b := img.Bounds()
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	w, h := float64(b.Dx()), float64(b.Dy())
	nw, nh := math.Abs(w*c)+math.Abs(h*s), math.Abs(w*s)+math.Abs(h*c)
	dst := image.NewRGBA(image.Rect(0, 0, int(math.Ceil(nw)), int(math.Ceil(nh))))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	m := f64.Aff3{c, -s, nw/2 - c*w/2 + s*h/2, s, c, nh/2 - s*w/2 - c*h/2}
	draw.BiLinear.Transform(dst, m, img, b, draw.Src, nil)
	return dst
}

// TestTurnedPages reads pages that are skewed, sideways and upside down, and light text on a
// dark background: the lines must come out right and in reading order (Result.Text is
// compared whole, so the order counts).
func TestTurnedPages(t *testing.T) {
	e := sharedEngine(t)
	en, zh := englishLines[8:13], chineseLines[8:13]
	long := strings.Join(englishLines[20:24], " ")
	paper := color.RGBA{0xfb, 0xfb, 0xf8, 0xff}
	dark := color.RGBA{0x24, 0x27, 0x2e, 0xff}
	inverted := func(c *canvas) *image.RGBA {
		img := image.NewRGBA(c.img.Bounds())
		for i := 0; i < len(img.Pix); i += 4 {
			for k := range 3 {
				img.Pix[i+k] = 255 - c.img.Pix[i+k]
			}
			img.Pix[i+3] = 255
		}
		return img
	}
	tests := []struct {
		name  string
		img   *image.RGBA
		lines []string
		zh    bool
	}{
		{"English skewed 6°", turn(page(t, dejaVuSans, en, sizes).img, 6, paper), en, false},
		{"Chinese skewed -9°", turn(page(t, notoSansSC, zh, sizes).img, -9, paper), zh, true},
		{"English upside down", turn(page(t, dejaVuSerif, en, sizes).img, 180, paper), en, false},
		{"Chinese upside down", turn(page(t, notoSerifSC, zh, sizes).img, 180, paper), zh, true},
		{"English sideways", turn(page(t, dejaVuSans, en, sizes).img, 90, paper), en, false},
		{"Chinese sideways", turn(page(t, notoSansSC, zh, sizes).img, -90, paper), zh, true},
		{"English light on dark", inverted(page(t, dejaVuSans, en, sizes)), en, false},
		{"a long English line upside down", turn(page(t, dejaVuSerif, []string{long}, []float64{14}).img, 180, paper), []string{long}, false},
		{"Chinese light on dark, skewed 4°", turn(inverted(page(t, notoSansSC, zh, sizes)), 4, dark), zh, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Recognize(context.Background(), tt.img)
			if err != nil {
				t.Fatal(err)
			}
			want := normalise(strings.Join(tt.lines, "\n"), tt.zh)
			got := normalise(res.Text, tt.zh)
			acc := 1 - float64(levenshtein(want, got))/float64(len([]rune(want)))
			t.Logf("accuracy %.2f%%", 100*acc)
			if acc < 0.9 || len(res.Lines) != len(tt.lines) {
				t.Errorf("accuracy %.2f%% with %d lines; want ≥ 90%% and %d lines in order:\n%s", 100*acc, len(res.Lines), len(tt.lines), res.Text)
			}
		})
	}
}

// TestTightCrops reads single lines cut to their text's bounds (no margin at all).
func TestTightCrops(t *testing.T) {
	e := sharedEngine(t)
	for _, tt := range []struct {
		f    testFont
		line string
		zh   bool
	}{
		{dejaVuSans, englishLines[9], false},
		{dejaVuSerif, englishLines[23], false},
		{notoSansSC, chineseLines[3], true},
		{notoSerifSC, chineseLines[20], true},
	} {
		c := page(t, tt.f, []string{tt.line}, []float64{18})
		img := c.img.SubImage(c.placed[0].box)
		res, err := e.Recognize(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		want, got := normalise(tt.line, tt.zh), normalise(res.Text, tt.zh)
		if d := levenshtein(want, got); float64(d) > 0.1*float64(len([]rune(want))) {
			t.Errorf("%s tight crop: read %q, want %q", tt.f.name, res.Text, tt.line)
		}
		// Boxes are in the image's own coordinates (SubImage keeps its origin).
		for _, p := range res.Lines[0].Box {
			if !p.In(img.Bounds().Inset(-1)) {
				t.Errorf("%s: box corner %v outside the image %v", tt.f.name, p, img.Bounds())
			}
		}
	}
}

// TestLongLine reads a line about 1900 px long (aspect ratio over 100), wider than one
// recogniser batch's budget.
func TestLongLine(t *testing.T) {
	e := sharedEngine(t)
	long := strings.Join(englishLines[:6], " ")
	c := page(t, dejaVuSans, []string{long}, []float64{13})
	if w := c.placed[0].box.Dx(); w < 1700 {
		t.Fatalf("line only %d px wide", w)
	}
	res, err := e.Recognize(context.Background(), c.img)
	if err != nil {
		t.Fatal(err)
	}
	edits, total, report := score(c.placed, res.Lines, false)
	for _, r := range report {
		t.Log(r)
	}
	if acc := 1 - float64(edits)/float64(total); acc < 0.95 {
		t.Errorf("long line accuracy %.2f%%, want ≥ 95%%", 100*acc)
	}
}

// TestDecodeAndRecognize is the path of an attachment: bytes → Decode → Recognize.
func TestDecodeAndRecognize(t *testing.T) {
	e := sharedEngine(t)
	webp, err := os.ReadFile("testdata/attachment.webp")
	if err != nil {
		t.Fatal(err)
	}
	// A PNG sticker: dark text on a transparent background (read over white, not black).
	c := page(t, dejaVuSans, []string{englishLines[4]}, []float64{20})
	sticker := image.NewNRGBA(c.img.Bounds())
	for i := 0; i < len(c.img.Pix); i += 4 {
		a := 255 - c.img.Pix[i] // ink darkness as opacity
		sticker.Pix[i], sticker.Pix[i+1], sticker.Pix[i+2], sticker.Pix[i+3] = 0, 0, 0, a
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, sticker); err != nil {
		t.Fatal(err)
	}
	var jpegData bytes.Buffer
	if err := jpeg.Encode(&jpegData, page(t, notoSansSC, chineseLines[5:7], []float64{18}).img, &jpeg.Options{Quality: 75}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"WebP", webp, "WebP attachment 2024\n图片里的文字"},
		{"transparent PNG", pngData.Bytes(), englishLines[4]},
		{"JPEG q75", jpegData.Bytes(), chineseLines[5] + "\n" + chineseLines[6]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Decode(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Recognize(context.Background(), img)
			if err != nil {
				t.Fatal(err)
			}
			if d := levenshtein(normalise(tt.want, false), normalise(res.Text, false)); d > 2 {
				t.Errorf("read %q, want %q (%d edits)", res.Text, tt.want, d)
			}
		})
	}
}

func TestRecognizeNoText(t *testing.T) {
	e := sharedEngine(t)
	plain := newCanvas(400, 300, color.RGBA{0xf4, 0xf4, 0xf4, 0xff})
	plain.fill(image.Rect(50, 50, 350, 250), color.RGBA{0x30, 0x80, 0xc0, 0xff}) // a flat shape
	for name, img := range map[string]image.Image{"blank": newCanvas(300, 200, color.White).img, "shape": plain.img, "1×1": image.NewGray(image.Rect(0, 0, 1, 1))} {
		res, err := e.Recognize(context.Background(), img)
		if err != nil || res.Text != "" || len(res.Lines) != 0 {
			t.Errorf("%s: Recognize = %+v, %v; want no text", name, res, err)
		}
	}
	for name, img := range map[string]image.Image{"nil": nil, "empty": image.NewRGBA(image.Rectangle{}), "too large": image.NewGray(image.Rect(0, 0, 1, MaxPixels+1))} {
		if _, err := e.Recognize(context.Background(), img); err == nil {
			t.Errorf("%s image: no error", name)
		} else if name == "too large" && !errors.Is(err, ErrTooLarge) {
			t.Errorf("too large: %v does not wrap ErrTooLarge", err)
		}
	}
}

// cancelAt is a context that cancels itself when its Err is asked for the n-th time (the
// engine asks before each stage); from then on Err reports the cancellation. With late set,
// that n-th call still answers nil, so the model run it guards starts and is stopped by the
// terminate flag instead.
type cancelAt struct {
	context.Context
	cancel context.CancelFunc
	n      atomic.Int32
	at     int32
	late   bool
}

func newCancelAt(at int32, late bool) *cancelAt {
	ctx, cancel := context.WithCancel(context.Background())
	return &cancelAt{Context: ctx, cancel: cancel, at: at, late: late}
}

func (c *cancelAt) Err() error {
	if c.n.Add(1) == c.at {
		c.cancel()
		if c.late {
			return nil
		}
	}
	return c.Context.Err()
}

func TestRecognizeCancel(t *testing.T) {
	e := sharedEngine(t)
	img := screenshot(t).img
	for _, tt := range []struct {
		name string
		ctx  context.Context
	}{
		// Err is asked at the start, then before each model run: detection (2), then the
		// orientation batches (from 3), then the recognition batches (6 is one of them).
		{"cancelled before", newCancelAt(1, false)},
		{"cancelled before detection", newCancelAt(2, false)},
		{"cancelled during detection", newCancelAt(2, true)},
		{"cancelled during orientation", newCancelAt(3, true)},
		{"cancelled before a recognition batch", newCancelAt(6, false)},
		{"cancelled during a recognition batch", newCancelAt(6, true)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Recognize(tt.ctx, img)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Recognize = %d lines, %v; want context.Canceled", len(res.Lines), err)
			}
		})
	}
	// The engine still works afterwards.
	if res, err := e.Recognize(context.Background(), img); err != nil || len(res.Lines) == 0 {
		t.Errorf("after cancellations: %d lines, %v", len(res.Lines), err)
	}
}

// TestRecognizeConcurrent runs Recognize from several goroutines on one Engine: each gets the
// result a lone call gets.
func TestRecognizeConcurrent(t *testing.T) {
	e := sharedEngine(t)
	imgs := []*image.RGBA{
		page(t, dejaVuSans, englishLines[:3], sizes).img,
		page(t, notoSansSC, chineseLines[:3], sizes).img,
		page(t, dejaVuSerif, englishLines[3:6], sizes).img,
		page(t, notoSerifSC, chineseLines[3:6], sizes).img,
	}
	want := make([]string, len(imgs))
	for i, img := range imgs {
		res, err := e.Recognize(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = res.Text
	}
	var wg sync.WaitGroup
	got := make([]string, len(imgs))
	errs := make([]error, len(imgs))
	for i, img := range imgs {
		wg.Go(func() {
			res, err := e.Recognize(context.Background(), img)
			got[i], errs[i] = res.Text, err
		})
	}
	wg.Wait()
	for i := range imgs {
		if errs[i] != nil || got[i] != want[i] {
			t.Errorf("image %d concurrently: %q, %v; alone: %q", i, got[i], errs[i], want[i])
		}
	}
}

func TestClose(t *testing.T) {
	rt, dir := requireAssets(t)
	e, err := New(rt, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.Recognize(context.Background(), newCanvas(64, 64, color.White).img); !errors.Is(err, ErrClosed) {
		t.Errorf("Recognize after Close: %v, want ErrClosed", err)
	}
}

// BenchmarkRecognizeLine reads one 46-character line (DejaVu Sans 18 px, 420×80 image).
func BenchmarkRecognizeLine(b *testing.B) {
	e := sharedEngine(b)
	img := page(b, dejaVuSans, []string{englishLines[1]}, []float64{18}).img
	cpu := startCPU(b)
	for b.Loop() {
		if _, err := e.Recognize(context.Background(), img); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/line")
	b.ReportMetric(cpu.ms()/float64(b.N), "cpu-ms/line")
}

// BenchmarkRecognizePage reads a page of 16 lines (8 English, 8 Chinese, 14–24 px) and
// reports the time per line.
func BenchmarkRecognizePage(b *testing.B) {
	e := sharedEngine(b)
	en := page(b, dejaVuSans, englishLines[:8], sizes).img
	zh := page(b, notoSansSC, chineseLines[:8], sizes).img
	cpu := startCPU(b)
	for b.Loop() {
		for _, img := range []*image.RGBA{en, zh} {
			if _, err := e.Recognize(context.Background(), img); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(16*b.N), "ms/line")
	b.ReportMetric(cpu.ms()/float64(16*b.N), "cpu-ms/line")
}

// BenchmarkRecognizeScreenshot reads the 1280×800 app window of TestScreenshot.
func BenchmarkRecognizeScreenshot(b *testing.B) {
	e := sharedEngine(b)
	img := screenshot(b).img
	cpu := startCPU(b)
	for b.Loop() {
		if _, err := e.Recognize(context.Background(), img); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/screenshot")
	b.ReportMetric(cpu.ms()/float64(b.N), "cpu-ms/screenshot")
}

// cpuClock measures the CPU time of the process (every thread, ONNX Runtime's included):
// on a shared machine it varies less than the wall clock.
type cpuClock struct{ start time.Duration }

func processCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) *cpuClock {
	b.Helper()
	return &cpuClock{start: processCPU(b)}
}

// ms returns the CPU milliseconds spent since startCPU.
func (c *cpuClock) ms() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(time.Duration(ru.Utime.Nano()+ru.Stime.Nano())-c.start) / float64(time.Millisecond)
}

// BenchmarkConcurrency reads 4 pages per op: one after another ("serial"), from 4 goroutines
// whose model runs take turns (the Engine's behaviour, "parallel-turns"), and from 4
// goroutines running the shared sessions at once ("parallel-free", the engine's token
// widened for the benchmark).
func BenchmarkConcurrency(b *testing.B) {
	e := sharedEngine(b)
	imgs := []*image.RGBA{
		page(b, dejaVuSans, englishLines[:4], sizes).img, page(b, notoSansSC, chineseLines[:4], sizes).img,
		page(b, dejaVuSerif, englishLines[4:8], sizes).img, page(b, notoSerifSC, chineseLines[4:8], sizes).img,
	}
	parallel := func(b *testing.B, e *Engine) {
		for b.Loop() {
			var wg sync.WaitGroup
			for _, img := range imgs {
				wg.Go(func() {
					if _, err := e.Recognize(context.Background(), img); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
		}
	}
	for range 2 { // twice, interleaved, as the machine's load drifts
		b.Run("serial", func(b *testing.B) {
			for b.Loop() {
				for _, img := range imgs {
					if _, err := e.Recognize(context.Background(), img); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("parallel-turns", func(b *testing.B) { parallel(b, e) })
		b.Run("parallel-free", func(b *testing.B) {
			free := &Engine{dict: e.dict, turn: make(chan struct{}, len(imgs)), det: e.det, cls: e.cls, rec: e.rec}
			parallel(b, free)
		})
	}
}

// BenchmarkNew loads the three models into sessions: the cost a session-per-call design
// would add to every call.
func BenchmarkNew(b *testing.B) {
	rt, dir := requireAssets(b)
	for b.Loop() {
		e, err := New(rt, dir)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
