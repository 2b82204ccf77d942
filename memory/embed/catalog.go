package embed

import (
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// ModelKind says what a model embeds.
type ModelKind string

const (
	// KindText models embed texts.
	KindText ModelKind = "text"
	// KindImageText models embed texts and images into one space (CLIP-like).
	KindImageText ModelKind = "image+text"
	// KindSpeech models transcribe speech (Whisper: memory/stt); they embed nothing and are
	// used for voice messages once installed.
	KindSpeech ModelKind = "speech-to-text"
)

// TokenizerKind says how a model's tokenizer file is read.
type TokenizerKind string

const (
	// TokenizerWordPiece is a Hugging Face tokenizer.json with a WordPiece model ([LoadWordPiece]).
	TokenizerWordPiece TokenizerKind = "wordpiece"
	// TokenizerVocab is a BERT vocab.txt ([LoadWordPieceVocab]).
	TokenizerVocab TokenizerKind = "vocab"
	// TokenizerSentencePiece is a SentencePiece Unigram model ([LoadSentencePiece]).
	TokenizerSentencePiece TokenizerKind = "sentencepiece"
	// TokenizerWhisper is Whisper's byte-level BPE tokenizer.json (memory/stt.LoadTokens).
	TokenizerWhisper TokenizerKind = "whisper"
)

// ModelFile is one file of a model in its hub repository.
type ModelFile struct {
	// Path is the file's path in the repository, e.g. "onnx/model.onnx".
	Path string `json:"path"`
	// SHA256 is the file's hex SHA-256 as the hub publishes it (Git LFS files), "" when none is
	// published: then the hash of the first download is recorded and later downloads must
	// match it.
	SHA256 string `json:"sha256,omitempty"`
	// Size is the file's size in bytes when known (0: unknown).
	Size int64 `json:"size,omitempty"`
	// Optional files (configuration kept for reference) may be missing from an import, and a
	// download that fails for one is logged and skipped.
	Optional bool `json:"optional,omitempty"`
}

// ModelSpec describes a model of the catalogue: where it comes from and how it embeds.
type ModelSpec struct {
	// ID names the model in settings and the models directory, e.g. "bge-small-zh-v1.5".
	ID string `json:"id"`
	// Description is one line for listings.
	Description string `json:"description"`
	// Repo is the hub repository the files come from, Revision its branch, tag or commit.
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
	// Upstream is the original model the files were exported from, Licence its licence.
	Upstream string    `json:"upstream"`
	Licence  string    `json:"licence"`
	Kind     ModelKind `json:"kind"`
	// Files are all files installed; Model, Vision and Tokenizer name some of them.
	Files []ModelFile `json:"files"`
	// Model is the ONNX file of the text model (of both towers when Kind is KindImageText and
	// Vision is "").
	Model string `json:"model"`
	// Vision is the image tower's ONNX file when it is separate.
	Vision string `json:"vision,omitempty"`
	// Decoder is a speech model's decoder (Model is then its encoder).
	Decoder       string        `json:"decoder,omitempty"`
	Tokenizer     string        `json:"tokenizer"`
	TokenizerKind TokenizerKind `json:"tokenizer_kind"`
	// Lowercase is the vocab.txt tokenizer's do_lower_case; Fairseq numbers SentencePiece ids
	// as XLM-RoBERTa does (see [SentencePieceOptions]).
	Lowercase bool `json:"lowercase,omitempty"`
	Fairseq   bool `json:"fairseq,omitempty"`
	// Output and VisionOutput are the outputs read ("" picks the default, see
	// [TextModelConfig] and [ImageModelConfig]).
	Output       string `json:"output,omitempty"`
	VisionOutput string `json:"vision_output,omitempty"`
	// Dim, Pooling, Normalize, the prefixes and MaxTokens are the embedding settings.
	Dim           int     `json:"dim"`
	Pooling       Pooling `json:"pooling"`
	Normalize     bool    `json:"normalize"`
	QueryPrefix   string  `json:"query_prefix,omitempty"`
	PassagePrefix string  `json:"passage_prefix,omitempty"`
	MaxTokens     int     `json:"max_tokens"`
	// ImageSize is the image tower's input side (KindImageText).
	ImageSize int `json:"image_size,omitempty"`
}

// DefaultHubs are the hub base URLs tried in order: Hugging Face, then its China mirror.
var DefaultHubs = []string{"https://huggingface.co", "https://hf-mirror.com"}

// Catalog returns the curated models. The ONNX exports come from the repositories named (the
// upstream model's own repository where it publishes one); pinned hashes are the hub's
// published Git LFS SHA-256s; files without one are recorded at first download.
func Catalog() []ModelSpec {
	return []ModelSpec{
		{
			ID:          "bge-small-zh-v1.5",
			Description: "BAAI bge-small-zh v1.5: Chinese text, 512 dims, 24 M parameters (≈ 95 MB)",
			Repo:        "Xenova/bge-small-zh-v1.5", Revision: "main",
			Upstream: "BAAI/bge-small-zh-v1.5", Licence: "MIT",
			Kind: KindText,
			Files: []ModelFile{
				{Path: "onnx/model.onnx"},
				{Path: "tokenizer.json"},
				{Path: "config.json", Optional: true},
			},
			Model: "onnx/model.onnx", Tokenizer: "tokenizer.json", TokenizerKind: TokenizerWordPiece,
			Dim: 512, Pooling: PoolCLS, Normalize: true, MaxTokens: 512,
			// bge's instruction for short retrieval queries; passages get none.
			QueryPrefix: "为这个句子生成表示以用于检索相关文章：",
		},
		{
			ID:          "multilingual-e5-small",
			Description: "intfloat multilingual-e5-small: ≈ 100 languages, 384 dims, 118 M parameters (≈ 470 MB)",
			Repo:        "intfloat/multilingual-e5-small", Revision: "main",
			Upstream: "intfloat/multilingual-e5-small", Licence: "MIT",
			Kind: KindText,
			Files: []ModelFile{
				{Path: "onnx/model.onnx", SHA256: "ca456c06b3a9505ddfd9131408916dd79290368331e7d76bb621f1cba6bc8665", Size: 470268510},
				{Path: "onnx/sentencepiece.bpe.model", SHA256: "cfc8146abe2a0488e9e2a0c56de7952f7c11ab059eca145a0a727afce0db2865", Size: 5069051},
				{Path: "onnx/config.json", Optional: true},
			},
			Model: "onnx/model.onnx", Tokenizer: "onnx/sentencepiece.bpe.model", TokenizerKind: TokenizerSentencePiece,
			Fairseq: true,
			Dim:     384, Pooling: PoolMean, Normalize: true, MaxTokens: 512,
			QueryPrefix: "query: ", PassagePrefix: "passage: ",
		},
		{
			ID:          "chinese-clip-vit-base-patch16",
			Description: "OFA-Sys Chinese-CLIP ViT-B/16: Chinese text and images in one space, 512 dims (≈ 750 MB)",
			Repo:        "Xenova/chinese-clip-vit-base-patch16", Revision: "main",
			Upstream: "OFA-Sys/chinese-clip-vit-base-patch16", Licence: "MIT",
			Kind: KindImageText,
			Files: []ModelFile{
				{Path: "onnx/model.onnx"},
				{Path: "tokenizer.json"},
				{Path: "preprocessor_config.json", Optional: true},
				{Path: "config.json", Optional: true},
			},
			Model: "onnx/model.onnx", Tokenizer: "tokenizer.json", TokenizerKind: TokenizerWordPiece,
			Output: "text_embeds", VisionOutput: "image_embeds",
			Dim: 512, Pooling: PoolNone, Normalize: true, MaxTokens: 52, ImageSize: 224,
		},
		{
			ID:          "whisper-base",
			Description: "OpenAI Whisper base: speech to text in ≈ 100 languages, for voice messages (≈ 290 MB)",
			Repo:        "onnx-community/whisper-base", Revision: "main",
			Upstream: "openai/whisper-base", Licence: "MIT",
			Kind: KindSpeech,
			Files: []ModelFile{
				{Path: "onnx/encoder_model.onnx"},
				{Path: "onnx/decoder_model.onnx"},
				{Path: "tokenizer.json"},
				{Path: "config.json", Optional: true},
				{Path: "generation_config.json", Optional: true},
				{Path: "preprocessor_config.json", Optional: true},
			},
			Model: "onnx/encoder_model.onnx", Decoder: "onnx/decoder_model.onnx",
			Tokenizer: "tokenizer.json", TokenizerKind: TokenizerWhisper,
		},
	}
}

func checkSpec(s ModelSpec) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("embed: model catalogue: %s: %s", s.ID, fmt.Sprintf(format, args...))
	}
	if !modelIDPattern.MatchString(s.ID) {
		return fmt.Errorf("embed: model catalogue: bad model id %q", s.ID)
	}
	if s.Repo == "" || s.Revision == "" {
		return bad("no repository or revision")
	}
	paths := map[string]bool{}
	for _, f := range s.Files {
		if f.Path == "" || path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || strings.HasPrefix(f.Path, "../") || f.Path == ".." ||
			strings.ContainsAny(f.Path, `\`) || strings.HasSuffix(f.Path, ".part") {
			return bad("bad file path %q", f.Path)
		}
		if f.SHA256 != "" && !isHexSHA256(f.SHA256) {
			return bad("file %s: bad sha256 %q", f.Path, f.SHA256)
		}
		paths[f.Path] = !f.Optional
	}
	for _, need := range []string{s.Model, s.Tokenizer, s.Vision, s.Decoder} {
		if need == "" {
			continue
		}
		if !paths[need] {
			return bad("%q is not a required file of the model", need)
		}
	}
	if s.Model == "" || s.Tokenizer == "" {
		return bad("no model or tokenizer file")
	}
	if s.Kind == KindSpeech { // an encoder, a decoder and Whisper's tokenizer; no embedding settings
		if s.Decoder == "" || s.TokenizerKind != TokenizerWhisper {
			return bad("a speech model needs a decoder and the whisper tokenizer")
		}
		return nil
	}
	if s.Decoder != "" || s.TokenizerKind == TokenizerWhisper {
		return bad("only speech models have a decoder or the whisper tokenizer")
	}
	switch s.TokenizerKind {
	case TokenizerWordPiece, TokenizerVocab, TokenizerSentencePiece:
	default:
		return bad("unknown tokenizer kind %q", s.TokenizerKind)
	}
	switch s.Pooling {
	case PoolCLS, PoolMean, PoolNone:
	default:
		return bad("unknown pooling %q", s.Pooling)
	}
	switch s.Kind {
	case KindText:
	case KindImageText:
		if s.ImageSize <= 0 {
			return bad("no image size")
		}
	default:
		return bad("unknown kind %q", s.Kind)
	}
	if s.Dim <= 0 || s.MaxTokens <= 0 {
		return bad("dim and max tokens must be positive")
	}
	return nil
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
