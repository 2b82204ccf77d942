//go:build integration

package vad

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory/embed"
	"github.com/hologramagent/hologram/memory/memtest"
)

// realDetector loads the real Silero VAD v5 model into the checkout's ONNX Runtime.
func realDetector(t *testing.T) *Detector {
	t.Helper()
	lib, err := embed.ResolveORTLibrary("", os.Getenv, "")
	if err != nil {
		memtest.NeedAsset(t, "ONNX Runtime (`make onnxruntime`)", err)
	}
	dir, err := ResolveModelDir("", os.Getenv, "")
	if err != nil {
		memtest.NeedAsset(t, "the Silero VAD model (`make vad-model`)", err)
	}
	d, err := New(embed.NewORT(lib, 1), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// spoken is text said by espeak-ng with the voice, at 16 kHz mono (sox resamples espeak-ng's
// 22,050 Hz), as samples in [-1, 1].
func spoken(t *testing.T, voice, text string) []float32 {
	t.Helper()
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			memtest.NeedAsset(t, tool+" (`make deps`)", err)
		}
	}
	dir := t.TempDir()
	raw, pcm := filepath.Join(dir, "raw.wav"), filepath.Join(dir, "16k.raw")
	if out, err := exec.Command("espeak-ng", "-v", voice, "-w", raw, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer", "-t", "raw", pcm).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	b, err := os.ReadFile(pcm)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
	}
	return out
}

// loud returns the times of the first and last sample above −40 dBFS.
func loud(samples []float32) (first, last time.Duration) {
	const floor = 0.01 // −40 dBFS
	at := func(i int) time.Duration { return time.Duration(i) * time.Second / SampleRate }
	f, l := -1, -1
	for i, s := range samples {
		if math.Abs(float64(s)) > floor {
			if f < 0 {
				f = i
			}
			l = i
		}
	}
	return at(f), at(l)
}

// TestSpeechInSilence: the real model finds an espeak-ng utterance padded with silence (and
// faint noise) where it is, its first and last boundary within 100 ms of the first and last
// sample above −40 dBFS; silence alone and faint noise alone hold no speech.
func TestSpeechInSilence(t *testing.T) {
	d := realDetector(t)
	ctx := context.Background()
	noise := func(n int, amp float32) []float32 {
		out := make([]float32, n)
		x := uint32(12345)
		for i := range out {
			x = x*1664525 + 1013904223
			out[i] = amp * (float32(x>>8)/float32(1<<24)*2 - 1)
		}
		return out
	}
	for _, tc := range []struct {
		name, voice, text string
		before, after     time.Duration
	}{
		{"English", "en", "Remind me to call the dentist tomorrow at nine.", 1200 * time.Millisecond, 1500 * time.Millisecond},
		{"Chinese", "cmn", "明天早上九点提醒我给牙医打电话。", 800 * time.Millisecond, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			speech := spoken(t, tc.voice, tc.text)
			samples := noise(int(tc.before*SampleRate/time.Second), 0.0005)
			samples = append(samples, speech...)
			samples = append(samples, noise(int(tc.after*SampleRate/time.Second), 0.0005)...)
			first, last := loud(samples)
			segs, err := d.Segments(ctx, samples)
			if err != nil {
				t.Fatal(err)
			}
			if len(segs) == 0 {
				t.Fatalf("no speech found in %v of audio", time.Duration(len(samples))*time.Second/SampleRate)
			}
			start, end := segs[0].Start, segs[len(segs)-1].End
			t.Logf("%s: %d segment(s) %v; loud from %v to %v; start off by %v, end by %v", tc.name, len(segs), segs, first, last, start-first, end-last)
			if (start-first).Abs() > 100*time.Millisecond || (end-last).Abs() > 100*time.Millisecond {
				t.Fatalf("speech %v–%v, the audio is loud %v–%v: more than 100 ms apart", start, end, first, last)
			}
		})
	}
	for _, tc := range []struct {
		name    string
		samples []float32
	}{
		{"silence", make([]float32, 3*SampleRate)},
		{"faint noise", noise(3*SampleRate, 0.003)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			segs, err := d.Segments(ctx, tc.samples)
			if err != nil || len(segs) != 0 {
				t.Fatalf("Segments(%s) = %v, %v; want none", tc.name, segs, err)
			}
		})
	}
	// A cancelled context stops the run.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Segments(cctx, make([]float32, SampleRate)); err == nil {
		t.Fatal("Segments with a cancelled context: no error")
	}
}
