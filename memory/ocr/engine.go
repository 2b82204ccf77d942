package ocr

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
	"golang.org/x/image/draw"

	"github.com/hologramagent/hologram/memory/embed"
)

// ErrClosed is returned by [Engine.Recognize] after [Engine.Close].
var ErrClosed = errors.New("ocr: engine closed")

// Line is one recognised text line.
type Line struct {
	// Text is the line's text, without leading or trailing spaces.
	Text string
	// Box is the line's box in the image's coordinates: top-left, top-right, bottom-right,
	// bottom-left corners of the (possibly rotated) rectangle around the text.
	Box [4]image.Point
	// Score is the recogniser's confidence in Text, 0–1 (the mean probability of its
	// characters); lines below 0.5 are dropped.
	Score float32
}

// Result is the text found in an image.
type Result struct {
	// Lines are the recognised lines in reading order: rows from top to bottom and, within
	// a row, in the text's direction (a skewed, sideways or upside-down page reads as its
	// text does).
	Lines []Line
	// Text is the lines' text joined by '\n' ("" when the image holds no text).
	Text string
}

// Engine recognises text in images with the PaddleOCR PP-OCRv4 models (detection, 180°
// orientation classification, recognition) under ONNX Runtime.
//
// An Engine is safe for concurrent use: its three sessions are created once; each call has
// its own tensors, and the model runs of concurrent calls take turns (each run already uses
// [embed.ORT.Threads] threads). [Engine.Close] waits for running calls.
type Engine struct {
	dict []string // recogniser classes: blank, characters, space

	// turn admits one model run at a time: ONNX Runtime already spreads a run over the
	// intra-op threads, and concurrent runs measured slower than runs in turn while each
	// holding its tensors; the Go pre- and post-processing of calls still overlaps.
	turn chan struct{}

	mu     sync.RWMutex // held for reading by calls, for writing by Close
	det    *ort.DynamicAdvancedSession
	cls    *ort.DynamicAdvancedSession
	rec    *ort.DynamicAdvancedSession
	closed bool
}

// modelSpec is what New checks of a model before creating its session: one float input of
// rank 4 with 3 channels, one float output of the given rank.
type modelSpec struct {
	file, role string
	outRank    int
	inHeight   int64 // fixed input height (-1: dynamic)
}

// New loads the models in modelsDir ("" resolves it with [ResolveModelsDir] from
// $HOLOGRAM_OCR_MODELS and the standard places) into rt, loading rt first if needed. It
// checks each model's inputs and outputs and that the dictionary matches the recogniser's
// classes. Errors say what is missing or corrupt and how to get the models
// (`make ocr-models`). Loading the three models takes ≈ 0.3 s.
func New(rt *embed.ORT, modelsDir string) (*Engine, error) {
	if rt == nil {
		return nil, errors.New("ocr: no ONNX Runtime given")
	}
	if modelsDir == "" {
		exe, _ := os.Executable()
		dir, err := ResolveModelsDir("", os.Getenv, exe)
		if err != nil {
			return nil, fmt.Errorf("ocr: %w", err)
		}
		modelsDir = dir
	} else if fi, err := os.Stat(modelsDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("ocr: %w: %s is not a directory; run `make ocr-models` in the source checkout or set %s to a directory holding %s",
			ErrModelsNotFound, modelsDir, ModelsDirEnv, strings.Join(ModelFiles, ", "))
	}
	if err := rt.Load(); err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	dict, err := loadDict(filepath.Join(modelsDir, DictFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("ocr: %w: %s lacks %s; run `make ocr-models` in the source checkout or set %s",
				ErrModelsNotFound, modelsDir, DictFile, ModelsDirEnv)
		}
		return nil, fmt.Errorf("ocr: %w", err)
	}
	opts, err := rt.SessionOptions()
	if err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	defer opts.Destroy()

	e := &Engine{dict: dict, turn: make(chan struct{}, 1)}
	specs := []struct {
		spec modelSpec
		sess **ort.DynamicAdvancedSession
	}{
		{modelSpec{DetModelFile, "detection", 4, -1}, &e.det},
		{modelSpec{ClsModelFile, "orientation", 2, -1}, &e.cls},
		{modelSpec{RecModelFile, "recognition", 3, recHeight}, &e.rec},
	}
	for _, s := range specs {
		sess, err := openModel(modelsDir, s.spec, opts, len(dict))
		if err != nil {
			e.destroy()
			return nil, fmt.Errorf("ocr: %w", err)
		}
		*s.sess = sess
	}
	return e, nil
}

