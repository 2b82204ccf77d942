package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ModelKind says what a model embeds.
type ModelKind string

const (
	// KindText models embed texts.
	KindText ModelKind = "text"
	// KindImageText models embed texts and images into one space (CLIP-like).
	KindImageText ModelKind = "image+text"
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
	Vision        string        `json:"vision,omitempty"`
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
	}
}

// InstalledFile is a file of an installed model.
type InstalledFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Check says how SHA256 was verified: "pinned" (matches the published hash), "recorded"
	// (no published hash; recorded now), "matches record" (equals the hash recorded at an
	// earlier download), "imported" or "imported, differs from the published hash".
	Check string `json:"check"`
}

// ModelInfo is one catalogue model and its state in the models directory.
type ModelInfo struct {
	Spec      ModelSpec `json:"spec"`
	Installed bool      `json:"installed"`
	// Source is the hub base URL the files came from, or "import:" and the directory.
	Source      string          `json:"source,omitempty"`
	InstalledAt time.Time       `json:"installed_at,omitzero"`
	Files       []InstalledFile `json:"files,omitempty"`
	// Partial counts the bytes of an interrupted download kept for resuming.
	Partial int64 `json:"partial,omitempty"`
}

// Progress reports a download: Done of Total bytes of one file (Total 0: unknown yet).
type Progress struct {
	Model string
	File  string
	Hub   string
	Done  int64
	Total int64
}

