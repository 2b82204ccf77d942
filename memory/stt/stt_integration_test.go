//go:build integration

package stt

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/memtest"
	"github.com/hologramagent/hologram/memory/vad"
)

const python = "/usr/bin/python3" // Debian's, with python3-onnx and python3-numpy

// gen runs testdata/gen.py with args.
func gen(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(python, "-c", "import onnx, numpy").CombinedOutput(); err != nil {
		memtest.NeedAsset(t, "python3-onnx and python3-numpy (`make deps`)", fmt.Errorf("%v: %s", err, out))
	}
	script, err := filepath.Abs(filepath.Join("testdata", "gen.py"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, append([]string{script}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("gen.py %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func runtime(t *testing.T) *embed.ORT {
	t.Helper()
	lib, err := embed.ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		memtest.NeedAsset(t, "ONNX Runtime (`make onnxruntime`)", err)
	}
	return embed.NewORT(lib, 1)
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			memtest.NeedAsset(t, tool+" (`make deps`)", err)
		}
	}
}

// spokenWAV is text said by espeak-ng (22,050 Hz mono WAV) with lead and tail of silence.
func spokenWAV(t *testing.T, voice, text string, lead, tail time.Duration) string {
	t.Helper()
	needTools(t, "espeak-ng", "sox")
	dir := t.TempDir()
	raw, padded := filepath.Join(dir, "raw.wav"), filepath.Join(dir, "speech.wav")
	if out, err := exec.Command("espeak-ng", "-v", voice, "-w", raw, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("sox", raw, padded, "pad", secs(lead), secs(tail)).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	return padded
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func writeF32(t *testing.T, path string, s []float32) {
	t.Helper()
	b := make([]byte, 4*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLogMelMatchesNumpy checks the features against gen.py's numpy computation of Whisper's
// log-mel spectrogram (written apart from the Go code).
func TestLogMelMatchesNumpy(t *testing.T) {
	dir := t.TempDir()
	speech := spokenWAV(t, "en", "the locker code is four one seven", 300*time.Millisecond, 200*time.Millisecond)
	data, err := os.ReadFile(speech)
	if err != nil {
		t.Fatal(err)
	}
	said, err := Decode(context.Background(), data, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chirp := make([]float32, 3*SampleRate)
	for i := range chirp {
		x := float64(i) / SampleRate
		chirp[i] = float32(0.3 * math.Sin(2*math.Pi*(100*x+600*x*x)))
	}
	long := make([]float32, 31*SampleRate) // over 30 s: cut
	for i := range long {
		long[i] = float32(0.1 * math.Sin(float64(i)*0.07) * math.Sin(float64(i)*0.0003))
	}
	for _, c := range []struct {
		name    string
		samples []float32
		mels    int
	}{
		{"speech", said, 80},
		{"chirp 128 mels", chirp, 128},
		{"over 30 s", long, 80},
		{"one sample", []float32{0.5}, 80},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, out := filepath.Join(dir, "in.f32"), filepath.Join(dir, "out.f32")
			writeF32(t, in, c.samples)
			gen(t, "mel", "--in", in, "--out", out, "--mels", strconv.Itoa(c.mels))
			want := readF32(t, out)
			got := LogMel(c.samples, c.mels)
			if len(got) != len(want) {
				t.Fatalf("%d features, numpy %d", len(got), len(want))
			}
			var worst float64
			at := 0
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > worst {
					worst, at = d, i
				}
			}
			// float32 output of float64 maths on both sides; FFT orders differ.
			if worst > 1e-4 {
				t.Fatalf("differs from numpy by %g at mel %d frame %d (%v vs %v)", worst, at/Frames, at%Frames, got[at], want[at])
			}
		})
	}
}

// whisperModel writes the Whisper-shaped test model (see testdata/gen.py) and opens it.
func whisperModel(t *testing.T, lang string) (*Model, string) {
	t.Helper()
	dir := t.TempDir()
	gen(t, "whisper", "--dir", dir)
	m, err := Open(runtime(t), Config{
		Encoder:   filepath.Join(dir, "onnx", "encoder_model.onnx"),
		Decoder:   filepath.Join(dir, "onnx", "decoder_model.onnx"),
		Tokenizer: filepath.Join(dir, "tokenizer.json"), Language: lang,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, dir
}

// TestWhisperShapedModel runs decoding end to end on a model whose weights are designed (the
// plumbing: features in, encoder, the decoder's prompt, greedy steps, tokens to text; not
// accuracy).
func TestWhisperShapedModel(t *testing.T) {
	m, _ := whisperModel(t, "")
	ctx := context.Background()
	const said = "Hello, world 你好"
	tone := make([]float32, 2*SampleRate)
	for i := range tone {
		tone[i] = float32(0.4 * math.Sin(2*math.Pi*300*float64(i)/SampleRate))
	}
	for _, c := range []struct {
		name    string
		samples []float32
		lang    string
		speech  time.Duration
	}{
		{"silence: the designed decoder says en", make([]float32, SampleRate), "en", time.Second},
		{"sound: zh", tone, "zh", 2 * time.Second},
		{"45 s of silence: two chunks", make([]float32, 45*SampleRate), "en", 45 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := m.Transcribe(ctx, c.samples, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := said
			if c.speech > 30*time.Second {
				want = said + " " + said // one transcript per 30 s chunk
			}
			if tr.Text != want || tr.Language != c.lang || tr.Speech != c.speech {
				t.Fatalf("got %+v, want %q in %s over %v", tr, want, c.lang, c.speech)
			}
		})
	}

	fixed, _ := whisperModel(t, "zh")
	if tr, err := fixed.Transcribe(ctx, make([]float32, SampleRate), nil); err != nil || tr.Language != "zh" {
		t.Fatalf("configured language: %+v %v", tr, err)
	}
	m.Close()
	if _, err := m.Transcribe(ctx, tone, nil); err != ErrClosed {
		t.Fatalf("after Close: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := fixed.Transcribe(cancelled, tone, nil); err == nil {
		t.Fatal("a cancelled transcription succeeded")
	}
}

// TestWhisperWithVAD transcribes only the speech the real Silero VAD finds: a padded espeak-ng
// utterance is one chunk of about its spoken length, silence is no chunk at all.
func TestWhisperWithVAD(t *testing.T) {
	m, _ := whisperModel(t, "")
	rt := runtime(t)
	vdir, err := vad.ResolveModelDir("", os.Getenv, "")
	if err != nil {
		memtest.NeedAsset(t, "the Silero VAD model (`make vad-model`)", err)
	}
	det, err := vad.New(rt, vdir, vad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer det.Close()
	data, err := os.ReadFile(spokenWAV(t, "en", "please remember that the spare key is under the blue pot", 3*time.Second, 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := Decode(context.Background(), data, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := time.Duration(len(samples)) * time.Second / SampleRate
	tr, err := m.Transcribe(context.Background(), samples, det)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "Hello, world 你好" || tr.Speech <= time.Second || tr.Speech > total-5*time.Second {
		t.Fatalf("got %+v of %v (the speech is %v)", tr, total, total-6*time.Second)
	}
	tr, err = m.Transcribe(context.Background(), make([]float32, 5*SampleRate), det)
	if err != nil || tr.Text != "" || tr.Speech != 0 {
		t.Fatalf("silence: %+v %v", tr, err)
	}
}

// TestDecodeFormats decodes the formats voice messages come in, made by ffmpeg from one espeak-ng
// utterance: each lasts as long as the WAV and holds the same sound.
func TestDecodeFormats(t *testing.T) {
	needTools(t, "ffmpeg")
	src := spokenWAV(t, "en", "voice messages come in many formats", 200*time.Millisecond, 200*time.Millisecond)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Decode(context.Background(), data, DecodeOptions{FFmpeg: "/nonexistent"}) // the Go WAV reader
	if err != nil {
		t.Fatal(err)
	}
	rms := func(s []float32) float64 {
		var sum float64
		for _, v := range s {
			sum += float64(v) * float64(v)
		}
		return math.Sqrt(sum / float64(len(s)))
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, file string }{
		{"wav", ""},
		{"ogg/opus", "voice.ogg"},
		{"mp3", "voice.mp3"},
		{"m4a", "voice.m4a"},
		{"webm", "voice.webm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := data
			if c.file != "" {
				out := filepath.Join(dir, c.file)
				if b, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", src, out).CombinedOutput(); err != nil {
					t.Fatalf("ffmpeg: %v %s", err, b)
				}
				if in, err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Decode(context.Background(), in, DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d := time.Duration(len(got)-len(ref)) * time.Second / SampleRate
			if d < -60*time.Millisecond || d > 60*time.Millisecond { // codecs pad to their frame size
				t.Errorf("%d samples, the WAV %d", len(got), len(ref))
			}
			if r, want := rms(got), rms(ref); math.Abs(r-want) > 0.2*want {
				t.Errorf("RMS %.4f, the WAV's %.4f", r, want)
			}
		})
	}
	if _, err := Decode(context.Background(), []byte("this is not audio at all"), DecodeOptions{}); err == nil || !strings.Contains(err.Error(), "ffmpeg cannot decode") {
		t.Errorf("text as audio: %v", err)
	}
	short, _ := Decode(context.Background(), data, DecodeOptions{MaxDuration: 300 * time.Millisecond})
	if len(short) != 300*SampleRate/1000 {
		t.Errorf("cut at 300 ms: %d samples", len(short))
	}
}
