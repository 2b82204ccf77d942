package stt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/hologramagent/hologram/memory"
	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/vad"
)

// Assets are what transcribing voice messages needs.
type Assets struct {
	// Runtime is ONNX Runtime (the one the dense embeddings use); nil: no transcription.
	Runtime *embed.ORT
	// Models is the model manager whose installed speech model transcribes; nil: none.
	Models *embed.Manager
	// VADDir holds the Silero VAD model (vad.ResolveModelDir); VADErr says why it is empty
	// (recordings are then transcribed whole).
	VADDir string
	VADErr error
	// Language is the spoken language's code ("" detects it per message).
	Language string
	// FFmpeg is the ffmpeg command ("" looks it up on PATH).
	FFmpeg string
}

// ErrNoModel is wrapped by the errors of a transcription without an installed speech model.
var ErrNoModel = errors.New("no speech-to-text model is installed")

// InstallHint is how the owner gets a speech model.
const InstallHint = "`waiter model install whisper-base` (≈ 290 MB, or the desktop app's Models page) downloads one"

// Lazy opens the installed speech model on the first voice message (and again after one is
// installed: a message before that finds none), and the voice activity detector with it. It is
// safe for concurrent use.
type Lazy struct {
	deps Assets
	log  *slog.Logger

	mu     sync.Mutex
	model  *Model
	id     string
	failed map[string]error // a model id whose files do not open, and why
	det    *vad.Detector
	detTry bool
	closed bool
}

// NewLazy returns the lazy transcriber over assets; failures are logged to log (nil: discarded).
func NewLazy(assets Assets, log *slog.Logger) *Lazy {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Lazy{deps: assets, log: log, failed: map[string]error{}}
}

// CheckFiles opens and closes a speech model: the model manager's install check
// (embed.ManagerOptions.CheckSpeech).
func CheckFiles(rt *embed.ORT) func(embed.SpeechFiles) error {
	return func(f embed.SpeechFiles) error {
		m, err := Open(rt, Config{Encoder: f.Encoder, Decoder: f.Decoder, Tokenizer: f.Tokenizer})
		if err != nil {
			return err
		}
		return m.Close()
	}
}

func (l *Lazy) load() (*Model, *vad.Detector, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, nil, errors.New("the kernel is closed")
	case l.model != nil:
		return l.model, l.det, nil
	case l.deps.Runtime == nil:
		return nil, nil, errors.New("speech-to-text needs ONNX Runtime, which is not installed (make onnxruntime, or the packages' /usr/lib/hologram/onnxruntime)")
	case l.deps.Models == nil:
		return nil, nil, fmt.Errorf("%w: this kernel has no model manager", ErrNoModel)
	}
	files, err := l.deps.Models.Speech("")
	if errors.Is(err, embed.ErrNotInstalled) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoModel, InstallHint)
	} else if err != nil {
		return nil, nil, err
	}
	if err := l.failed[files.ID]; err != nil {
		return nil, nil, err
	}
	m, err := Open(l.deps.Runtime, Config{Encoder: files.Encoder, Decoder: files.Decoder, Tokenizer: files.Tokenizer, Language: l.deps.Language})
	if err != nil {
		err = fmt.Errorf("speech model %s does not open (remove and install it again): %w", files.ID, err)
		l.failed[files.ID] = err
		l.log.Error("speech-to-text model", "model", files.ID, "err", err)
		return nil, nil, err
	}
	l.model, l.id = m, files.ID
	if !l.detTry {
		l.detTry = true
		if l.deps.VADDir == "" {
			l.log.Warn("no voice activity model: recordings are transcribed whole", "err", l.deps.VADErr)
		} else if l.det, err = vad.New(l.deps.Runtime, l.deps.VADDir, vad.Options{}); err != nil {
			l.log.Warn("voice activity model does not load: recordings are transcribed whole", "err", err)
		}
	}
	l.log.Info("speech-to-text model loaded", "model", files.ID, "vad", l.det != nil)
	return m, l.det, nil
}

// Close closes the model and the detector, if loaded; later calls fail.
func (l *Lazy) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.model != nil {
		_ = l.model.Close()
	}
	if l.det != nil {
		_ = l.det.Close()
	}
}

// Transcribe decodes and transcribes one encoded recording.
func (l *Lazy) Transcribe(ctx context.Context, data []byte) (Transcript, error) {
	m, det, err := l.load()
	if err != nil {
		return Transcript{}, err
	}
	samples, err := Decode(ctx, data, DecodeOptions{FFmpeg: l.deps.FFmpeg})
	if err != nil {
		return Transcript{}, err
	}
	return m.Transcribe(ctx, samples, det)
}

// Blocks gives every audio block without text its transcript, so that the message carries
// what was said and memory indexes it with the event. It returns the transcripts, in order, and
// a note for the owner per recording left without one (no model: how to get one; no speech
// found; a recording that does not decode). The recordings are kept either way.
func (l *Lazy) Blocks(ctx context.Context, blocks []memory.Block) (said []string, notes []string) {
	for i := range blocks {
		b := &blocks[i]
		if b.Kind != memory.BlockAudio || len(b.Data) == 0 {
			continue
		}
		if t := strings.TrimSpace(b.Text); t != "" {
			said = append(said, t)
			continue
		}
		name := b.Name
		if name == "" {
			name = "the voice message"
		}
		tr, err := l.Transcribe(ctx, b.Data)
		switch {
		case err != nil:
			l.log.Warn("voice message not transcribed; it is kept as audio", "name", b.Name, "err", err)
			notes = append(notes, fmt.Sprintf("%s was not transcribed: %v. It is kept as audio.", name, err))
		case tr.Text == "":
			notes = append(notes, fmt.Sprintf("No speech was found in %s.", name))
		default:
			b.Text = tr.Text
			said = append(said, tr.Text)
		}
	}
	return said, notes
}
