package stt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/vad"
)

// Config names the files of a Whisper model in the layout of Hugging Face's ONNX exports
// (optimum, onnx-community/whisper-*): an encoder (input_features [batch, mels, 3000] →
// last_hidden_state [batch, 1500, d]) and a decoder without cache (input_ids [batch, tokens]
// and encoder_hidden_states → logits [batch, tokens, vocabulary]).
type Config struct {
	Encoder, Decoder, Tokenizer string
	// Language is the spoken language's code ("en", "zh"…); "" detects it per recording.
	Language string
	// MaxTokens bounds the tokens of one 30 s chunk (≤ 0: 224, half Whisper's text context).
	MaxTokens int
}

// Model transcribes speech with a Whisper model. It is safe for concurrent use; runs take
// turns.
type Model struct {
	cfg    Config
	tokens *Tokens
	nMels  int

	mu       sync.Mutex
	front    *melFrontEnd
	enc, dec *ort.DynamicAdvancedSession
	closed   bool
}

// ErrClosed is returned by calls on a closed Model.
var ErrClosed = errors.New("stt: model closed")

// Open loads the model's tokenizer and both networks into rt (loading rt first if needed) and
// checks their inputs and outputs.
func Open(rt *embed.ORT, cfg Config) (*Model, error) {
	if rt == nil {
		return nil, errors.New("stt: no ONNX Runtime given")
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 224
	}
	tok, err := LoadTokens(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	if err := rt.Load(); err != nil {
		return nil, fmt.Errorf("stt: %w", err)
	}
	if cfg.Language != "" {
		if _, ok := tok.Languages[cfg.Language]; !ok {
			return nil, fmt.Errorf("stt: the model knows no language %q", cfg.Language)
		}
	}
	nMels, err := checkIO(cfg.Encoder, "encoder", []string{"input_features"}, []string{"last_hidden_state"})
	if err != nil {
		return nil, err
	}
	if _, err := checkIO(cfg.Decoder, "decoder", []string{"input_ids", "encoder_hidden_states"}, []string{"logits"}); err != nil {
		return nil, err
	}
	so, err := rt.SessionOptions()
	if err != nil {
		return nil, fmt.Errorf("stt: %w", err)
	}
	defer so.Destroy()
	enc, err := ort.NewDynamicAdvancedSession(cfg.Encoder, []string{"input_features"}, []string{"last_hidden_state"}, so)
	if err != nil {
		return nil, fmt.Errorf("stt: encoder %s: %w", cfg.Encoder, err)
	}
	dec, err := ort.NewDynamicAdvancedSession(cfg.Decoder, []string{"input_ids", "encoder_hidden_states"}, []string{"logits"}, so)
	if err != nil {
		enc.Destroy()
		return nil, fmt.Errorf("stt: decoder %s: %w", cfg.Decoder, err)
	}
	return &Model{cfg: cfg, tokens: tok, nMels: nMels, front: newMelFrontEnd(nMels), enc: enc, dec: dec}, nil
}

// checkIO checks that the network at path has the inputs and outputs named; for the encoder it
// returns the mel bins its input_features read (80, or 128 for large-v3).
func checkIO(path, what string, inputs, outputs []string) (int, error) {
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return 0, fmt.Errorf("stt: %s %s: %w", what, path, err)
	}
	names := func(infos []ort.InputOutputInfo) []string {
		var n []string
		for _, i := range infos {
			n = append(n, i.Name)
		}
		return n
	}
	for _, want := range inputs {
		if !slices.Contains(names(ins), want) {
			return 0, fmt.Errorf("stt: %s %s is not a Whisper %s: inputs %v, no %s", what, path, what, names(ins), want)
		}
	}
	for _, want := range outputs {
		if !slices.Contains(names(outs), want) {
			return 0, fmt.Errorf("stt: %s %s is not a Whisper %s: outputs %v, no %s", what, path, what, names(outs), want)
		}
	}
	for _, in := range ins {
		if in.Name != "input_features" {
			continue
		}
		d := in.Dimensions
		if len(d) != 3 || (d[2] > 0 && d[2] != Frames) || d[1] <= 0 || d[1] > 256 {
			return 0, fmt.Errorf("stt: encoder %s reads input_features %v, want [batch, mels, %d]", path, d, Frames)
		}
		return int(d[1]), nil
	}
	return 0, nil
}

// Close releases the networks once running calls have returned; it is idempotent.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	return errors.Join(m.enc.Destroy(), m.dec.Destroy())
}

// Transcript is what was said in a recording.
type Transcript struct {
	Text     string
	Language string
	// Speech is how much of the recording was transcribed (all of it without a detector).
	Speech time.Duration
}

// Transcribe returns the text of samples (16 kHz mono, in [-1, 1]). With det, only the
// stretches of speech it finds are transcribed (none: an empty transcript), grouped into
// chunks of at most 30 s; without, the recording is cut into 30 s chunks. The language is the
// configured one or the one the model detects in the first chunk.
func (m *Model) Transcribe(ctx context.Context, samples []float32, det *vad.Detector) (Transcript, error) {
	chunks := [][]float32{}
	if det != nil {
		segs, err := det.Segments(ctx, samples)
		if err != nil {
			return Transcript{}, err
		}
		chunks = speechChunks(samples, segs)
	} else {
		for off := 0; off < len(samples); off += ChunkSamples {
			chunks = append(chunks, samples[off:min(off+ChunkSamples, len(samples))])
		}
	}
	var (
		tr    Transcript
		parts []string
	)
	for _, c := range chunks {
		text, lang, err := m.chunk(ctx, c, tr.Language)
		if err != nil {
			return Transcript{}, err
		}
		tr.Language = lang
		tr.Speech += time.Duration(len(c)) * time.Second / SampleRate
		if text = strings.TrimSpace(text); text != "" {
			parts = append(parts, text)
		}
	}
	tr.Text = joinParts(parts)
	return tr, nil
}

