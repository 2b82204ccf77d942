package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/ocr"
)

// OCRDeps are the assets of the OCR of images (chat attachments, channel messages' images, tool
// results' images) into text, which memory indexes with their event.
type OCRDeps struct {
	// Runtime is ONNX Runtime (the one the dense embeddings use); nil: no OCR.
	Runtime *embed.ORT
	// ModelsDir holds the PP-OCRv4 models (ocr.ResolveModelsDir); ModelsErr says why it is
	// empty (no OCR then).
	ModelsDir string
	ModelsErr error
}

// ocrEngine loads the OCR engine once, on the first image: the models take ≈ 0.5 s and
// ≈ 50 MB, so a memory without images never pays for them.
type ocrEngine struct {
	deps OCRDeps
	once sync.Once
	eng  *ocr.Engine
	err  error
}

func (o *ocrEngine) engine() (*ocr.Engine, error) {
	o.once.Do(func() {
		switch {
		case o.deps.Runtime == nil:
			o.err = errors.New("OCR needs ONNX Runtime, which is not installed (make onnxruntime, or the packages' /usr/lib/hologram/onnxruntime)")
		case o.deps.ModelsDir == "":
			o.err = fmt.Errorf("OCR models not found: %w", cmpErr(o.deps.ModelsErr, errors.New("no models directory configured")))
		default:
			if err := o.deps.Runtime.Load(); err != nil {
				o.err = fmt.Errorf("OCR: %w", err)
				return
			}
			o.eng, o.err = ocr.New(o.deps.Runtime, o.deps.ModelsDir)
		}
	})
	return o.eng, o.err
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// close closes the engine, if one was loaded; later calls of engine fail.
func (o *ocrEngine) close() {
	o.once.Do(func() { o.err = errors.New("the kernel is closed") }) // waits for a load in progress
	if o.eng != nil {
		_ = o.eng.Close()
	}
}

// imageText recognises the text in an encoded image (PNG, JPEG, GIF, WebP).
func (k *Kernel) imageText(ctx context.Context, data []byte) (string, error) {
	eng, err := k.ocr.engine()
	if err != nil {
		return "", err
	}
	img, err := ocr.Decode(data)
	if err != nil {
		return "", err
	}
	res, err := eng.Recognize(ctx, img)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(res.Text), nil
}

// ocrBlocks gives every image block without text the text OCR finds in it, so that memory
// indexes it with the event that holds the block and recall finds the image by its words. An
// image OCR cannot read keeps no text; the failure is logged, the message goes on.
func (k *Kernel) ocrBlocks(ctx context.Context, blocks []memory.Block) {
	for i := range blocks {
		b := &blocks[i]
		if b.Kind != memory.BlockImage || strings.TrimSpace(b.Text) != "" || len(b.Data) == 0 {
			continue
		}
		text, err := k.imageText(ctx, b.Data)
		if err != nil {
			k.log.Warn("OCR of an image attachment failed; it is kept without text", "name", b.Name, "err", err)
			continue
		}
		b.Text = text
	}
}

// toolImageText is the host's hook for images in tool results (the web tool's screenshots):
// their text joins the result the model and memory see.
func (k *Kernel) toolImageText(ctx context.Context, mime string, data []byte) (string, error) {
	return k.imageText(ctx, data)
}
