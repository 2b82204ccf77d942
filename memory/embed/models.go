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
	"strings"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

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
	// CheckSpeech validates an install or import of a speech model (memory/stt opens it); nil
	// checks only that ONNX Runtime reads both networks.
	CheckSpeech func(SpeechFiles) error
}

// SpeechFiles are the paths of an installed speech model's files.
type SpeechFiles struct {
	ID                          string
	Encoder, Decoder, Tokenizer string
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
	speech   func(SpeechFiles) error

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
		sleep: opts.Sleep, now: opts.Now, log: opts.Logger, speech: opts.CheckSpeech}
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
	e, _, err := m.OpenImages(id)
	return e, err
}

// OpenImages is [Manager.Open] that also says whether the model embeds images: for an
// image+text model it returns the embedder a second time as an [ImageEmbedder] (nil for a text
// model), so that the caller asks no type assertion to find out.
func (m *Manager) OpenImages(id string) (Embedder, ImageEmbedder, error) {
	spec, err := m.spec(id)
	if err != nil {
		return nil, nil, err
	}
	if m.rt == nil {
		return nil, nil, fmt.Errorf("embed: open %s: the model manager has no ONNX Runtime", id)
	}
	mf, err := m.readManifest(id)
	if err != nil {
		return nil, nil, err
	}
	if spec.Kind == KindSpeech {
		return nil, nil, fmt.Errorf("embed: %s is a speech-to-text model: it embeds nothing; voice messages use it once it is installed", id)
	}
	files := make([]InstalledFile, len(mf.Files))
	copy(files, mf.Files)
	e, err := m.open(spec, filepath.Join(m.modelDir(id), "files"), hashes(files))
	if err != nil {
		return nil, nil, err
	}
	return e.embedder, e.images, nil
}

// openedModel is an opened text or image+text embedder (images is the same one, for the
// latter).
type openedModel struct {
	embedder Embedder
	images   ImageEmbedder
	close    func() error
}

// open builds the embedder of spec from the files in dir; a speech model is checked (see
// [ManagerOptions.CheckSpeech]) and opened as no embedder.
func (m *Manager) open(s ModelSpec, dir string, sums map[string]string) (openedModel, error) {
	file := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	if s.Kind == KindSpeech {
		if err := m.checkSpeech(speechFiles(s, dir)); err != nil {
			return openedModel{}, fmt.Errorf("model %s: %w", s.ID, err)
		}
		return openedModel{close: func() error { return nil }}, nil
	}
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
		return openedModel{embedder: e, images: e, close: e.Close}, nil
	}
	e, err := NewTextEmbedder(m.rt, text)
	if err != nil {
		return openedModel{}, err
	}
	return openedModel{embedder: e, close: e.Close}, nil
}

func speechFiles(s ModelSpec, dir string) SpeechFiles {
	file := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	return SpeechFiles{ID: s.ID, Encoder: file(s.Model), Decoder: file(s.Decoder), Tokenizer: file(s.Tokenizer)}
}

func (m *Manager) checkSpeech(f SpeechFiles) error {
	if m.speech != nil {
		return m.speech(f)
	}
	if err := m.rt.Load(); err != nil {
		return err
	}
	for _, p := range []string{f.Encoder, f.Decoder} {
		if _, _, err := ort.GetInputOutputInfo(p); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(p), err)
		}
	}
	return nil
}

// Speech returns the files of the first installed speech model of the catalogue, or of id if
// not "". [ErrNotInstalled] when there is none.
func (m *Manager) Speech(id string) (SpeechFiles, error) {
	for _, s := range m.catalog {
		if s.Kind != KindSpeech || (id != "" && s.ID != id) {
			continue
		}
		if _, err := m.readManifest(s.ID); err == nil {
			return speechFiles(s, filepath.Join(m.modelDir(s.ID), "files")), nil
		} else if !errors.Is(err, ErrNotInstalled) {
			return SpeechFiles{}, err
		}
	}
	if id != "" {
		if _, err := m.spec(id); err != nil {
			return SpeechFiles{}, err
		}
	}
	return SpeechFiles{}, fmt.Errorf("embed: %w: no speech-to-text model is installed", ErrNotInstalled)
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
