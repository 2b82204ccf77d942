package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"sort"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Role says what a text is embedded for. Asymmetric models embed a search query and the
// passages it should find differently (multilingual-e5 prefixes "query: " and "passage: ";
// bge prefixes an instruction to short queries); symmetric models ignore the role.
type Role int

const (
	// Query is a text to search with: the current input, a recall query.
	Query Role = iota + 1
	// Passage is a text to be found: a memory event, a block's text.
	Passage
)

// String returns "query" or "passage".
func (r Role) String() string {
	switch r {
	case Query:
		return "query"
	case Passage:
		return "passage"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Pooling is how a text model's per-token output becomes one vector.
type Pooling string

const (
	// PoolCLS takes the first token's vector ([CLS]; bge).
	PoolCLS Pooling = "cls"
	// PoolMean averages the vectors of the real tokens, as the attention mask says (e5).
	PoolMean Pooling = "mean"
	// PoolNone takes the model's output as is: it already gives one vector per text (CLIP's
	// text_embeds).
	PoolNone Pooling = "none"
)

// Space identifies a vector space: vectors are comparable only within one Space. The memory
// store keeps [Space.Fingerprint] with every vector, so that changing the model (or any setting
// that changes the vectors) re-embeds in the background instead of mixing spaces.
type Space struct {
	// Model is the model id, e.g. "bge-small-zh-v1.5".
	Model string `json:"model"`
	// SHA256 is the hex SHA-256 of the ONNX file (of both files, "text+vision", for two towers).
	SHA256 string `json:"sha256"`
	// Pooling, Normalize, the prefixes and MaxTokens are the embedding settings.
	Pooling       Pooling `json:"pooling"`
	Normalize     bool    `json:"normalize"`
	QueryPrefix   string  `json:"query_prefix,omitempty"`
	PassagePrefix string  `json:"passage_prefix,omitempty"`
	MaxTokens     int     `json:"max_tokens"`
	// Dim is the vector length.
	Dim int `json:"dim"`
}

// Fingerprint returns a short stable string naming the space, "<model>:<24 hex digits>" (a
// digest of every field). Two Spaces have the same fingerprint exactly when they are equal.
func (s Space) Fingerprint() string {
	data, err := json.Marshal(s)
	if err != nil { // a struct of strings, ints and bools always marshals
		panic(err)
	}
	sum := sha256.Sum256(data)
	return s.Model + ":" + hex.EncodeToString(sum[:12])
}

// Embedder turns texts into vectors of one [Space]. Implementations are safe for concurrent
// use.
type Embedder interface {
	// Space identifies the vectors this Embedder returns.
	Space() Space
	// EmbedTexts returns one vector of Space().Dim floats per text, in order. It honours ctx
	// between batches and, where the runtime allows, within one.
	EmbedTexts(ctx context.Context, texts []string, role Role) ([][]float32, error)
	// Close releases the model (its ONNX Runtime session); later calls fail.
	Close() error
}

// ImageEmbedder is an [Embedder] whose space also holds images (CLIP-like models): an image
// and a text describing it are near each other.
type ImageEmbedder interface {
	Embedder
	// EmbedImages returns one vector per image, in the same space as EmbedTexts.
	EmbedImages(ctx context.Context, imgs []image.Image) ([][]float32, error)
}

// Cosine returns the cosine similarity of a and b, in [-1, 1]. It is 0 when the lengths
// differ or either vector is zero (no similarity can be claimed); for L2-normalised vectors it
// is their dot product.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(max(-1, min(1, dot/math.Sqrt(na*nb))))
}

// normalizeL2 scales v to unit length in place; a zero vector stays zero.
func normalizeL2(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := 1 / math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// pool turns one text's model output into its vector. hidden is the text's [seq × dim] rows
// (row-major) for PoolCLS and PoolMean, or its [dim] vector for PoolNone; mask is its
// attention mask (1 for real tokens).
func pool(p Pooling, hidden []float32, mask []int64, dim int) []float32 {
	out := make([]float32, dim)
	switch p {
	case PoolCLS:
		copy(out, hidden[:dim])
	case PoolMean:
		sum := make([]float64, dim)
		var n float64
		for t, m := range mask {
			if m == 0 {
				continue
			}
			row := hidden[t*dim : (t+1)*dim]
			for i, x := range row {
				sum[i] += float64(x)
			}
			n++
		}
		if n > 0 {
			for i := range out {
				out[i] = float32(sum[i] / n)
			}
		}
	case PoolNone:
		copy(out, hidden[:dim])
	}
	return out
}

// Text model input names: what the exports of BERT-like models (bge, e5, Chinese-CLIP's text
// tower) call them.
const (
	InputIDsName      = "input_ids"
	AttentionMaskName = "attention_mask"
	TokenTypeIDsName  = "token_type_ids"
	PixelValuesName   = "pixel_values"
)

// TextModelConfig describes a text model for [NewTextEmbedder].
type TextModelConfig struct {
	// ID is the model id the [Space] carries.
	ID string
	// ModelPath is the ONNX file.
	ModelPath string
	// SHA256 is the hex SHA-256 of ModelPath for the [Space]; "" computes it (a read of the
	// whole file).
	SHA256 string
	// Tokenizer produces the input ids (a [WordPiece] or a [Unigram]).
	Tokenizer TextTokenizer
	// Output is the output to read: "last_hidden_state" ([batch, seq, dim]) for PoolCLS and
	// PoolMean, or a [batch, dim] output such as "text_embeds" for PoolNone. "" means
	// "last_hidden_state" (PoolNone: "text_embeds").
	Output string
	// Pooling, Normalize (L2) and the role prefixes (prepended to each text) are the model's
	// settings; see the model's card.
	Pooling       Pooling
	Normalize     bool
	QueryPrefix   string
	PassagePrefix string
	// MaxTokens limits a text's ids, special tokens included (longer texts are cut); ≤ 0 means
	// 512.
	MaxTokens int
	// BatchSize is the most texts run at once; ≤ 0 means 32.
	BatchSize int
	// BatchTokens caps a batch's padded size, texts × longest text in tokens, so that a batch
	// holding one long text stays small (attention memory grows with the square of the
	// length); ≤ 0 means 4096 (8 texts of 512 tokens, or 32 of 128).
	BatchTokens int
	// Dim, if > 0, is the vector length the model must produce.
	Dim int
	// ImageSize is the side of the blank image fed to a combined text+image model's
	// pixel_values input when only texts are embedded; ≤ 0 means 224.
	ImageSize int
}

// TextEmbedder is the [Embedder] of an ONNX text model run by ONNX Runtime: tokenize, batch
// (texts of similar length together, padded with the tokenizer's pad id and masked), run,
// pool, normalise. It is safe for concurrent use; [TextEmbedder.Close] releases the session.
type TextEmbedder struct {
	cfg   TextModelConfig
	space Space
	run   *onnxRunner
}

// NewTextEmbedder opens the model: it loads ONNX Runtime (rt) if needed, checks the model's
// inputs and outputs against cfg (a clear error names what differs), and creates the session.
func NewTextEmbedder(rt *ORT, cfg TextModelConfig) (*TextEmbedder, error) {
	if cfg.ID == "" {
		return nil, errors.New("embed: text model: no model id")
	}
	if cfg.Tokenizer == nil {
		return nil, fmt.Errorf("embed: text model %s: no tokenizer", cfg.ID)
	}
	switch cfg.Pooling {
	case PoolCLS, PoolMean, PoolNone:
	default:
		return nil, fmt.Errorf("embed: text model %s: unknown pooling %q (want cls, mean or none)", cfg.ID, cfg.Pooling)
	}
	if cfg.Output == "" {
		cfg.Output = "last_hidden_state"
		if cfg.Pooling == PoolNone {
			cfg.Output = "text_embeds"
		}
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 512
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 32
	}
	if cfg.BatchTokens <= 0 {
		cfg.BatchTokens = 4096
	}
	if cfg.ImageSize <= 0 {
		cfg.ImageSize = 224
	}
	rank := 3
	if cfg.Pooling == PoolNone {
		rank = 2
	}
	run, err := newONNXRunner(rt, cfg.ID, cfg.ModelPath, onnxWant{
		texts: true, output: cfg.Output, outputRank: rank, dim: cfg.Dim, imageSize: cfg.ImageSize,
	})
	if err != nil {
		return nil, err
	}
	sum := cfg.SHA256
	if sum == "" {
		if sum, err = fileSHA256(cfg.ModelPath); err != nil {
			run.close()
			return nil, fmt.Errorf("embed: text model %s: %w", cfg.ID, err)
		}
	}
	cfg.Dim = run.dim
	return &TextEmbedder{cfg: cfg, run: run, space: Space{
		Model: cfg.ID, SHA256: sum, Pooling: cfg.Pooling, Normalize: cfg.Normalize,
		QueryPrefix: cfg.QueryPrefix, PassagePrefix: cfg.PassagePrefix, MaxTokens: cfg.MaxTokens, Dim: run.dim,
	}}, nil
}

// Space implements [Embedder].
func (e *TextEmbedder) Space() Space { return e.space }

// EmbedTexts implements [Embedder]. An empty text embeds as the special tokens alone.
func (e *TextEmbedder) EmbedTexts(ctx context.Context, texts []string, role Role) ([][]float32, error) {
	prefix, err := rolePrefix(role, e.cfg.QueryPrefix, e.cfg.PassagePrefix)
	if err != nil {
		return nil, err
	}
	ids := make([][]int64, len(texts))
	for i, t := range texts {
		ids[i] = e.cfg.Tokenizer.Encode(prefix+t, e.cfg.MaxTokens)
		if len(ids[i]) == 0 {
			return nil, fmt.Errorf("embed: model %s: text %d has no tokens (empty, and the tokenizer adds no special tokens)", e.cfg.ID, i)
		}
	}
	return e.run.embedIDs(ctx, ids, e.cfg.BatchSize, e.cfg.BatchTokens, e.cfg.Tokenizer.PadID(), e.cfg.Pooling, e.cfg.Normalize)
}

// Close releases the ONNX session. Later calls fail with [ErrEmbedderClosed].
func (e *TextEmbedder) Close() error { return e.run.close() }

// ErrEmbedderClosed is returned by the Embed methods after Close.
var ErrEmbedderClosed = errors.New("embed: embedder closed")

func rolePrefix(role Role, query, passage string) (string, error) {
	switch role {
	case Query:
		return query, nil
	case Passage:
		return passage, nil
	}
	return "", fmt.Errorf("embed: invalid role %d (want embed.Query or embed.Passage)", int(role))
}

// onnxWant is what an embedder needs of a model: the inputs it can feed and the output it
// reads.
type onnxWant struct {
	texts      bool // the embedder feeds texts (input_ids, attention_mask, token_type_ids)
	images     bool // the embedder feeds images (pixel_values)
	output     string
	outputRank int // 3: [batch, seq, dim]; 2: [batch, dim]
	dim        int // > 0: required last dimension of the output
	imageSize  int // side of pixel_values
}

// onnxRunner is one ONNX session and how to feed it.
type onnxRunner struct {
	id      string
	path    string
	inputs  []string // the model's inputs, in session order
	dim     int
	imgSize int

	mu      sync.RWMutex // held shared by runs, exclusively by close
	session *ort.DynamicAdvancedSession
}

// checkONNX reads the model's inputs and outputs and checks them against want; it returns the
// input names in model order and the output's vector length.
func checkONNX(rt *ORT, id, path string, want onnxWant) ([]string, int, error) {
	if err := rt.Load(); err != nil {
		return nil, 0, fmt.Errorf("embed: model %s needs ONNX Runtime: %w", id, err)
	}
	opts, err := rt.SessionOptions()
	if err != nil {
		return nil, 0, fmt.Errorf("embed: model %s: %w", id, err)
	}
	defer opts.Destroy()
	ins, outs, err := ort.GetInputOutputInfoWithOptions(path, opts)
	if err != nil {
		return nil, 0, fmt.Errorf("embed: model %s: %s is not a usable ONNX model: %w", id, path, err)
	}
	var names []string
	seen := map[string]bool{}
	for _, in := range ins {
		names = append(names, in.Name)
		seen[in.Name] = true
		switch in.Name {
		case InputIDsName, AttentionMaskName, TokenTypeIDsName:
			if in.DataType != ort.TensorElementDataTypeInt64 || len(in.Dimensions) != 2 {
				return nil, 0, fmt.Errorf("embed: model %s: input %s is %v %s, want int64 [batch, sequence]", id, in.Name, in.Dimensions, in.DataType)
			}
		case PixelValuesName:
			d := in.Dimensions
			if in.DataType != ort.TensorElementDataTypeFloat || len(d) != 4 || d[1] != 3 ||
				d[2] > 0 && d[2] != int64(want.imageSize) || d[3] > 0 && d[3] != int64(want.imageSize) {
				return nil, 0, fmt.Errorf("embed: model %s: input %s is %v %s, want float [batch, 3, %d, %d]", id, in.Name, d, in.DataType, want.imageSize, want.imageSize)
			}
		default:
			return nil, 0, fmt.Errorf("embed: model %s: unexpected input %q (%v); the embedder feeds %s, %s, %s and %s only",
				id, in.Name, in.Dimensions, InputIDsName, AttentionMaskName, TokenTypeIDsName, PixelValuesName)
		}
	}
	if want.texts && (!seen[InputIDsName] || !seen[AttentionMaskName]) {
		return nil, 0, fmt.Errorf("embed: model %s has inputs %v, want %s and %s", id, names, InputIDsName, AttentionMaskName)
	}
	if want.images && !seen[PixelValuesName] {
		return nil, 0, fmt.Errorf("embed: model %s has inputs %v, want %s", id, names, PixelValuesName)
	}
	var outNames []string
	for _, out := range outs {
		outNames = append(outNames, out.Name)
		if out.Name != want.output {
			continue
		}
		d := out.Dimensions
		if out.DataType != ort.TensorElementDataTypeFloat || len(d) != want.outputRank || d[len(d)-1] <= 0 {
			shape := "[batch, sequence, dim]"
			if want.outputRank == 2 {
				shape = "[batch, dim]"
			}
			return nil, 0, fmt.Errorf("embed: model %s: output %s is %v %s, want float %s with a fixed dim", id, out.Name, d, out.DataType, shape)
		}
		dim := int(d[len(d)-1])
		if want.dim > 0 && dim != want.dim {
			return nil, 0, fmt.Errorf("embed: model %s: output %s has dim %d, want %d", id, out.Name, dim, want.dim)
		}
		return names, dim, nil
	}
	return nil, 0, fmt.Errorf("embed: model %s has outputs %v, want %s", id, outNames, want.output)
}

func newONNXRunner(rt *ORT, id, path string, want onnxWant) (*onnxRunner, error) {
	names, dim, err := checkONNX(rt, id, path, want)
	if err != nil {
		return nil, err
	}
	opts, err := rt.SessionOptions()
	if err != nil {
		return nil, fmt.Errorf("embed: model %s: %w", id, err)
	}
	defer opts.Destroy()
	// Without the CPU arena, the memory of a large batch goes back when the run ends instead
	// of staying reserved for the life of the session.
	if err := opts.SetCpuMemArena(false); err != nil {
		return nil, fmt.Errorf("embed: model %s: session options: %w", id, err)
	}
	s, err := ort.NewDynamicAdvancedSession(path, names, []string{want.output}, opts)
	if err != nil {
		return nil, fmt.Errorf("embed: model %s: create session for %s: %w", id, path, err)
	}
	return &onnxRunner{id: id, path: path, inputs: names, dim: dim, imgSize: want.imageSize, session: s}, nil
}

func (r *onnxRunner) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.session == nil {
		return nil
	}
	err := r.session.Destroy()
	r.session = nil
	if err != nil {
		return fmt.Errorf("embed: close model %s: %w", r.id, err)
	}
	return nil
}

// embedIDs runs the token ids in batches of similar length, at most batchSize texts and
// batchTokens padded tokens each (a single longer text runs alone), and pools each text's
// output.
func (r *onnxRunner) embedIDs(ctx context.Context, ids [][]int64, batchSize, batchTokens int, pad int64, p Pooling, normalize bool) ([][]float32, error) {
	// Large batches leave freed memory in glibc's heaps; hand it back when the call ends, or
	// the process keeps its peak (≈ 250 MB more RSS for a bge-small-sized model).
	defer releaseFreedMemory()
	out := make([][]float32, len(ids))
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	// Sorting by length keeps padding (and wasted compute) small.
	sort.SliceStable(order, func(a, b int) bool { return len(ids[order[a]]) < len(ids[order[b]]) })
	for start := 0; start < len(order); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		// Sorted by length, so the last text of a batch is its longest.
		end := start + 1
		for end < len(order) && end-start < batchSize && (end-start+1)*len(ids[order[end]]) <= batchTokens {
			end++
		}
		batch := order[start:end]
		start = end
		seq := len(ids[batch[len(batch)-1]])
		b := len(batch)
		inputIDs := make([]int64, b*seq)
		mask := make([]int64, b*seq)
		for row, i := range batch {
			for t := range seq {
				if t < len(ids[i]) {
					inputIDs[row*seq+t], mask[row*seq+t] = ids[i][t], 1
				} else {
					inputIDs[row*seq+t] = pad
				}
			}
		}
		vecs, err := r.runTexts(ctx, b, seq, inputIDs, mask, p)
		if err != nil {
			return nil, err
		}
		for row, i := range batch {
			if normalize {
				normalizeL2(vecs[row])
			}
			out[i] = vecs[row]
		}
	}
	return out, nil
}

