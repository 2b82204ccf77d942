// Package vad finds the stretches of speech in audio with Silero VAD v5 (the ONNX model the npm
// package @ricky0123/vad-web ships; `make vad-model` puts it in build/models/vad), run with ONNX
// Runtime: voice messages are cut to what was said before transcription, and a recording of
// silence is told apart from one with speech.
//
// The model reads 16 kHz mono audio in windows of 512 samples (32 ms), each with the 64 samples
// before it as context, and carries a recurrent state from window to window; it answers each
// window's probability of speech. [Detector.Segments] turns those probabilities into speech
// segments the way Silero's own get_speech_timestamps does: speech starts at a window of
// probability ≥ Threshold, ends after MinSilence of windows below Threshold − 0.15, segments
// shorter than MinSpeech are dropped, and each keeps Pad of audio on both sides.
package vad

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/hologramagent/hologram/memory/embed"
)

// SampleRate is the rate the detector reads: callers decode or resample to 16 kHz mono.
const SampleRate = 16000

const (
	window = 512 // samples per model run at 16 kHz (32 ms)
	ctxLen = 64  // samples of the previous window the model sees with each window
)

// ModelFile is the model's file name in its directory.
const ModelFile = "silero_vad_v5.onnx"

// ModelDirEnv names the environment variable that points at the VAD model's directory.
const ModelDirEnv = "HOLOGRAM_VAD_MODEL"

// ErrModelNotFound is wrapped by the errors of [ResolveModelDir] and [New] when the model is
// missing.
var ErrModelNotFound = errors.New("voice activity model not found")

// ErrClosed is returned by calls on a closed Detector.
var ErrClosed = errors.New("vad: detector closed")

// systemModelDir is where the packages install the model; a variable so tests can move it.
var systemModelDir = "/usr/lib/hologram/models/vad"

func modelAsset() embed.AssetDir {
	return embed.AssetDir{
		What: "voice activity model (Silero VAD)", Env: ModelDirEnv, System: systemModelDir,
		Sub: "models/vad", Checkout: "build/models/vad", Make: "vad-model",
		Files: []string{ModelFile}, NotFound: ErrModelNotFound,
	}
}

// ResolveModelDir returns the directory holding [ModelFile]: configured if not "", else
// $HOLOGRAM_VAD_MODEL, else /usr/lib/hologram/models/vad, the models/vad directory next to exe,
// and build/models/vad of a checkout (`make vad-model`). The error lists the places tried.
func ResolveModelDir(configured string, getenv func(string) string, exe string) (string, error) {
	return modelAsset().Resolve(configured, getenv, exe)
}

// Options tune the segmentation; the zero value takes Silero's defaults.
type Options struct {
	// Threshold is the probability at which speech starts (default 0.5); it ends below
	// Threshold − 0.15.
	Threshold float32
	// MinSilence is how long the probability must stay low to end a segment (default 100 ms).
	MinSilence time.Duration
	// MinSpeech drops segments shorter than this (default 250 ms).
	MinSpeech time.Duration
	// Pad is the audio kept before and after each segment (default 30 ms).
	Pad time.Duration
}

func (o Options) withDefaults() Options {
	if o.Threshold <= 0 || o.Threshold >= 1 {
		o.Threshold = 0.5
	}
	if o.MinSilence <= 0 {
		o.MinSilence = 100 * time.Millisecond
	}
	if o.MinSpeech <= 0 {
		o.MinSpeech = 250 * time.Millisecond
	}
	if o.Pad < 0 {
		o.Pad = 0
	} else if o.Pad == 0 {
		o.Pad = 30 * time.Millisecond
	}
	return o
}

// Segment is one stretch of speech, as offsets from the start of the audio.
type Segment struct {
	Start, End time.Duration
}

// Detector runs the model. It is safe for concurrent use; runs take turns (the model's state
// is per call, the session is shared).
type Detector struct {
	opts Options

	mu     sync.Mutex
	sess   *ort.DynamicAdvancedSession
	closed bool
}

