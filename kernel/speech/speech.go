// Package speech turns a reply into spoken audio with espeak-ng, Debian's speech synthesiser,
// run as a command: the kernel starts without it, and a missing espeak-ng is an error that says
// how to install it. The voice follows the text's script — Mandarin (espeak-ng's "cmn") for
// text written mostly in Han characters, else the language of the owner's locale, else English.
package speech

import (
	"github.com/hologramagent/hologram/kernel/config"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"unicode"
)

// MaxText bounds the characters one request may speak (about ten minutes of speech).
const MaxText = 10_000

// ErrUnavailable is returned when espeak-ng is not installed.
var ErrUnavailable = errors.New("speech needs espeak-ng: install it with `sudo apt install espeak-ng`")

// ErrTooLong is returned for text over MaxText characters.
var ErrTooLong = fmt.Errorf("speech: the text is over %d characters", MaxText)

// Synth speaks text with espeak-ng. Its zero value looks for espeak-ng on PATH and reads the
// locale from the environment.
type Synth struct {
	// Command is the espeak-ng binary; empty looks up "espeak-ng" on PATH.
	Command string
	// FFmpeg encodes Ogg/Opus; empty looks up "ffmpeg" on PATH.
	FFmpeg string
	// Getenv reads LC_ALL, LC_MESSAGES and LANG for the default voice; nil is os.Getenv.
	Getenv func(string) string
}

// Available reports whether espeak-ng can be run.
func (s Synth) Available() bool {
	_, err := s.command()
	return err == nil
}

func (s Synth) command() (string, error) {
	name := s.Command
	if name == "" {
		name = "espeak-ng"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", ErrUnavailable
	}
	return p, nil
}

// Voice is the espeak-ng voice for text: "cmn" when at least a third of its letters are Han
// characters (a Chinese reply with Latin names in it is still Chinese), else the locale's
// language ("de" for de_DE.UTF-8), else "en".
func (s Synth) Voice(text string) string {
	han, letters := 0, 0
	for _, r := range text {
		if unicode.Is(unicode.Han, r) {
			han++
			letters++
		} else if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters > 0 && 3*han >= letters {
		return "cmn"
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch lang := config.LocaleLanguage(getenv); lang {
	case "":
		return "en"
	case "zh":
		return "cmn"
	default:
		return lang
	}
}

// Formats Speak writes: a WAV stream (16-bit mono, espeak-ng's own output) or Ogg/Opus
// (ffmpeg's libopus encoder, about a tenth of the size: what chat apps send as voice notes).
const (
	FormatWAV = "wav"
	FormatOgg = "ogg"
)

// ContentType is the media type of format ("" is WAV).
func ContentType(format string) string {
	if format == FormatOgg {
		return "audio/ogg"
	}
	return "audio/wav"
}

// Speak writes text spoken with voice (empty: [Synth.Voice]) to w in format ("" or [FormatWAV]:
// a WAV file, 16-bit mono; [FormatOgg]: Ogg/Opus, which needs ffmpeg) and returns the voice used. A voice espeak-ng does not know falls back to English (w is told
// first when it is a [VoiceSetter]). The WAV's
// sizes are unknown while it streams: its header says "as long as the stream", which players
// and sox accept (`waiter say` writes the real sizes into its file afterwards).
func (s Synth) Speak(ctx context.Context, text, voice, format string, w io.Writer) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errors.New("speech: no text to speak")
	}
	if n := len([]rune(text)); n > MaxText {
		return "", ErrTooLong
	}
	cmd, err := s.command()
	if err != nil {
		return "", err
	}
	out := w
	var enc *oggEncoder
	switch format {
	case "", FormatWAV:
	case FormatOgg:
		bin, err := s.ffmpeg()
		if err != nil {
			return "", err
		}
		enc = &oggEncoder{ctx: ctx, bin: bin, w: w}
		out = enc
	default:
		return "", fmt.Errorf("speech: unknown format %q (wav or ogg)", format)
	}
	if voice == "" {
		voice = s.Voice(text)
	}
	err = run(ctx, cmd, voice, text, out)
	var unknown errUnknownVoice
	if errors.As(err, &unknown) && voice != "en" {
		voice = "en"
		if vs, ok := w.(VoiceSetter); ok {
			vs.SetVoice(voice)
		}
		err = run(ctx, cmd, voice, text, out)
	}
	if enc != nil {
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", err
	}
	return voice, nil
}

