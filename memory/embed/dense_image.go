package embed

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"

	ort "github.com/yalue/onnxruntime_go"
	"golang.org/x/image/draw"
)

// CLIPMean and CLIPStd are OpenAI CLIP's per-channel image normalisation (RGB, on [0, 1]
// values), which Chinese-CLIP uses too.
var (
	CLIPMean = [3]float32{0.48145466, 0.4578275, 0.40821073}
	CLIPStd  = [3]float32{0.26862954, 0.26130258, 0.27577711}
)

// ImageModelConfig describes a CLIP-like model for [NewImageEmbedder]: a text tower and an
// image tower that map into one space, in one ONNX file (a combined export) or two.
type ImageModelConfig struct {
	// Text is the text tower. Its Pooling is usually PoolNone with Output "text_embeds";
	// Normalize applies to images too.
	Text TextModelConfig
	// VisionPath is the image tower's ONNX file; "" means Text.ModelPath (a combined model,
	// which is then fed one blank image with each text batch and one placeholder text with
	// each image batch).
	VisionPath string
	// VisionSHA256 is the hex SHA-256 of VisionPath; "" computes it.
	VisionSHA256 string
	// VisionOutput is the image tower's [batch, dim] output; "" means "image_embeds".
	VisionOutput string
	// ImageSize is the side of the square input image; ≤ 0 means 224.
	ImageSize int
	// Mean and Std normalise each RGB channel (of values in [0, 1]); zero means [CLIPMean]
	// and [CLIPStd].
	Mean, Std [3]float32
	// BatchSize is the most images run at once; ≤ 0 means 8.
	BatchSize int
}

// ImageTextEmbedder is the [ImageEmbedder] of a CLIP-like ONNX model. Images are prepared as
// CLIP does: the centred square crop of the image scaled (Catmull-Rom) to ImageSize, then
// each channel normalised with Mean and Std. It is safe for concurrent use.
type ImageTextEmbedder struct {
	*TextEmbedder
	cfg    ImageModelConfig
	vision *onnxRunner
}

// NewImageEmbedder opens both towers (see [NewTextEmbedder]); both must produce vectors of
// the same length.
func NewImageEmbedder(rt *ORT, cfg ImageModelConfig) (*ImageTextEmbedder, error) {
	if cfg.ImageSize <= 0 {
		cfg.ImageSize = 224
	}
	if cfg.VisionOutput == "" {
		cfg.VisionOutput = "image_embeds"
	}
	if cfg.Mean == [3]float32{} && cfg.Std == [3]float32{} {
		cfg.Mean, cfg.Std = CLIPMean, CLIPStd
	}
	for _, s := range cfg.Std {
		if s <= 0 {
			return nil, fmt.Errorf("embed: image model %s: std %v must be positive", cfg.Text.ID, cfg.Std)
		}
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 8
	}
	if cfg.VisionPath == "" {
		cfg.VisionPath = cfg.Text.ModelPath
		if cfg.VisionSHA256 == "" {
			cfg.VisionSHA256 = cfg.Text.SHA256
		}
	}
	cfg.Text.ImageSize = cfg.ImageSize
	text, err := NewTextEmbedder(rt, cfg.Text)
	if err != nil {
		return nil, err
	}
	vision, err := newONNXRunner(rt, cfg.Text.ID, cfg.VisionPath, onnxWant{
		images: true, output: cfg.VisionOutput, outputRank: 2, dim: text.space.Dim, imageSize: cfg.ImageSize,
	})
	if err != nil {
		text.Close()
		return nil, err
	}
	e := &ImageTextEmbedder{TextEmbedder: text, cfg: cfg, vision: vision}
	if cfg.VisionPath != cfg.Text.ModelPath {
		sum := cfg.VisionSHA256
		if sum == "" {
			if sum, err = fileSHA256(cfg.VisionPath); err != nil {
				e.Close()
				return nil, fmt.Errorf("embed: image model %s: %w", cfg.Text.ID, err)
			}
		}
		e.space.SHA256 += "+" + sum
	}
	return e, nil
}