// New loads the model from dir ("" resolves it with [ResolveModelDir]) into rt, loading rt
// first if needed, and checks that it is Silero VAD v5 (inputs input, state, sr; outputs
// output, stateN).
func New(rt *embed.ORT, dir string, opts Options) (*Detector, error) {
	if rt == nil {
		return nil, errors.New("vad: no ONNX Runtime given")
	}
	if dir == "" {
		exe, _ := os.Executable()
		d, err := ResolveModelDir("", os.Getenv, exe)
		if err != nil {
			return nil, fmt.Errorf("vad: %w", err)
		}
		dir = d
	}
	path := filepath.Join(dir, ModelFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("vad: %w: %s is missing; run `make vad-model` in the source checkout or set %s", ErrModelNotFound, path, ModelDirEnv)
	} else if err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	if err := rt.Load(); err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	corrupt := func(why string) error {
		return fmt.Errorf("vad: %s is not the Silero VAD v5 model (%s); run `make vad-model` to fetch it again", path, why)
	}
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(data)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	names := func(infos []ort.InputOutputInfo) []string {
		var n []string
		for _, i := range infos {
			n = append(n, i.Name)
		}
		return n
	}
	if fmt.Sprint(names(ins)) != "[input state sr]" || fmt.Sprint(names(outs)) != "[output stateN]" {
		return nil, corrupt(fmt.Sprintf("inputs %v, outputs %v", names(ins), names(outs)))
	}
	so, err := rt.SessionOptions()
	if err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}
	defer so.Destroy()
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, []string{"input", "state", "sr"}, []string{"output", "stateN"}, so)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	return &Detector{opts: opts.withDefaults(), sess: sess}, nil
}

// Close releases the model once running calls have returned; it is idempotent.
func (d *Detector) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.sess.Destroy()
}

// Probabilities runs the model over samples (16 kHz mono, in [-1, 1]) and returns one
// probability of speech per 512-sample window (the last, partial window padded with silence).
func (d *Detector) Probabilities(ctx context.Context, samples []float32) ([]float32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	// The run's tensors: the window with its context, the state in and out, the rate, the
	// probability. Each is destroyed when the run ends, made or not.
	var made []ort.Value
	defer func() {
		for _, v := range made {
			v.Destroy()
		}
	}()
	var errs []error
	tensor := func(shape ...int64) *ort.Tensor[float32] {
		t, err := ort.NewEmptyTensor[float32](ort.NewShape(shape...))
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		made = append(made, t)
		return t
	}
	in, state, prob, next := tensor(1, ctxLen+window), tensor(2, 1, 128), tensor(1, 1), tensor(2, 1, 128)
	sr, err := ort.NewScalar(int64(SampleRate))
	if err == nil {
		made = append(made, sr)
	}
	if err := errors.Join(append(errs, err)...); err != nil {
		return nil, fmt.Errorf("vad: %w", err)
	}

	buf := in.GetData()
	out := make([]float32, 0, (len(samples)+window-1)/window)
	for off := 0; off < len(samples); off += window {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The context is the end of the previous window (zeros before the first).
		copy(buf[:ctxLen], buf[window:])
		clear(buf[ctxLen:])
		copy(buf[ctxLen:], samples[off:min(off+window, len(samples))])
		if err := d.sess.Run([]ort.Value{in, state, sr}, []ort.Value{prob, next}); err != nil {
			return nil, fmt.Errorf("vad: run: %w", err)
		}
		out = append(out, prob.GetData()[0])
		copy(state.GetData(), next.GetData())
	}
	return out, nil
}

// Segments returns the stretches of speech in samples (16 kHz mono, in [-1, 1]), in order.
func (d *Detector) Segments(ctx context.Context, samples []float32) ([]Segment, error) {
	probs, err := d.Probabilities(ctx, samples)
	if err != nil {
		return nil, err
	}
	return segments(probs, len(samples), d.opts), nil
}

// segments turns per-window probabilities into speech segments (see the package comment).
func segments(probs []float32, n int, o Options) []Segment {
	at := func(samples int) time.Duration {
		return time.Duration(samples) * time.Second / SampleRate
	}
	samplesOf := func(d time.Duration) int { return int(d * SampleRate / time.Second) }
	minSilence, minSpeech, pad := samplesOf(o.MinSilence), samplesOf(o.MinSpeech), samplesOf(o.Pad)
	off := o.Threshold - 0.15
	var spans [][2]int
	start, silentSince := -1, -1
	for i, p := range probs {
		pos := i * window
		switch {
		case p >= o.Threshold:
			if start < 0 {
				start = pos
			}
			silentSince = -1
		case start >= 0 && p < off:
			if silentSince < 0 {
				silentSince = pos
			}
			if pos+window-silentSince >= minSilence {
				spans = append(spans, [2]int{start, silentSince})
				start, silentSince = -1, -1
			}
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, n})
	}
	var out []Segment
	for _, s := range spans {
		if s[1]-s[0] < minSpeech {
			continue
		}
		a, b := max(0, s[0]-pad), min(n, s[1]+pad)
		if len(out) > 0 && at(a) <= out[len(out)-1].End {
			out[len(out)-1].End = at(b) // the pads met: one segment
			continue
		}
		out = append(out, Segment{at(a), at(b)})
	}
	return out
}
