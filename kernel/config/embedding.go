package config

import (
	"net/url"
	"path/filepath"
)

// EmbeddingConfig is the [embedding] table: where dense models and ONNX Runtime come from. The
// model in use is not configured here: the owner chooses it (waiter model use ID, or the GUI)
// and the kernel keeps the choice as a setting in its store.
type EmbeddingConfig struct {
	// ONNXRuntime is libonnxruntime.so.1 or a directory holding it; empty searches
	// $HOLOGRAM_ONNXRUNTIME, /usr/lib/hologram/onnxruntime, next to the executable and the
	// source checkout's build/onnxruntime (see memory/embed.ResolveORTLibrary). Without it the
	// memory works in sparse mode (BM25 only) and says so in its status.
	ONNXRuntime string `toml:"onnxruntime"`
	// ModelsDir holds the installed models; empty means DATA/models.
	ModelsDir string `toml:"models_dir"`
	// Hubs are the model hub base URLs tried in order for each download (mirrors matter in
	// China); empty means https://huggingface.co then https://hf-mirror.com.
	Hubs []string `toml:"hubs"`
	// Threads is the intra-op thread count of the dense model; 0 means min(CPUs, 4).
	Threads int `toml:"threads"`
}

// MaxEmbeddingThreads bounds embedding.threads.
const MaxEmbeddingThreads = 64

// ModelsDirOr returns ModelsDir, or DATA/models for the data dir given.
func (e EmbeddingConfig) ModelsDirOr(dataDir string) string {
	if e.ModelsDir != "" {
		return e.ModelsDir
	}
	return filepath.Join(dataDir, "models")
}

// validateEmbedding reports the problems of the [embedding] table. It expects the absolute
// paths [Load] produces.
func (c *Config) validateEmbedding(bad func(format string, args ...any)) {
	e := c.Embedding
	if e.ONNXRuntime != "" && !filepath.IsAbs(e.ONNXRuntime) {
		bad("embedding.onnxruntime %q must be an absolute path", e.ONNXRuntime)
	}
	if e.ModelsDir != "" && !filepath.IsAbs(e.ModelsDir) {
		bad("embedding.models_dir %q must be an absolute path", e.ModelsDir)
	}
	for _, h := range e.Hubs {
		u, err := url.Parse(h)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad("embedding.hubs: %q is not an http(s) base URL like https://hf-mirror.com", h)
		}
	}
	if e.Threads < 0 || e.Threads > MaxEmbeddingThreads {
		bad("embedding.threads must be from 0 (automatic) to %d, got %d", MaxEmbeddingThreads, e.Threads)
	}
}
