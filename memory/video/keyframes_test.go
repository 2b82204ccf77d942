package video

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

// needFFmpeg fails under HOLOGRAM_CI (where .ci/deps.sh installs ffmpeg and the fonts) and skips
// elsewhere.
func needFFmpeg(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("ffmpeg")
	if err == nil {
		_, err = os.Stat(font)
	}
	if err != nil {
		if os.Getenv("HOLOGRAM_CI") == "1" {
			t.Fatalf("ffmpeg and fonts-dejavu-core are needed (.ci/deps.sh installs them): %v", err)
		}
		t.Skip(err)
	}
}

// clip makes a video with ffmpeg from a lavfi source and filters.
func clip(t *testing.T, name, src, vf string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := append([]string{"-y", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", src}, args...)
	if vf != "" {
		cmd = append(cmd, "-vf", vf)
	}
	if !strings.HasPrefix(src, "sine") {
		cmd = append(cmd, "-pix_fmt", "yuv420p")
	}
	cmd = append(cmd, out)
	if b, err := exec.Command("ffmpeg", cmd...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// slides is a drawtext chain showing each text for secs seconds in turn, black on white.
func slides(texts []string, secs int) string {
	var parts []string
	for i, s := range texts {
		parts = append(parts, "drawtext=fontfile="+font+":fontsize=40:fontcolor=black:x=60:y=150:text='"+s+"'"+
			":enable='between(t\\,"+itoa(i*secs)+"\\,"+itoa((i+1)*secs)+"-0.001)'")
	}
	return strings.Join(parts, ",")
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestKeyframes(t *testing.T) {
	needFFmpeg(t)
	texts := []string{"Quarterly budget review", "Hire two engineers", "Launch in October"}
	tests := []struct {
		name       string
		video      func(t *testing.T) []byte
		opts       Options
		min, max   int
		wantTimes  []float64 // seconds, ±0.2
		wantBounds bool      // consecutive keyframes at least MinGap apart
	}{
		{"three slides mp4", func(t *testing.T) []byte {
			return clip(t, "s.mp4", "color=white:s=640x360:d=9:r=10", slides(texts, 3), "-c:v", "libx264")
		}, Options{}, 3, 3, []float64{0, 3, 6}, true},
		{"three slides webm", func(t *testing.T) []byte {
			return clip(t, "s.webm", "color=white:s=640x360:d=9:r=10", slides(texts, 3), "-c:v", "libvpx", "-b:v", "200k")
		}, Options{}, 3, 3, []float64{0, 3, 6}, true},
		{"one still picture", func(t *testing.T) []byte {
			return clip(t, "still.mkv", "color=white:s=320x240:d=5:r=10", slides(texts[:1], 5), "-c:v", "libx264")
		}, Options{}, 1, 1, []float64{0}, true},
		{"changing every frame", func(t *testing.T) []byte {
			return clip(t, "busy.mp4", "testsrc2=s=320x240:d=10:r=10", "", "-c:v", "libx264")
		}, Options{}, 1, 5, nil, true},
		{"at most MaxFrames", func(t *testing.T) []byte {
			return clip(t, "busy.mov", "testsrc2=s=320x240:d=10:r=10", "", "-c:v", "libx264")
		}, Options{MinGap: 100 * time.Millisecond, MaxFrames: 4}, 4, 4, nil, false},
		{"wide frames scaled", func(t *testing.T) []byte {
			return clip(t, "wide.mp4", "color=white:s=2560x1440:d=1:r=5", "", "-c:v", "libx264")
		}, Options{}, 1, 1, []float64{0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames, err := Keyframes(context.Background(), tt.video(t), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var times []string
			for _, f := range frames {
				times = append(times, f.Time.String())
			}
			t.Logf("%d keyframes at %v", len(frames), times)
			if len(frames) < tt.min || len(frames) > tt.max {
				t.Fatalf("%d keyframes, want %d–%d", len(frames), tt.min, tt.max)
			}
			for i, f := range frames {
				img, err := png.Decode(bytes.NewReader(f.PNG))
				if err != nil {
					t.Fatalf("keyframe %d: %v", i, err)
				}
				if w := img.Bounds().Dx(); w > DefaultMaxWidth {
					t.Errorf("keyframe %d is %d pixels wide", i, w)
				}
				if i < len(tt.wantTimes) && (f.Time.Seconds() < tt.wantTimes[i]-0.2 || f.Time.Seconds() > tt.wantTimes[i]+0.2) {
					t.Errorf("keyframe %d at %v, want %.1f s", i, f.Time, tt.wantTimes[i])
				}
				if tt.wantBounds && i > 0 && f.Time-frames[i-1].Time < DefaultMinGap-50*time.Millisecond {
					t.Errorf("keyframes %d and %d are %v apart", i-1, i, f.Time-frames[i-1].Time)
				}
			}
		})
	}
}

func TestKeyframesRefuses(t *testing.T) {
	needFFmpeg(t)
	if _, err := Keyframes(context.Background(), nil, Options{}); err == nil {
		t.Error("empty data accepted")
	}
	if _, err := Keyframes(context.Background(), []byte("this is not a video at all"), Options{}); err == nil || !strings.Contains(err.Error(), "ffmpeg cannot read it") {
		t.Errorf("text as video: %v", err)
	}
	if _, err := Keyframes(context.Background(), []byte("x"), Options{FFmpeg: filepath.Join(t.TempDir(), "ffmpeg")}); !errors.Is(err, ErrNoFFmpeg) {
		t.Errorf("without ffmpeg: %v", err)
	}
	voice := clip(t, "voice.webm", "sine=d=1", "", "-c:a", "libopus")
	if _, err := Keyframes(context.Background(), voice, Options{}); !errors.Is(err, ErrNoPicture) {
		t.Errorf("audio in a WebM: %v, want ErrNoPicture", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Keyframes(ctx, []byte("x"), Options{}); err == nil {
		t.Error("a cancelled extraction succeeded")
	}
}

func TestSound(t *testing.T) {
	needFFmpeg(t)
	withSound := func(t *testing.T) []byte {
		out := filepath.Join(t.TempDir(), "talk.mp4")
		if b, err := exec.Command("ffmpeg", "-y", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=white:s=320x240:d=3:r=10",
			"-f", "lavfi", "-i", "sine=frequency=440:d=3", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", out).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, b)
		}
		b, _ := os.ReadFile(out)
		return b
	}
	ogg, err := Sound(context.Background(), withSound(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ogg) < 1000 || string(ogg[:4]) != "OggS" || !bytes.Contains(ogg[:200], []byte("OpusHead")) {
		t.Fatalf("not Ogg/Opus: %d bytes % x", len(ogg), ogg[:min(len(ogg), 32)])
	}
	silent := clip(t, "silent.mp4", "color=white:s=320x240:d=2:r=10", "", "-c:v", "libx264")
	if _, err := Sound(context.Background(), silent, ""); !errors.Is(err, ErrNoSound) {
		t.Errorf("a video without sound: %v, want ErrNoSound", err)
	}
	if _, err := Sound(context.Background(), []byte("x"), filepath.Join(t.TempDir(), "ffmpeg")); !errors.Is(err, ErrNoFFmpeg) {
		t.Errorf("without ffmpeg: %v", err)
	}
}

// TestReadFile reads a video from a file (an upload streamed to disk) as Read reads its bytes.
func TestReadFile(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	data := clip(t, "talk.mp4", "color=white:s=320x240:d=6:r=10", slides([]string{"first slide", "second slide"}, 3), "-c:v", "libx264")
	path := filepath.Join(dir, "upload")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read(context.Background(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) != 2 || len(got.Frames) != len(want.Frames) || !errors.Is(got.SoundErr, ErrNoSound) {
		t.Errorf("ReadFile: %d frames (Read: %d), sound %v", len(got.Frames), len(want.Frames), got.SoundErr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("ReadFile removed its input: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{empty, filepath.Join(dir, "missing")} {
		if _, err := ReadFile(context.Background(), p, Options{}); err == nil {
			t.Errorf("ReadFile(%s) succeeded", filepath.Base(p))
		}
	}
}