// joinParts joins the chunks' texts with a space, or nothing between Han characters.
func joinParts(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 && !(isHan(lastRune(parts[i-1])) && isHan(firstRune(p))) {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}

// speechChunks groups the speech segments into chunks of at most 30 s of audio (a longer
// segment is cut).
func speechChunks(samples []float32, segs []vad.Segment) [][]float32 {
	at := func(d time.Duration) int { return min(len(samples), int(d*SampleRate/time.Second)) }
	var out [][]float32
	start, end := -1, -1
	flush := func() {
		if start >= 0 {
			out = append(out, samples[start:end])
		}
		start = -1
	}
	for _, s := range segs {
		a, b := at(s.Start), at(s.End)
		for a < b {
			if start >= 0 && b-start > ChunkSamples {
				flush()
			}
			if start < 0 {
				start = a
			}
			end = min(b, start+ChunkSamples)
			if end < b {
				a = end
				flush()
				continue
			}
			a = b
		}
	}
	flush()
	return out
}

// chunk transcribes at most 30 s: features, encoder, then greedy decoding from Whisper's
// prompt (start of transcript, language, transcribe, no timestamps) until end of text.
func (m *Model) chunk(ctx context.Context, samples []float32, lang string) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", "", ErrClosed
	}
	feats := m.front.logMel(samples)
	in, err := ort.NewTensor(ort.NewShape(1, int64(m.nMels), Frames), feats)
	if err != nil {
		return "", "", fmt.Errorf("stt: %w", err)
	}
	defer in.Destroy()
	encOut := []ort.Value{nil}
	if err := m.enc.Run([]ort.Value{in}, encOut); err != nil {
		return "", "", fmt.Errorf("stt: encoder: %w", err)
	}
	hidden := encOut[0]
	defer hidden.Destroy()

	t := m.tokens
	if lang == "" {
		lang = m.cfg.Language
	}
	if lang == "" {
		logits, err := m.next(ctx, []int{t.StartOfTranscript}, hidden)
		if err != nil {
			return "", "", err
		}
		best := t.langIDs[0]
		for _, id := range t.langIDs {
			if id < len(logits) && logits[id] > logits[best] {
				best = id
			}
		}
		lang = t.Language(best)
	}
	prompt := []int{t.StartOfTranscript, t.Languages[lang], t.Transcribe, t.NoTimestamps}
	ids := slices.Clone(prompt)
	for len(ids)-len(prompt) < m.cfg.MaxTokens {
		logits, err := m.next(ctx, ids, hidden)
		if err != nil {
			return "", "", err
		}
		best := -1
		for id, v := range logits {
			if (id == t.EndOfText || !t.Special(id)) && (best < 0 || v > logits[best]) {
				best = id
			}
		}
		if best < 0 || best == t.EndOfText || looping(ids[len(prompt):], best) {
			break
		}
		ids = append(ids, best)
	}
	return t.Text(ids[len(prompt):]), lang, nil
}

// looping says whether next would repeat the last token for the 10th time: a model stuck on
// one token (Whisper's known failure on noise) stops there.
func looping(ids []int, next int) bool {
	const most = 10
	if len(ids) < most-1 {
		return false
	}
	for _, id := range ids[len(ids)-(most-1):] {
		if id != next {
			return false
		}
	}
	return true
}

// next runs the decoder over ids and returns the logits of the last position.
func (m *Model) next(ctx context.Context, ids []int, hidden ort.Value) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data := make([]int64, len(ids))
	for i, id := range ids {
		data[i] = int64(id)
	}
	in, err := ort.NewTensor(ort.NewShape(1, int64(len(ids))), data)
	if err != nil {
		return nil, fmt.Errorf("stt: %w", err)
	}
	defer in.Destroy()
	out := []ort.Value{nil}
	if err := m.dec.Run([]ort.Value{in, hidden}, out); err != nil {
		return nil, fmt.Errorf("stt: decoder: %w", err)
	}
	defer out[0].Destroy()
	logits, ok := out[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("stt: decoder logits are %T, want float32", out[0])
	}
	shape := logits.GetShape()
	if len(shape) != 3 || shape[1] != int64(len(ids)) || shape[2] <= 0 {
		return nil, fmt.Errorf("stt: decoder logits have shape %v for %d tokens", shape, len(ids))
	}
	v := int(shape[2])
	last := logits.GetData()[(len(ids)-1)*v:]
	return slices.Clone(last[:v]), nil
}

func isHan(r rune) bool {
	return r >= 0x2E80 && r <= 0x9FFF || r >= 0xF900 && r <= 0xFAFF || r >= 0xFF00 && r <= 0xFFEF
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}

func lastRune(s string) rune {
	r := []rune(s)
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1]
}