// Active is the dense-model setting the kernel persists: the model in use ("" means none:
// sparse recall only) and the fingerprint of its [Space].
type Active struct {
	Model       string `json:"model"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ManagerOptions configures [NewManager].
type ManagerOptions struct {
	// Dir is the models directory (the kernel passes $DATA/models). Required.
	Dir string
	// Hubs are the hub base URLs tried in order for each file; nil means [DefaultHubs].
	Hubs []string
	// Catalog is the model list; nil means [Catalog].
	Catalog []ModelSpec
	// Runtime runs the models: it validates installs and imports and opens models. Required
	// for Install, Import, Use and Open.
	Runtime *ORT
	// Client makes the downloads; nil uses a client that honours HTTPS_PROXY and has no
	// overall timeout (files are large; cancel through the context).
	Client *http.Client
	// Attempts is how many rounds over all hubs a file gets before Install gives up (a round
	// that fails part-way resumes in the next); ≤ 0 means 3.
	Attempts int
	// Sleep waits between rounds (nil: a real wait of 2 s × the round); tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger receives download and validation events; nil discards.
	Logger *slog.Logger
}

// Manager lists, installs (downloads with resume, progress and checksum verification),
// imports, opens and removes the dense models of a catalogue in a models directory:
//
//	DIR/<id>/manifest.json        what was installed, from where, with which hashes
//	DIR/<id>/files/<repo path>    the model's files
//	DIR/.staging/<id>/…           a download in progress (.part files resume)
//	DIR/recorded-sha256.json      hashes recorded at first download of unpinned files
//
// A model is installed only once every file is verified and the model opened with ONNX
// Runtime; until then it is not listed as installed and cannot be used. A Manager is safe for
// concurrent use; operations on one model run one at a time.
type Manager struct {
	dir      string
	hubs     []string
	catalog  []ModelSpec
	rt       *ORT
	client   *http.Client
	attempts int
	sleep    func(context.Context, time.Duration) error
	now      func() time.Time
	log      *slog.Logger

	locks    sync.Map   // model id → *sync.Mutex
	recordMu sync.Mutex // guards recorded-sha256.json
}

// modelIDPattern keeps ids safe as directory names.
var modelIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NewManager checks opts (the hubs are http(s) URLs, the catalogue is consistent) and returns
// a Manager. It touches no file.
func NewManager(opts ManagerOptions) (*Manager, error) {
	if opts.Dir == "" {
		return nil, errors.New("embed: model manager: no models directory")
	}
	hubs := opts.Hubs
	if hubs == nil {
		hubs = DefaultHubs
	}
	if len(hubs) == 0 {
		return nil, errors.New("embed: model manager: no hub base URL")
	}
	m := &Manager{dir: opts.Dir, rt: opts.Runtime, client: opts.Client, attempts: opts.Attempts,
		sleep: opts.Sleep, now: opts.Now, log: opts.Logger}
	for _, h := range hubs {
		u, err := url.Parse(h)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return nil, fmt.Errorf("embed: model manager: hub %q is not an http(s) base URL", h)
		}
		m.hubs = append(m.hubs, strings.TrimRight(h, "/"))
	}
	m.catalog = opts.Catalog
	if m.catalog == nil {
		m.catalog = Catalog()
	}
	seen := map[string]bool{}
	for _, s := range m.catalog {
		if err := checkSpec(s); err != nil {
			return nil, err
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("embed: model catalogue lists %q twice", s.ID)
		}
		seen[s.ID] = true
	}
	if m.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = time.Minute
		m.client = &http.Client{Transport: t}
	}
	if m.attempts <= 0 {
		m.attempts = 3
	}
	if m.sleep == nil {
		m.sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	return m, nil
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
	for _, need := range []string{s.Model, s.Tokenizer, s.Vision} {
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

// ErrUnknownModel is wrapped by errors about a model id not in the catalogue.
var ErrUnknownModel = errors.New("unknown model")

// ErrNotInstalled is wrapped by errors about a catalogue model that is not installed.
var ErrNotInstalled = errors.New("model not installed")

// Catalog returns the manager's catalogue.
func (m *Manager) Catalog() []ModelSpec { return slices.Clone(m.catalog) }

func (m *Manager) spec(id string) (ModelSpec, error) {
	for _, s := range m.catalog {
		if s.ID == id {
			return s, nil
		}
	}
	ids := make([]string, len(m.catalog))
	for i, s := range m.catalog {
		ids[i] = s.ID
	}
	return ModelSpec{}, fmt.Errorf("embed: %w %q (known: %s)", ErrUnknownModel, id, strings.Join(ids, ", "))
}

func (m *Manager) lock(id string) func() {
	mu, _ := m.locks.LoadOrStore(id, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

func (m *Manager) modelDir(id string) string   { return filepath.Join(m.dir, id) }
func (m *Manager) stagingDir(id string) string { return filepath.Join(m.dir, ".staging", id) }

// manifest is DIR/<id>/manifest.json.
type manifest struct {
	ID          string          `json:"id"`
	Repo        string          `json:"repo"`
	Revision    string          `json:"revision"`
	Source      string          `json:"source"`
	InstalledAt time.Time       `json:"installed_at"`
	Files       []InstalledFile `json:"files"`
}

func (m *Manager) readManifest(id string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(m.modelDir(id), "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("embed: %w: %s (install or import it first)", ErrNotInstalled, id)
	}
	if err != nil {
		return nil, fmt.Errorf("embed: model %s: %w", id, err)
	}
	var mf manifest
	if err := json.Unmarshal(data, &mf); err != nil {
		return nil, fmt.Errorf("embed: model %s: corrupt manifest: %w", id, err)
	}
	return &mf, nil
}

// List returns every catalogue model with its state: installed (from where, when, with which
// file hashes and how they were checked) or not, and the bytes of an interrupted download.
func (m *Manager) List() ([]ModelInfo, error) {
	var out []ModelInfo
	for _, s := range m.catalog {
		info := ModelInfo{Spec: s}
		mf, err := m.readManifest(s.ID)
		switch {
		case err == nil:
			info.Installed, info.Source, info.InstalledAt, info.Files = true, mf.Source, mf.InstalledAt, mf.Files
		case !errors.Is(err, ErrNotInstalled):
			return nil, err
		}
		filepath.WalkDir(m.stagingDir(s.ID), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					info.Partial += fi.Size()
				}
			}
			return nil
		})
		out = append(out, info)
	}
	return out, nil
}

// Info returns one model's entry of [Manager.List].
func (m *Manager) Info(id string) (ModelInfo, error) {
	if _, err := m.spec(id); err != nil {
		return ModelInfo{}, err
	}
	list, err := m.List()
	if err != nil {
		return ModelInfo{}, err
	}
	for _, info := range list {
		if info.Spec.ID == id {
			return info, nil
		}
	}
	return ModelInfo{}, fmt.Errorf("embed: %w %q", ErrUnknownModel, id)
}

// Install downloads a catalogue model from the hubs (in order, per file), resuming any
// interrupted download (HTTP Range into a .part file), reports progress (nil: none), verifies
// every file's SHA-256 (pinned, or recorded at the first download) and opens the model with
// ONNX Runtime before it counts as installed. A checksum mismatch deletes the bad file; a
// model that does not open is not installed (its files are deleted). An installed model is
// returned as is.
func (m *Manager) Install(ctx context.Context, id string, progress func(Progress)) (ModelInfo, error) {
	spec, err := m.spec(id)
	if err != nil {
		return ModelInfo{}, err
	}
	if m.rt == nil {
		return ModelInfo{}, fmt.Errorf("embed: install %s: the model manager has no ONNX Runtime to validate it", id)
	}
	defer m.lock(id)()
	if _, err := m.readManifest(id); err == nil {
		return m.Info(id)
	}
	stage := m.stagingDir(id)
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
	}
	var (
		files   []InstalledFile
		sources []string
	)
	for _, f := range spec.Files {
		inst, from, err := m.fetchFile(ctx, spec, f, stage, progress)
		if err != nil && f.Optional && ctx.Err() == nil {
			// Configuration kept for reference only: the model works without it.
			m.log.Warn("optional model file skipped", "model", id, "file", f.Path, "err", err)
			continue
		}
		if err != nil {
			return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
		}
		if from != "" && !slices.Contains(sources, from) {
			sources = append(sources, from)
		}
		files = append(files, inst)
	}
	hub := strings.Join(sources, ", ")
	if hub == "" {
		hub = "an earlier download"
	}
	if err := m.activate(spec, stage, files, hub); err != nil {
		// A model that does not open is corrupt: drop its files so a later install fetches
		// them again.
		os.RemoveAll(stage)
		return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
	}
	for _, f := range files {
		if f.Check == "recorded" {
			if err := m.record(spec, f); err != nil {
				return ModelInfo{}, fmt.Errorf("embed: install %s: %w", id, err)
			}
		}
	}
	m.log.Info("model installed", "model", id, "source", hub)
	return m.Info(id)
}

// fileURL is where a hub serves a repository file.
func fileURL(hub string, s ModelSpec, file string) string {
	segs := strings.Split(file, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return hub + "/" + s.Repo + "/resolve/" + url.PathEscape(s.Revision) + "/" + strings.Join(segs, "/")
}

// fetchFile downloads one file into the staging directory (verified, under its final name)
// and returns its record and the hub that served it ("" when an earlier attempt had).
func (m *Manager) fetchFile(ctx context.Context, s ModelSpec, f ModelFile, stage string, progress func(Progress)) (InstalledFile, string, error) {
	final := filepath.Join(stage, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return InstalledFile{}, "", err
	}
	if _, err := os.Stat(final); err == nil {
		// Verified by an earlier, interrupted install.
		inst, err := m.verify(s, f, final)
		if err == nil {
			report(progress, Progress{Model: s.ID, File: f.Path, Done: inst.Size, Total: inst.Size})
			return inst, "", nil
		}
		os.Remove(final)
	}
	part := final + ".part"
	var errs []error
	for round := range m.attempts {
		if round > 0 {
			if err := m.sleep(ctx, time.Duration(round)*2*time.Second); err != nil {
				return InstalledFile{}, "", fmt.Errorf("download %s: %w", f.Path, err)
			}
		}
		errs = errs[:0]
		for _, hub := range m.hubs {
			err := m.fetchFrom(ctx, hub, s, f, part, progress)
			if err == nil {
				inst, verr := m.verify(s, f, part)
				if verr != nil {
					os.Remove(part)
					return InstalledFile{}, "", verr
				}
				if err := os.Rename(part, final); err != nil {
					return InstalledFile{}, "", err
				}
				return inst, hub, nil
			}
			if ctx.Err() != nil {
				return InstalledFile{}, "", fmt.Errorf("download %s: %w (the part downloaded is kept; install again to resume)", f.Path, ctx.Err())
			}
			m.log.Warn("model download failed", "model", s.ID, "file", f.Path, "hub", hub, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", hub, err))
		}
	}
	return InstalledFile{}, "", fmt.Errorf("download %s failed from every hub (%d rounds; the part downloaded is kept, install again to resume): %w",
		f.Path, m.attempts, errors.Join(errs...))
}

func report(progress func(Progress), p Progress) {
	if progress != nil {
		progress(p)
	}
}

// fetchFrom downloads the rest of one file from one hub into part.
func (m *Manager) fetchFrom(ctx context.Context, hub string, s ModelSpec, f ModelFile, part string, progress func(Progress)) error {
	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	u := fileURL(hub, s, f.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "HologramAgent model manager")
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var total int64
	switch resp.StatusCode {
	case http.StatusOK:
		// A full body (the hub ignored the range): start over.
		if err := out.Truncate(0); err != nil {
			return err
		}
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			return err
		}
		have, total = 0, resp.ContentLength
	case http.StatusPartialContent:
		start, size, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return fmt.Errorf("GET %s: %w", u, err)
		}
		if start != have {
			return fmt.Errorf("GET %s: asked for bytes from %d, got from %d", u, have, start)
		}
		total = size
	case http.StatusRequestedRangeNotSatisfiable:
		if have > 0 {
			return nil // the part already holds the whole file; verification decides
		}
		fallthrough
	default:
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if total < 0 {
		total = 0
	}
	if f.Size > 0 && total > 0 && total != f.Size {
		return fmt.Errorf("GET %s: the hub serves %d bytes, the catalogue says %d", u, total, f.Size)
	}
	p := Progress{Model: s.ID, File: f.Path, Hub: hub, Done: have, Total: total}
	report(progress, p)
	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return err
			}
			p.Done += int64(n)
			report(progress, p)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("GET %s: after %d of %d bytes: %w", u, p.Done, total, rerr)
		}
	}
	if total > 0 && p.Done != total {
		return fmt.Errorf("GET %s: got %d of %d bytes", u, p.Done, total)
	}
	return out.Close()
}

// parseContentRange reads "bytes START-END/SIZE" (SIZE may be "*": 0).
func parseContentRange(v string) (start, size int64, err error) {
	rest, ok := strings.CutPrefix(v, "bytes ")
	span, sizeStr, ok2 := strings.Cut(rest, "/")
	from, _, ok3 := strings.Cut(span, "-")
	if !ok || !ok2 || !ok3 {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	if start, err = strconv.ParseInt(from, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("bad Content-Range %q", v)
	}
	if sizeStr != "*" {
		if size, err = strconv.ParseInt(sizeStr, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("bad Content-Range %q", v)
		}
	}
	return start, size, nil
}

// verify checks a downloaded file against its pinned hash, or the hash recorded at its first
// download.
func (m *Manager) verify(s ModelSpec, f ModelFile, file string) (InstalledFile, error) {
	sum, size, err := fileHash(file)
	if err != nil {
		return InstalledFile{}, err
	}
	inst := InstalledFile{Path: f.Path, Size: size, SHA256: sum}
	switch {
	case f.SHA256 != "":
		if sum != f.SHA256 {
			return inst, fmt.Errorf("checksum mismatch for %s: sha256 %s, the published hash is %s (the file is deleted and not installed)", f.Path, sum, f.SHA256)
		}
		inst.Check = "pinned"
	default:
		rec, err := m.recorded(s, f)
		if err != nil {
			return inst, err
		}
		switch {
		case rec == "":
			inst.Check = "recorded"
		case rec == sum:
			inst.Check = "matches record"
		default:
			return inst, fmt.Errorf("checksum mismatch for %s: sha256 %s, but %s was recorded at its first download (the file is deleted and not installed; if the publisher changed the file, delete its entry from %s)",
				f.Path, sum, rec, m.recordPath())
		}
	}
	if f.Size > 0 && size != f.Size {
		return inst, fmt.Errorf("size mismatch for %s: %d bytes, want %d (the file is deleted and not installed)", f.Path, size, f.Size)
	}
	return inst, nil
}

func (m *Manager) recordPath() string { return filepath.Join(m.dir, "recorded-sha256.json") }

func recordKey(s ModelSpec, f ModelFile) string { return s.Repo + "@" + s.Revision + "/" + f.Path }

func (m *Manager) readRecords() (map[string]string, error) {
	recs := map[string]string{}
	data, err := os.ReadFile(m.recordPath())
	if errors.Is(err, fs.ErrNotExist) {
		return recs, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("corrupt %s: %w", m.recordPath(), err)
	}
	return recs, nil
}

func (m *Manager) recorded(s ModelSpec, f ModelFile) (string, error) {
	m.recordMu.Lock()
	defer m.recordMu.Unlock()
	recs, err := m.readRecords()
	if err != nil {
		return "", err
	}
	return recs[recordKey(s, f)], nil
}

func (m *Manager) record(s ModelSpec, f InstalledFile) error {
	m.recordMu.Lock()
	defer m.recordMu.Unlock()
	recs, err := m.readRecords()
	if err != nil {
		return err
	}
	recs[recordKey(s, ModelFile{Path: f.Path})] = f.SHA256
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(m.recordPath(), append(data, '\n'))
}

// activate opens the staged model (tokenizer and ONNX validation) and moves it into place with
// its manifest.
func (m *Manager) activate(s ModelSpec, stage string, files []InstalledFile, source string) error {
	e, err := m.open(s, stage, hashes(files))
	if err != nil {
		return err
	}
	if err := e.close(); err != nil {
		return err
	}
	mf := manifest{ID: s.ID, Repo: s.Repo, Revision: s.Revision, Source: source, InstalledAt: m.now().UTC(), Files: files}
	data, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	dir := m.modelDir(s.ID)
	tmp := dir + ".new"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(stage, filepath.Join(tmp, "files")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

func hashes(files []InstalledFile) map[string]string {
	h := make(map[string]string, len(files))
	for _, f := range files {
		h[f.Path] = f.SHA256
	}
	return h
}

// Import installs a catalogue model from a local directory holding its files, under their
// repository paths (onnx/model.onnx) or flat (model.onnx). Required files must be present;
// optional ones are copied when present. The files are copied, hashed (a difference from a
// published hash is recorded and shown, not refused: an import may be another export of the
// model) and the model is opened with ONNX Runtime, which checks the ONNX inputs and outputs
// against the catalogue entry, before it counts as installed.
func (m *Manager) Import(ctx context.Context, id, dir string) (ModelInfo, error) {
	spec, err := m.spec(id)
	if err != nil {
		return ModelInfo{}, err
	}
	if m.rt == nil {
		return ModelInfo{}, fmt.Errorf("embed: import %s: the model manager has no ONNX Runtime to validate it", id)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ModelInfo{}, fmt.Errorf("embed: import %s: %w", id, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return ModelInfo{}, fmt.Errorf("embed: import %s: %s is not a directory", id, abs)
	}
	defer m.lock(id)()
	if _, err := m.readManifest(id); err == nil {
		return ModelInfo{}, fmt.Errorf("embed: import %s: already installed; remove it first", id)
	}
	var missing []string
	found := map[string]string{}
	for _, f := range spec.Files {
		for _, p := range []string{filepath.Join(abs, filepath.FromSlash(f.Path)), filepath.Join(abs, path.Base(f.Path))} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				found[f.Path] = p
				break
			}
		}
		if found[f.Path] == "" && !f.Optional {
			missing = append(missing, f.Path)
		}
	}
	if len(missing) > 0 {
		return ModelInfo{}, fmt.Errorf("embed: import %s: %s lacks %s (looked for each under its repository path and by its base name)",
			id, abs, strings.Join(missing, ", "))
	}
	stage := m.stagingDir(id) + ".import"
	os.RemoveAll(stage)
	defer os.RemoveAll(stage)
	var files []InstalledFile
	for _, f := range spec.Files {
		src := found[f.Path]
		if src == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return ModelInfo{}, fmt.Errorf("embed: import %s: %w", id, err)
		}
		dst := filepath.Join(stage, filepath.FromSlash(f.Path))
		sum, size, err := copyHashed(src, dst)
		if err != nil {
			return ModelInfo{}, fmt.Errorf("embed: import %s: %w", id, err)
		}
		check := "imported"
		if f.SHA256 != "" && f.SHA256 != sum {
			check = "imported, differs from the published hash"
		}
		files = append(files, InstalledFile{Path: f.Path, Size: size, SHA256: sum, Check: check})
	}
	if err := m.activate(spec, stage, files, "import:"+abs); err != nil {
		return ModelInfo{}, fmt.Errorf("embed: import %s: %w", id, err)
	}
	m.log.Info("model imported", "model", id, "from", abs)
	return m.Info(id)
}

// Remove deletes an installed model and any partial download of it. Removing the active
// model is the caller's to prevent (it owns the setting).
func (m *Manager) Remove(id string) error {
	if _, err := m.spec(id); err != nil {
		return err
	}
	defer m.lock(id)()
	_, err := m.readManifest(id)
	_, stErr := os.Stat(m.stagingDir(id))
	if err != nil && stErr != nil {
		return err
	}
	if err := os.RemoveAll(m.modelDir(id)); err != nil {
		return fmt.Errorf("embed: remove %s: %w", id, err)
	}
	if err := os.RemoveAll(m.stagingDir(id)); err != nil {
		return fmt.Errorf("embed: remove %s: %w", id, err)
	}
	m.log.Info("model removed", "model", id)
	return nil
}

// Use opens an installed model and returns it with the setting the caller persists (see
// [Active]). Use("") returns the empty setting and no embedder: sparse recall only.
func (m *Manager) Use(id string) (Active, Embedder, error) {
	if id == "" {
		return Active{}, nil, nil
	}
	e, err := m.Open(id)
	if err != nil {
		return Active{}, nil, err
	}
	return Active{Model: id, Fingerprint: e.Space().Fingerprint()}, e, nil
}

// Open opens an installed model: an [ImageEmbedder] for image+text models, else an
// [Embedder]. The caller closes it (both types have Close) when done.
func (m *Manager) Open(id string) (Embedder, error) {
	spec, err := m.spec(id)
	if err != nil {
		return nil, err
	}
	if m.rt == nil {
		return nil, fmt.Errorf("embed: open %s: the model manager has no ONNX Runtime", id)
	}
	mf, err := m.readManifest(id)
	if err != nil {
		return nil, err
	}
	files := make([]InstalledFile, len(mf.Files))
	copy(files, mf.Files)
	e, err := m.open(spec, filepath.Join(m.modelDir(id), "files"), hashes(files))
	if err != nil {
		return nil, err
	}
	return e.embedder, nil
}

// openedModel is an opened text or image+text embedder.
type openedModel struct {
	embedder Embedder
	close    func() error
}

// open builds the embedder of spec from the files in dir.
func (m *Manager) open(s ModelSpec, dir string, sums map[string]string) (openedModel, error) {
	file := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	var (
		tok TextTokenizer
		err error
	)
	switch s.TokenizerKind {
	case TokenizerWordPiece:
		tok, err = LoadWordPiece(file(s.Tokenizer))
	case TokenizerVocab:
		tok, err = LoadWordPieceVocab(file(s.Tokenizer), WordPieceOptions{Lowercase: s.Lowercase})
	case TokenizerSentencePiece:
		tok, err = LoadSentencePiece(file(s.Tokenizer), SentencePieceOptions{Fairseq: s.Fairseq})
	}
	if err != nil {
		return openedModel{}, fmt.Errorf("model %s: tokenizer: %w", s.ID, err)
	}
	text := TextModelConfig{
		ID: s.ID, ModelPath: file(s.Model), SHA256: sums[s.Model], Tokenizer: tok, Output: s.Output,
		Pooling: s.Pooling, Normalize: s.Normalize, QueryPrefix: s.QueryPrefix, PassagePrefix: s.PassagePrefix,
		MaxTokens: s.MaxTokens, Dim: s.Dim,
	}
	if s.Kind == KindImageText {
		cfg := ImageModelConfig{Text: text, VisionOutput: s.VisionOutput, ImageSize: s.ImageSize}
		if s.Vision != "" {
			cfg.VisionPath, cfg.VisionSHA256 = file(s.Vision), sums[s.Vision]
		}
		e, err := NewImageEmbedder(m.rt, cfg)
		if err != nil {
			return openedModel{}, err
		}
		return openedModel{embedder: e, close: e.Close}, nil
	}
	e, err := NewTextEmbedder(m.rt, text)
	if err != nil {
		return openedModel{}, err
	}
	return openedModel{embedder: e, close: e.Close}, nil
}

// fileSHA256 returns the hex SHA-256 of a file.
func fileSHA256(p string) (string, error) {
	sum, _, err := fileHash(p)
	return sum, err
}

func fileHash(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("hash %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// copyHashed copies src to dst (creating its directory) and returns the SHA-256 and size.
func copyHashed(src, dst string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, err
	}
	out, err := os.Create(dst)
	if err != nil {
		return "", 0, err
	}
	var h hash.Hash = sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fmt.Errorf("copy %s: %w", src, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeFileAtomic writes a file through a temporary file and a rename.
func writeFileAtomic(p string, data []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