// openModel reads, checks and opens one model.
func openModel(dir string, spec modelSpec, opts *ort.SessionOptions, classes int) (*ort.DynamicAdvancedSession, error) {
	data, err := readModel(dir, spec.file, spec.role)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, spec.file)
	corrupt := func(why string) error {
		return fmt.Errorf("%s model %s is not the expected PP-OCR model (%s); run `make ocr-models` to fetch it again",
			spec.role, path, why)
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(data)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	if len(ins) != 1 || len(outs) != 1 {
		return nil, corrupt(fmt.Sprintf("%d inputs and %d outputs, want 1 and 1", len(ins), len(outs)))
	}
	in, out := ins[0], outs[0]
	switch {
	case in.DataType != ort.TensorElementDataTypeFloat || out.DataType != ort.TensorElementDataTypeFloat:
		return nil, corrupt(fmt.Sprintf("input %v, output %v, want float tensors", in.DataType, out.DataType))
	case len(in.Dimensions) != 4 || in.Dimensions[1] != 3:
		return nil, corrupt(fmt.Sprintf("input shape %v, want [N 3 H W]", in.Dimensions))
	case spec.inHeight > 0 && in.Dimensions[2] != spec.inHeight:
		return nil, corrupt(fmt.Sprintf("input height %d, want %d", in.Dimensions[2], spec.inHeight))
	case len(out.Dimensions) != spec.outRank:
		return nil, corrupt(fmt.Sprintf("output shape %v, want rank %d", out.Dimensions, spec.outRank))
	case spec.file == RecModelFile && out.Dimensions[2] != int64(classes):
		return nil, fmt.Errorf("recognition model %s has %d classes but the dictionary %s gives %d (blank + %d characters + space); run `make ocr-models` to fetch both again",
			path, out.Dimensions[2], DictFile, classes, classes-2)
	case spec.file == ClsModelFile && out.Dimensions[1] != 2:
		return nil, corrupt(fmt.Sprintf("output shape %v, want [N 2]", out.Dimensions))
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, []string{in.Name}, []string{out.Name}, opts)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	return sess, nil
}

// Close releases the sessions once running calls have returned. Later calls return
// [ErrClosed]; Close is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.destroy()
}

func (e *Engine) destroy() error {
	var errs []error
	for _, s := range []**ort.DynamicAdvancedSession{&e.det, &e.cls, &e.rec} {
		if *s != nil {
			errs = append(errs, (*s).Destroy())
			*s = nil
		}
	}
	return errors.Join(errs...)
}

