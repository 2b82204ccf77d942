//go:build integration

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// soxStat returns the length (seconds) and RMS amplitude sox reports for a sound file.
func soxStat(t *testing.T, file string) (secs, rms float64) {
	t.Helper()
	out, err := exec.Command("sox", file, "-n", "stat").CombinedOutput()
	if err != nil {
		t.Fatalf("sox %s stat: %v\n%s", file, err, out)
	}
	num := func(label string) float64 {
		m := regexp.MustCompile(regexp.QuoteMeta(label) + `:\s+([0-9.eE+-]+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("sox stat has no %q:\n%s", label, out)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if strings.Contains(string(out), "WARN") {
		t.Errorf("sox warns about %s:\n%s", file, out)
	}
	return num("Length (seconds)"), num("RMS     amplitude")
}

// TestWaiterSay: `waiter say` speaks through a real homed (POST /api/v1/speech, espeak-ng) into a
// WAV that sox reads as at least half a second of audio above silence; Chinese text is spoken
// with espeak-ng's Mandarin voice, named on stderr.
func TestWaiterSay(t *testing.T) {
	for _, bin := range []string{"espeak-ng", "sox", "ffmpeg"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("HOLOGRAM_CI") == "1" {
				t.Fatalf("%s is not installed (.ci/deps.sh installs it)", bin)
			}
			t.Skipf("%s is not installed", bin)
		}
	}
	// The kernel chooses the voice of Latin text by its own locale.
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	e := newEnv(t)
	e.start()
	tests := []struct {
		name, text, voice string
	}{
		{"english", "Good morning. Your meeting with Dana starts at ten.", "en"},
		{"chinese", "早上好，你和王医生的约会在十点开始。", "cmn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(e.root, tt.name+".wav")
			_, errOut, code := e.waiter("", nil, "say", tt.text, "--out", out)
			if code != 0 {
				t.Fatalf("waiter say: exit %d: %s", code, errOut)
			}
			if !strings.Contains(errOut, "voice "+tt.voice+" ") {
				t.Errorf("stderr %q does not name voice %s", errOut, tt.voice)
			}
			secs, rms := soxStat(t, out)
			t.Logf("%s: %.2f s, RMS %.3f (%s)", tt.name, secs, rms, strings.TrimSpace(errOut))
			if secs < 0.5 || rms <= 0.005 {
				t.Errorf("%.2f s at RMS %.4f: want ≥ 0.5 s of non-silent audio", secs, rms)
			}
			if _, errOut, code := e.waiter("", nil, "say", tt.text, "--out", out); code == 0 || !strings.Contains(errOut, "refusing to overwrite") {
				t.Errorf("a second say over the file: exit %d: %s", code, errOut)
			}
		})
	}
	t.Run("ogg", func(t *testing.T) {
		// An .ogg name asks for Ogg/Opus: the kernel encodes with ffmpeg; decoded back to WAV it
		// is still speech.
		out := filepath.Join(e.root, "reply.ogg")
		if _, errOut, code := e.waiter("", nil, "say", tests[0].text, "--out", out); code != 0 {
			t.Fatalf("waiter say: exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 100 || string(b[:4]) != "OggS" || !strings.Contains(string(b[:200]), "OpusHead") {
			t.Fatalf("not Ogg/Opus: % x", b[:min(len(b), 64)])
		}
		wav := filepath.Join(e.root, "reply-decoded.wav")
		if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", out, wav).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg cannot decode it: %v: %s", err, out)
		}
		secs, rms := soxStat(t, wav)
		wavInfo, _ := os.Stat(filepath.Join(e.root, "english.wav"))
		t.Logf("ogg: %d bytes (the WAV: %d), %.2f s, RMS %.3f", len(b), wavInfo.Size(), secs, rms)
		if secs < 0.5 || rms <= 0.005 {
			t.Errorf("%.2f s at RMS %.4f: want ≥ 0.5 s of non-silent audio", secs, rms)
		}
	})
	if _, errOut, code := e.waiter("", nil, "say", "hello", "--out", "x.mp3", "--format", "mp3"); code != 2 || !strings.Contains(errOut, "wav or ogg") {
		t.Errorf("say --format mp3: exit %d: %s", code, errOut)
	}
	if _, errOut, code := e.waiter("", nil, "say", "hello"); code != 2 || !strings.Contains(errOut, "--out") {
		t.Errorf("say without --out: exit %d: %s", code, errOut)
	}
}