// EmbedImages implements [ImageEmbedder].
func (e *ImageTextEmbedder) EmbedImages(ctx context.Context, imgs []image.Image) ([][]float32, error) {
	defer releaseFreedMemory()
	out := make([][]float32, 0, len(imgs))
	size := e.cfg.ImageSize
	for start := 0; start < len(imgs); start += e.cfg.BatchSize {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		batch := imgs[start:min(start+e.cfg.BatchSize, len(imgs))]
		pixels := make([]float32, 0, len(batch)*3*size*size)
		for i, img := range batch {
			if img == nil || img.Bounds().Empty() {
				return nil, fmt.Errorf("embed: image %d is empty", start+i)
			}
			pixels = appendCLIPPixels(pixels, img, size, e.cfg.Mean, e.cfg.Std)
		}
		vecs, err := e.vision.runImages(ctx, len(batch), pixels, e.cfg.Text.Tokenizer.PadID())
		if err != nil {
			return nil, err
		}
		for _, v := range vecs {
			if e.cfg.Text.Normalize {
				normalizeL2(v)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// Close releases both sessions.
func (e *ImageTextEmbedder) Close() error {
	return errors.Join(e.TextEmbedder.Close(), e.vision.close())
}

// appendCLIPPixels appends img as CLIP's [3, size, size] input: the centred square crop
// scaled to size × size, channel-major, each channel normalised.
func appendCLIPPixels(dst []float32, img image.Image, size int, mean, std [3]float32) []float32 {
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	corner := image.Pt(b.Min.X+(b.Dx()-side)/2, b.Min.Y+(b.Dy()-side)/2)
	crop := image.Rectangle{Min: corner, Max: corner.Add(image.Pt(side, side))}
	rgba := image.NewRGBA(image.Rect(0, 0, size, size))
	draw.CatmullRom.Scale(rgba, rgba.Bounds(), img, crop, draw.Src, nil)
	plane := size * size
	start := len(dst)
	dst = slices.Grow(dst, 3*plane)[:start+3*plane]
	for i := range plane {
		for c := range 3 {
			v := float32(rgba.Pix[4*i+c]) / 255
			dst[start+c*plane+i] = (v - mean[c]) / std[c]
		}
	}
	return dst
}

// runImages runs one batch of n prepared images and returns the output rows.
func (r *onnxRunner) runImages(ctx context.Context, n int, pixels []float32, pad int64) ([][]float32, error) {
	values := make([]ort.Value, 0, len(r.inputs))
	defer func() {
		for _, v := range values {
			v.Destroy()
		}
	}()
	for _, name := range r.inputs {
		var (
			v   ort.Value
			err error
		)
		switch name {
		case PixelValuesName:
			v, err = ort.NewTensor(ort.NewShape(int64(n), 3, int64(r.imgSize), int64(r.imgSize)), pixels)
		case AttentionMaskName:
			// A combined model also wants a text: one placeholder token, ignored.
			v, err = ort.NewTensor(ort.NewShape(1, 1), []int64{1})
		case InputIDsName:
			v, err = ort.NewTensor(ort.NewShape(1, 1), []int64{pad})
		case TokenTypeIDsName:
			v, err = ort.NewTensor(ort.NewShape(1, 1), []int64{0})
		}
		if err != nil {
			return nil, fmt.Errorf("embed: model %s: input %s: %w", r.id, name, err)
		}
		values = append(values, v)
	}
	data, shape, err := r.run(ctx, values)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(shape, []int64{int64(n), int64(r.dim)}) {
		return nil, fmt.Errorf("embed: model %s returned image shape %v, want [%d %d]", r.id, shape, n, r.dim)
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = data[i*r.dim : (i+1)*r.dim : (i+1)*r.dim]
	}
	return vecs, nil
}

var _ ImageEmbedder = (*ImageTextEmbedder)(nil)
