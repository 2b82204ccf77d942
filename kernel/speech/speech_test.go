package speech

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVoice(t *testing.T) {
	tests := []struct {
		text string
		env  map[string]string
		want string
	}{
		{"Hello, how are you?", nil, "en"},
		{"你好，今天天气很好。", nil, "cmn"},
		{"我在 Google 工作，住在北京。", nil, "cmn"}, // Latin names in Chinese text
		{"The word 你好 means hello in Mandarin Chinese.", nil, "en"},
		{"Guten Tag", map[string]string{"LANG": "de_DE.UTF-8"}, "de"},
		{"Bonjour", map[string]string{"LC_ALL": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"}, "fr"},
		{"hello", map[string]string{"LANG": "C.UTF-8"}, "en"},
		{"hello", map[string]string{"LANG": "POSIX"}, "en"},
		{"hallo", map[string]string{"LANG": "de@euro"}, "de"},
		{"hello", map[string]string{"LANG": "zh_CN.UTF-8"}, "cmn"},
		{"hello", map[string]string{"LANG": "../../etc"}, "en"},
		{"1234 !!", nil, "en"},
	}
	for _, tt := range tests {
		s := Synth{Getenv: func(k string) string { return tt.env[k] }}
		if got := s.Voice(tt.text); got != tt.want {
			t.Errorf("Voice(%q) with %v = %q, want %q", tt.text, tt.env, got, tt.want)
		}
	}
}

func TestSpeakRefuses(t *testing.T) {
	tests := []struct {
		name string
		s    Synth
		text string
		want error
		msg  string
	}{
		{"no espeak-ng", Synth{Command: filepath.Join(t.TempDir(), "espeak-ng")}, "hello", ErrUnavailable, "apt install espeak-ng"},
		{"empty", Synth{}, "  \n", nil, "no text"},
		{"too long", Synth{}, strings.Repeat("a", MaxText+1), ErrTooLong, "over 10000 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := tt.s.Speak(context.Background(), tt.text, "", "", &buf)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err %v, want %v containing %q", err, tt.want, tt.msg)
			}
			if buf.Len() > 0 {
				t.Errorf("%d bytes written on error", buf.Len())
			}
		})
	}
}

// needEspeak fails under HOLOGRAM_CI (where .ci/deps.sh installs espeak-ng) and skips elsewhere.
func needEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatalf("espeak-ng is not installed (.ci/deps.sh installs it)")
		}
		t.Skip("espeak-ng is not installed: apt install espeak-ng")
	}
}

// wavStats reads a 16-bit mono WAV (whatever its header's sizes say) and returns its length in
// seconds and its RMS amplitude (full scale 1).
func wavStats(t *testing.T, b []byte) (secs, rms float64) {
	t.Helper()
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" || string(b[36:40]) != "data" {
		t.Fatalf("not a plain WAV: % x", b[:min(len(b), 44)])
	}
	if ch, bits := binary.LittleEndian.Uint16(b[22:]), binary.LittleEndian.Uint16(b[34:]); ch != 1 || bits != 16 {
		t.Fatalf("%d channels of %d bits, want 16-bit mono", ch, bits)
	}
	rate := binary.LittleEndian.Uint32(b[24:])
	pcm := b[44:]
	n := len(pcm) / 2
	var sum float64
	for i := 0; i < n; i++ {
		v := float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
		sum += v * v
	}
	return float64(n) / float64(rate), math.Sqrt(sum / float64(max(n, 1)))
}

func TestSpeak(t *testing.T) {
	needEspeak(t)
	tests := []struct {
		text, voice, wantVoice string
	}{
		{"Hello, this is your agent speaking.", "", "en"},
		{"你好，我是你的助手。", "", "cmn"},
		{"An unknown voice falls back to English.", "xx-nonexistent", "en"},
		{"-v --help is text, not a flag", "", "en"},
	}
	for _, tt := range tests {
		t.Run(tt.wantVoice+"/"+tt.voice, func(t *testing.T) {
			var buf bytes.Buffer
			got, err := Synth{Getenv: func(string) string { return "" }}.Speak(context.Background(), tt.text, tt.voice, "", &buf)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantVoice {
				t.Errorf("voice %q, want %q", got, tt.wantVoice)
			}
			secs, rms := wavStats(t, buf.Bytes())
			t.Logf("%q: %.2f s, RMS %.3f", tt.text, secs, rms)
			if secs < 0.5 || rms <= 0.005 {
				t.Errorf("%.2f s at RMS %.4f: want ≥ 0.5 s of non-silent audio", secs, rms)
			}
		})
	}
}

func TestSpeakCancelled(t *testing.T) {
	needEspeak(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	if _, err := (Synth{}).Speak(ctx, "hello", "en", "", &buf); err == nil {
		t.Fatal("a cancelled request spoke")
	}
}

func TestSpeakOgg(t *testing.T) {
	needEspeak(t)
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatal("ffmpeg is not installed (.ci/deps.sh installs it)")
		}
		t.Skip("ffmpeg is not installed")
	}
	for _, voice := range []string{"", "xx-nonexistent"} { // a fallback to English re-runs espeak-ng before ffmpeg starts
		var ogg, wav bytes.Buffer
		s := Synth{Getenv: func(string) string { return "" }}
		got, err := s.Speak(context.Background(), "Your train leaves at nine.", voice, FormatOgg, &ogg)
		if err != nil || got != "en" {
			t.Fatalf("voice %q: %q, %v", voice, got, err)
		}
		b := ogg.Bytes()
		if len(b) < 200 || string(b[:4]) != "OggS" || !bytes.Contains(b[:200], []byte("OpusHead")) || bytes.Count(b, []byte("OpusHead")) != 1 {
			t.Fatalf("voice %q: not one Ogg/Opus stream: % x", voice, b[:min(len(b), 64)])
		}
		if _, err := s.Speak(context.Background(), "Your train leaves at nine.", voice, "", &wav); err != nil {
			t.Fatal(err)
		}
		t.Logf("Ogg/Opus %d bytes, WAV %d bytes", len(b), wav.Len())
		if len(b)*3 > wav.Len() {
			t.Errorf("Ogg/Opus is %d bytes against the WAV's %d: not compressed", len(b), wav.Len())
		}
	}
	var buf bytes.Buffer
	_, err := Synth{FFmpeg: filepath.Join(t.TempDir(), "ffmpeg")}.Speak(context.Background(), "hi", "", FormatOgg, &buf)
	if !errors.Is(err, ErrNoFFmpeg) || buf.Len() > 0 {
		t.Errorf("without ffmpeg: %v, %d bytes", err, buf.Len())
	}
	if _, err := (Synth{}).Speak(context.Background(), "hi", "", "mp3", &buf); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("mp3: %v", err)
	}
}
