package ocr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
)

// Assets are what the OCR of images (chat attachments, channel messages' images, tool results'
// images) into text needs; memory indexes the text with the image's event.
type Assets struct {
	// Runtime is ONNX Runtime (the one the dense embeddings use); nil: no OCR.
	Runtime *embed.ORT
	// ModelsDir holds the PP-OCRv4 models (ocr.ResolveModelsDir); ModelsErr says why it is
	// empty (no OCR then).
	ModelsDir string
	ModelsErr error
}

// Lazy loads the OCR engine once, on the first image: the models take ≈ 0.5 s and ≈ 50 MB, so a
// memory without images never pays for them. It is safe for concurrent use.
type Lazy struct {
	deps Assets
	log  *slog.Logger
	once sync.Once
	eng  *Engine
	err  error
}

// NewLazy returns the lazy engine over assets; failures are logged to log (nil: discarded).
func NewLazy(assets Assets, log *slog.Logger) *Lazy {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Lazy{deps: assets, log: log}
}

func (o *Lazy) engine() (*Engine, error) {
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
			o.eng, o.err = New(o.deps.Runtime, o.deps.ModelsDir)
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

// Close closes the engine, if one was loaded; later calls fail.
func (o *Lazy) Close() {
	o.once.Do(func() { o.err = errors.New("the kernel is closed") }) // waits for a load in progress
	if o.eng != nil {
		_ = o.eng.Close()
	}
}

// ImageText recognises the text in an encoded image (PNG, JPEG, GIF, WebP).
func (o *Lazy) ImageText(ctx context.Context, data []byte) (string, error) {
	eng, err := o.engine()
	if err != nil {
		return "", err
	}
	img, err := Decode(data)
	if err != nil {
		return "", err
	}
	res, err := eng.Recognize(ctx, img)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(res.Text), nil
}

// Blocks gives every image block without text the text OCR finds in it, so that memory
// indexes it with the event that holds the block and recall finds the image by its words. An
// image OCR cannot read keeps no text; the failure is logged, the message goes on.
func (o *Lazy) Blocks(ctx context.Context, blocks []memory.Block) {
	for i := range blocks {
		b := &blocks[i]
		if b.Kind != memory.BlockImage || strings.TrimSpace(b.Text) != "" || len(b.Data) == 0 {
			continue
		}
		text, err := o.ImageText(ctx, b.Data)
		if err != nil {
			o.log.Warn("OCR of an image attachment failed; it is kept without text", "name", b.Name, "err", err)
			continue
		}
		b.Text = text
	}
}

// Available says why images get no text (nil when the engine loads); it loads the engine.
func (o *Lazy) Available() error {
	_, err := o.engine()
	return err
}
