package daemon

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/hologramagent/hologram/kernel"
	"github.com/hologramagent/hologram/kernel/config"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/ocr"
	"github.com/hologramagent/hologram/memory/stt"
	"github.com/hologramagent/hologram/memory/vad"
)

// NewOCR finds the OCR models ($HOLOGRAM_OCR_MODELS, /usr/lib/hologram/models/ocr, next to the
// executable, a checkout's build/models/ocr) for the kernel, which loads them on the first image
// with rt (the ONNX Runtime of the dense side). Without models or runtime images keep no text, and
// the log says how to get them.
func NewOCR(env func(string) string, rt *embed.ORT, log *slog.Logger) kernel.OCRDeps {
	exe, _ := os.Executable()
	dir, err := ocr.ResolveModelsDir("", env, exe)
	if err != nil {
		log.Info("OCR of images unavailable: images are kept without their text", "err", err)
	}
	return kernel.OCRDeps{Runtime: rt, ModelsDir: dir, ModelsErr: err}
}

// NewSTT finds the voice activity model for the kernel's transcription of voice messages, which
// uses the model manager's installed speech model (`waiter model install whisper-base`) with
// rt. Without a speech model, runtime or ffmpeg voice messages are kept as audio, and each
// turn says so.
func NewSTT(env func(string) string, emb kernel.EmbeddingDeps, log *slog.Logger) kernel.STTDeps {
	exe, _ := os.Executable()
	dir, err := vad.ResolveModelDir("", env, exe)
	if err != nil {
		log.Info("voice activity model unavailable: voice messages are transcribed whole", "err", err)
	}
	return kernel.STTDeps{Runtime: emb.Runtime, Models: emb.Models, VADDir: dir, VADErr: err}
}

// NewEmbedding resolves ONNX Runtime ([embedding] onnxruntime, else $HOLOGRAM_ONNXRUNTIME, else
// the usual places: embed.ResolveORTLibrary) and builds the model manager over the models
// directory (DATA/models by default) and the configured hubs. Nothing loads yet: the runtime and
// the chosen model load in the background once the kernel starts. A missing runtime is not an
// error: the memory stays sparse and the kernel's status says where the library was looked for.
// A bad hub list is an error (config validation normally catches it first).
func NewEmbedding(cfg config.Config, env func(string) string, log *slog.Logger) (kernel.EmbeddingDeps, error) {
	exe, _ := os.Executable()
	var deps kernel.EmbeddingDeps
	path, err := embed.ResolveORTLibrary(cfg.Embedding.ONNXRuntime, env, exe)
	if err != nil {
		log.Info("dense embeddings unavailable until ONNX Runtime is installed; memory recall is sparse", "err", err)
		deps.RuntimeErr = err
	} else {
		deps.Runtime = embed.NewORT(path, cfg.Embedding.Threads)
	}
	var hubs []string
	if len(cfg.Embedding.Hubs) > 0 {
		hubs = cfg.Embedding.Hubs
	}
	m, err := embed.NewManager(embed.ManagerOptions{Dir: cfg.Embedding.ModelsDirOr(cfg.DataDir), Hubs: hubs,
		Runtime: deps.Runtime, Logger: log.With("component", "models"), CheckSpeech: checkSpeech(deps.Runtime)})
	if err != nil {
		return kernel.EmbeddingDeps{}, fmt.Errorf("dense models: %w", err)
	}
	deps.Models = m
	return deps, nil
}

// checkSpeech validates installs of speech models by opening them (nil without a runtime:
// installs then fail on the runtime first).
func checkSpeech(rt *embed.ORT) func(embed.SpeechFiles) error {
	if rt == nil {
		return nil
	}
	return stt.CheckFiles(rt)
}