// Recognize finds and reads the text of img. Cancelling ctx stops the model run in progress
// (ONNX Runtime's terminate flag) and returns ctx's error. An image without text gives an
// empty Result and no error.
func (e *Engine) Recognize(ctx context.Context, img image.Image) (Result, error) {
	if img == nil {
		return Result{}, errors.New("ocr: nil image")
	}
	if b := img.Bounds(); b.Dx() <= 0 || b.Dy() <= 0 {
		return Result{}, fmt.Errorf("ocr: empty image (%dx%d)", b.Dx(), b.Dy())
	} else if px := int64(b.Dx()) * int64(b.Dy()); px > MaxPixels {
		return Result{}, fmt.Errorf("ocr: %w: %dx%d is more than %d pixels", ErrTooLarge, b.Dx(), b.Dy(), MaxPixels)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return Result{}, ErrClosed
	}
	run, err := newRunner(ctx, e.turn)
	if err != nil {
		return Result{}, err
	}
	defer run.close()

	// A border of the background colour keeps text that touches the edge detectable.
	src := toRGBA(img, detPadding)
	boxes, err := e.detect(run, src)
	if err != nil {
		return Result{}, err
	}
	lines := make([]*image.RGBA, len(boxes))
	dirs := make([]pt, len(boxes)) // reading direction of each line, in image coordinates
	for i, q := range boxes {
		var vertical bool
		lines[i], vertical = cropQuad(src, q)
		dirs[i] = q[1].sub(q[0])
		if vertical {
			dirs[i] = q[3].sub(q[0])
		}
	}
	flipped, err := e.orient(run, lines)
	if err != nil {
		return Result{}, err
	}
	for i := range dirs {
		if flipped[i] {
			dirs[i] = dirs[i].mul(-1)
		}
	}
	texts, scores, err := e.recognize(run, lines)
	if err != nil {
		return Result{}, err
	}
	b := img.Bounds()
	var res Result
	for _, i := range readingOrder(boxes, dirs) {
		text := strings.TrimSpace(texts[i])
		if text == "" || scores[i] < recDropScore {
			continue
		}
		l := Line{Text: text, Score: scores[i]}
		for k, p := range boxes[i] {
			p = pt{clampf(p.X-detPadding, 0, float64(b.Dx())), clampf(p.Y-detPadding, 0, float64(b.Dy()))}
			l.Box[k] = p.image().Add(b.Min)
		}
		res.Lines = append(res.Lines, l)
	}
	parts := make([]string, len(res.Lines))
	for i, l := range res.Lines {
		parts[i] = l.Text
	}
	res.Text = strings.Join(parts, "\n")
	return res, nil
}

// runner runs sessions under one ctx: cancelling ctx terminates the run in progress.
type runner struct {
	ctx        context.Context
	turn       chan struct{} // the engine's run token
	opts       *ort.RunOptions
	stop       func() bool
	terminated chan struct{} // closed once the terminate call has returned
}

func newRunner(ctx context.Context, turn chan struct{}) (*runner, error) {
	opts, err := ort.NewRunOptions()
	if err != nil {
		return nil, fmt.Errorf("ocr: run options: %w", err)
	}
	r := &runner{ctx: ctx, turn: turn, opts: opts, terminated: make(chan struct{})}
	r.stop = context.AfterFunc(ctx, func() {
		defer close(r.terminated)
		opts.Terminate()
	})
	return r, nil
}

// close releases the run options, after a terminate call that has started has returned.
func (r *runner) close() {
	if !r.stop() {
		<-r.terminated
	}
	r.opts.Destroy()
}

// run runs sess on a float input of shape and hands the float output to use, destroying every
// tensor it made afterwards (use must not keep out).
func (r *runner) run(sess *ort.DynamicAdvancedSession, what string, shape ort.Shape, data []float32,
	use func(out []float32, shape ort.Shape) error) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	in, err := ort.NewTensor(shape, data)
	if err != nil {
		return fmt.Errorf("ocr: %s input: %w", what, err)
	}
	defer in.Destroy()
	select {
	case r.turn <- struct{}{}:
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
	outs := []ort.Value{nil}
	err = sess.RunWithOptions([]ort.Value{in}, outs, r.opts)
	<-r.turn
	if err != nil {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("ocr: %s: %w", what, err)
	}
	defer outs[0].Destroy()
	t, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return fmt.Errorf("ocr: %s output is %T, want float32", what, outs[0])
	}
	return use(t.GetData(), t.GetShape())
}

// detect returns the text boxes of src.
func (e *Engine) detect(r *runner, src *image.RGBA) ([]quad, error) {
	in := newDetInput(src)
	var boxes []quad
	err := r.run(e.det, "detection", ort.NewShape(1, 3, int64(in.h), int64(in.w)), in.data, func(prob []float32, shape ort.Shape) error {
		if len(shape) != 4 || shape[0] != 1 || shape[1] != 1 || shape[2] != int64(in.h) || shape[3] != int64(in.w) {
			return fmt.Errorf("ocr: detection map shape %v for input %dx%d", shape, in.w, in.h)
		}
		boxes = detBoxes(prob, in)
		return nil
	})
	return boxes, err
}