// ErrNoFFmpeg is returned for Ogg/Opus when ffmpeg is not installed.
var ErrNoFFmpeg = errors.New("speech as Ogg/Opus needs ffmpeg: install it with `sudo apt install ffmpeg` (or ask for WAV)")

func (s Synth) ffmpeg() (string, error) {
	name := s.FFmpeg
	if name == "" {
		name = "ffmpeg"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", ErrNoFFmpeg
	}
	return p, nil
}

// oggEncoder pipes the WAV stream written to it through ffmpeg into Ogg/Opus on w. ffmpeg starts
// with the first write, so a run of espeak-ng that produced nothing leaves w untouched (and can be
// retried with another voice); Close ends the input and waits for the last pages.
type oggEncoder struct {
	ctx    context.Context
	bin    string
	w      io.Writer
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr bytes.Buffer
}

func (e *oggEncoder) Write(p []byte) (int, error) {
	if e.cmd == nil {
		// 24 kHz mono at 32 kbit/s: libopus's speech range (espeak-ng speaks at 22.05 kHz).
		c := exec.CommandContext(e.ctx, e.bin, "-hide_banner", "-loglevel", "error", "-nostdin",
			"-f", "wav", "-i", "pipe:0", "-ac", "1", "-ar", "24000",
			"-c:a", "libopus", "-b:a", "32k", "-application", "voip", "-f", "ogg", "pipe:1")
		c.Stdout = e.w
		c.Stderr = &limited{b: &e.stderr, n: 4096}
		in, err := c.StdinPipe()
		if err != nil {
			return 0, err
		}
		if err := c.Start(); err != nil {
			return 0, fmt.Errorf("speech: ffmpeg: %w", err)
		}
		e.cmd, e.in = c, in
	}
	n, err := e.in.Write(p)
	if err != nil {
		return n, fmt.Errorf("speech: ffmpeg stopped reading: %s", strings.TrimSpace(e.stderr.String()))
	}
	return n, nil
}

func (e *oggEncoder) Close() error {
	if e.cmd == nil {
		return nil
	}
	e.in.Close()
	if err := e.cmd.Wait(); err != nil {
		if e.ctx.Err() != nil {
			return e.ctx.Err()
		}
		return fmt.Errorf("speech: ffmpeg: %v: %s", err, strings.TrimSpace(e.stderr.String()))
	}
	return nil
}

// VoiceSetter is implemented by a writer that wants to know the voice before the audio: Speak
// calls SetVoice when it falls back to English, before the first write.
type VoiceSetter interface{ SetVoice(voice string) }

type errUnknownVoice struct{ msg string }

func (e errUnknownVoice) Error() string { return e.msg }

// run runs espeak-ng once; the text goes on stdin (never the command line: it may start with a
// dash or be long). Nothing is written to w before espeak-ng has produced audio, so a voice it
// refuses can be retried.
func run(ctx context.Context, cmd, voice, text string, w io.Writer) error {
	c := exec.CommandContext(ctx, cmd, "-v", voice, "--stdout", "-b", "1")
	c.Stdin = strings.NewReader(text)
	var stderr bytes.Buffer
	c.Stderr = &limited{b: &stderr, n: 4096}
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("speech: %w", err)
	}
	first := make([]byte, 44)
	n, rerr := io.ReadFull(out, first)
	if rerr != nil {
		io.Copy(io.Discard, out)
		werr := c.Wait()
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "voice") || strings.Contains(msg, "Voice") {
			return errUnknownVoice{msg: fmt.Sprintf("speech: espeak-ng has no voice %q: %s", voice, msg)}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("speech: espeak-ng produced no audio (%v): %s", werr, msg)
	}
	if _, err := w.Write(first[:n]); err != nil {
		c.Process.Kill()
		c.Wait()
		return err
	}
	if _, err := io.Copy(w, out); err != nil {
		c.Process.Kill()
		c.Wait()
		return err
	}
	if err := c.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("speech: espeak-ng: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// limited keeps the first n bytes written to it.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