// runTexts runs one padded batch and pools it.
func (r *onnxRunner) runTexts(ctx context.Context, b, seq int, inputIDs, mask []int64, p Pooling) ([][]float32, error) {
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
		case InputIDsName:
			v, err = ort.NewTensor(ort.NewShape(int64(b), int64(seq)), inputIDs)
		case AttentionMaskName:
			v, err = ort.NewTensor(ort.NewShape(int64(b), int64(seq)), mask)
		case TokenTypeIDsName:
			v, err = ort.NewTensor(ort.NewShape(int64(b), int64(seq)), make([]int64, b*seq))
		case PixelValuesName:
			// A combined text+image model also wants an image: one blank image, ignored.
			v, err = ort.NewTensor(ort.NewShape(1, 3, int64(r.imgSize), int64(r.imgSize)), make([]float32, 3*r.imgSize*r.imgSize))
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
	want := []int64{int64(b), int64(seq), int64(r.dim)}
	if p == PoolNone {
		want = []int64{int64(b), int64(r.dim)}
	}
	if !slices.Equal(shape, want) {
		return nil, fmt.Errorf("embed: model %s returned shape %v, want %v", r.id, shape, want)
	}
	vecs := make([][]float32, b)
	stride := len(data) / b
	for row := range b {
		vecs[row] = pool(p, data[row*stride:(row+1)*stride], mask[row*seq:(row+1)*seq], r.dim)
	}
	return vecs, nil
}

// run runs the session on inputs (which the caller destroys) and returns the output's data
// and shape. Cancelling ctx terminates the run.
func (r *onnxRunner) run(ctx context.Context, inputs []ort.Value) ([]float32, []int64, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.session == nil {
		return nil, nil, ErrEmbedderClosed
	}
	opts, err := ort.NewRunOptions()
	if err != nil {
		return nil, nil, fmt.Errorf("embed: model %s: run options: %w", r.id, err)
	}
	defer opts.Destroy()
	stop := context.AfterFunc(ctx, func() { opts.Terminate() })
	outputs := []ort.Value{nil}
	err = r.session.RunWithOptions(inputs, outputs, opts)
	stop()
	if outputs[0] != nil {
		defer outputs[0].Destroy()
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("embed: model %s: %w", r.id, ctx.Err())
	}
	if err != nil {
		return nil, nil, fmt.Errorf("embed: model %s: run: %w", r.id, err)
	}
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, nil, fmt.Errorf("embed: model %s: output is %T, want a float tensor", r.id, outputs[0])
	}
	return slices.Clone(t.GetData()), slices.Clone(t.GetShape()), nil
}

var _ Embedder = (*TextEmbedder)(nil)