// orient turns the lines the classifier finds upside down and reports which it turned.
// The classifier sees a line squeezed to 192×48; a line longer than clsMaxAspect is judged
// by windows of that aspect ratio (its start, middle and end), whose probabilities are
// averaged, since squeezing a long line further leaves nothing to judge.
func (e *Engine) orient(r *runner, lines []*image.RGBA) ([]bool, error) {
	type view struct {
		line int
		img  *image.RGBA
	}
	var views []view
	for i, img := range lines {
		b := img.Bounds()
		win := int(clsMaxAspect * float64(b.Dy()))
		if b.Dx() <= win {
			views = append(views, view{i, img})
			continue
		}
		for _, x := range []int{0, (b.Dx() - win) / 2, b.Dx() - win} {
			views = append(views, view{i, img.SubImage(image.Rect(x, 0, x+win, b.Dy())).(*image.RGBA)})
		}
	}
	p0, p180 := make([]float32, len(lines)), make([]float32, len(lines))
	n := make([]float32, len(lines))
	const size = 3 * clsHeight * clsWidth
	for start := 0; start < len(views); start += clsBatch {
		batch := views[start:min(start+clsBatch, len(views))]
		data := make([]float32, len(batch)*size)
		for i, v := range batch {
			fillLine(data[i*size:(i+1)*size], v.img, clsHeight, clsWidth)
		}
		err := r.run(e.cls, "orientation", ort.NewShape(int64(len(batch)), 3, clsHeight, clsWidth), data, func(probs []float32, shape ort.Shape) error {
			if len(shape) != 2 || shape[0] != int64(len(batch)) || shape[1] != 2 {
				return fmt.Errorf("ocr: orientation output shape %v for %d lines", shape, len(batch))
			}
			for i, v := range batch {
				p0[v.line] += probs[2*i]
				p180[v.line] += probs[2*i+1]
				n[v.line]++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	flipped := make([]bool, len(lines))
	for i, img := range lines {
		if p := p180[i] / n[i]; p > p0[i]/n[i] && p >= clsThresh {
			rotate180(img)
			flipped[i] = true
		}
	}
	return flipped, nil
}

// recognize reads each line, in batches of similar aspect ratio.
func (e *Engine) recognize(r *runner, lines []*image.RGBA) ([]string, []float32, error) {
	texts, scores := make([]string, len(lines)), make([]float32, len(lines))
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(aspect(lines[a]), aspect(lines[b])) })
	for start := 0; start < len(order); {
		// Lines are sorted by aspect ratio, so a batch is as wide as its last line: grow it
		// while lines × width stays within the budget.
		n := 1
		for n < recBatch && start+n < len(order) && (n+1)*recWidth(aspect(lines[order[start+n]])) <= recBatchCols {
			n++
		}
		batch := order[start : start+n]
		start += n
		width := recWidth(aspect(lines[batch[len(batch)-1]]))
		size := 3 * recHeight * width
		data := make([]float32, len(batch)*size)
		inks := make([]lineInk, len(batch))
		for i, li := range batch {
			inks[i] = measureInk(fillLine(data[i*size:(i+1)*size], lines[li], recHeight, width))
		}
		err := r.run(e.rec, "recognition", ort.NewShape(int64(len(batch)), 3, recHeight, int64(width)), data, func(probs []float32, shape ort.Shape) error {
			if len(shape) != 3 || shape[0] != int64(len(batch)) || shape[1] < 1 || shape[2] != int64(len(e.dict)) {
				return fmt.Errorf("ocr: recognition output shape %v for %d lines", shape, len(batch))
			}
			steps, classes := int(shape[1]), int(shape[2])
			stepWidth := float64(width) / float64(steps)
			for i, li := range batch {
				gs := ctcDecode(probs[i*steps*classes:(i+1)*steps*classes], steps, classes, e.dict)
				texts[li], scores[li] = lineText(gs, inks[i], stepWidth)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return texts, scores, nil
}

// readingOrder returns the indexes of boxes in reading order. The page's reading direction
// is the length-weighted mean of the lines' directions dirs (so a skewed, sideways or
// upside-down page reads as its text does); in that frame, rows run top to bottom, boxes
// whose centres lie within half a line height of each other form a row, and a row reads
// in the direction of its text.
func readingOrder(boxes []quad, dirs []pt) []int {
	var sum pt
	for _, d := range dirs {
		sum = sum.add(d)
	}
	u := pt{1, 0}
	if n := sum.norm(); n > 0 {
		u = sum.mul(1 / n)
	}
	v := pt{-u.Y, u.X} // "down" when u points right (y grows downwards)
	type item struct {
		i           int
		along, down float64 // centre in the reading frame
		h, start    float64
	}
	items := make([]item, len(boxes))
	for i, q := range boxes {
		c := q[0].add(q[1]).add(q[2]).add(q[3]).mul(0.25)
		minD, maxD, minA := math.Inf(1), math.Inf(-1), math.Inf(1)
		for _, p := range q {
			minD, maxD = min(minD, p.dot(v)), max(maxD, p.dot(v))
			minA = min(minA, p.dot(u))
		}
		items[i] = item{i: i, along: c.dot(u), down: c.dot(v), h: maxD - minD, start: minA}
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.down, b.down) })
	order := make([]int, 0, len(items))
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && items[end].down-items[start].down < 0.5*min(items[start].h, items[end].h) {
			end++
		}
		row := items[start:end]
		slices.SortStableFunc(row, func(a, b item) int { return cmp.Compare(a.start, b.start) })
		for _, it := range row {
			order = append(order, it.i)
		}
		start = end
	}
	return order
}

// toRGBA returns img as an RGBA image with origin (0,0) and a border of pad pixels,
// composited over white (transparent areas of screenshots and stickers read as paper, not as
// black). The border takes the most common colour of img's edge, its background.
func toRGBA(img image.Image, pad int) *image.RGBA {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*pad, b.Dy()+2*pad))
	inner := image.Rect(pad, pad, pad+b.Dx(), pad+b.Dy())
	op := draw.Src
	if o, ok := img.(interface{ Opaque() bool }); !ok || !o.Opaque() {
		draw.Draw(dst, inner, image.NewUniform(color.White), image.Point{}, draw.Src)
		op = draw.Over
	}
	draw.Draw(dst, inner, img, b.Min, op)
	if pad > 0 {
		bg := image.NewUniform(edgeColor(dst.SubImage(inner).(*image.RGBA)))
		for _, r := range []image.Rectangle{
			image.Rect(0, 0, dst.Rect.Dx(), pad), image.Rect(0, inner.Max.Y, dst.Rect.Dx(), dst.Rect.Dy()),
			image.Rect(0, pad, pad, inner.Max.Y), image.Rect(inner.Max.X, pad, dst.Rect.Dx(), inner.Max.Y),
		} {
			draw.Draw(dst, r, bg, image.Point{}, draw.Src)
		}
	}
	return dst
}

// edgeColor returns the most common colour (to 4 bits a channel) of img's outermost pixels.
func edgeColor(img *image.RGBA) color.RGBA {
	b := img.Bounds()
	counts := make(map[color.RGBA]int)
	sums := make(map[color.RGBA][3]int)
	add := func(x, y int) {
		c := img.RGBAAt(x, y)
		k := color.RGBA{c.R >> 4, c.G >> 4, c.B >> 4, 0}
		counts[k]++
		s := sums[k]
		sums[k] = [3]int{s[0] + int(c.R), s[1] + int(c.G), s[2] + int(c.B)}
	}
	for x := b.Min.X; x < b.Max.X; x++ {
		add(x, b.Min.Y)
		add(x, b.Max.Y-1)
	}
	for y := b.Min.Y + 1; y < b.Max.Y-1; y++ {
		add(b.Min.X, y)
		add(b.Max.X-1, y)
	}
	var best color.RGBA
	for k, n := range counts {
		if n > counts[best] || (n == counts[best] && lessRGBA(k, best)) {
			best = k
		}
	}
	n, s := counts[best], sums[best]
	return color.RGBA{uint8(s[0] / n), uint8(s[1] / n), uint8(s[2] / n), 255}
}

func lessRGBA(a, b color.RGBA) bool {
	if a.R != b.R {
		return a.R < b.R
	}
	if a.G != b.G {
		return a.G < b.G
	}
	return a.B < b.B
}
