// Package video reads a video attachment for memory: [Keyframes] picks the frames worth keeping
// with ffmpeg's scene detection — the first frame always, then each scene change, at most one per
// MinGap and MaxFrames in all — as PNG images, which the kernel reads with OCR and stores as image
// blocks (a slide's text is found by search like a photo's).
package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// ErrNoPicture is returned for a file without a video stream (an audio recording in a video
// container, as browsers record voice in WebM).
var ErrNoPicture = errors.New("video: no picture in it")

// ErrNoFFmpeg is returned when ffmpeg is not installed.
var ErrNoFFmpeg = errors.New("video needs ffmpeg: install it with `sudo apt install ffmpeg`")

// Defaults of [Options].
const (
	// DefaultScene is the scene score (ffmpeg's select filter: 0 same picture … 1 all new) above
	// which a frame starts a new scene. A change of the drawn text on a plain slide scores about
	// 0.02–0.06 and the noise of compression between identical pictures under 0.005; a cut in
	// filmed video scores 0.3 and more. 0.01 keeps every slide change and drops the noise.
	DefaultScene = 0.01
	// DefaultMinGap is the least time between two keyframes: a fade or a busy shot that changes
	// every frame gives one keyframe per gap, not one per frame.
	DefaultMinGap = 2 * time.Second
	// DefaultMaxFrames bounds the keyframes of one video.
	DefaultMaxFrames = 60
	// DefaultMaxWidth scales wider frames down (OCR reads a 1280-pixel-wide frame well and a 4K
	// frame would be 4× the work).
	DefaultMaxWidth = 1280
)

// Options bound a keyframe extraction; zero fields take the defaults.
type Options struct {
	Scene     float64
	MinGap    time.Duration
	MaxFrames int
	MaxWidth  int
	// FFmpeg is the ffmpeg command ("" looks up "ffmpeg" on PATH).
	FFmpeg string
}

// Frame is one keyframe.
type Frame struct {
	Time time.Duration // from the start of the video
	PNG  []byte
}

var ptsTime = regexp.MustCompile(`pts_time:\s*([0-9.]+)`)

// Keyframes returns the keyframes of the video data (any container and codec ffmpeg reads: MP4,
// WebM, MKV, MOV…), in time order.
func Keyframes(ctx context.Context, data []byte, opts Options) ([]Frame, error) {
	var frames []Frame
	err := withInput(data, opts.FFmpeg, func(bin, dir, in string) (err error) {
		frames, err = keyframes(ctx, bin, dir, in, opts)
		return err
	})
	return frames, err
}

// Sound returns the video's audio track as Ogg/Opus (mono, 24 kHz, 32 kbit/s: speech stays
// clear at a tenth of a WAV's size), at most [MaxSound] of it, for speech recognition and to
// keep what was said findable without keeping the video.
func Sound(ctx context.Context, data []byte, ffmpeg string) ([]byte, error) {
	var b []byte
	err := withInput(data, ffmpeg, func(bin, dir, in string) (err error) {
		b, err = sound(ctx, bin, dir, in)
		return err
	})
	return b, err
}

// Video is what [Read] takes from a video.
type Video struct {
	Frames []Frame
	// Sound is the audio track as Ogg/Opus ([Sound]); nil with SoundErr set when there is
	// none ([ErrNoSound]) or it could not be read.
	Sound    []byte
	SoundErr error
}

// Read returns both the keyframes and the sound of a video, writing it to disk once. Its error
// is the keyframes' ([Keyframes]); the sound's is in Video.SoundErr.
func Read(ctx context.Context, data []byte, opts Options) (Video, error) {
	var v Video
	err := withInput(data, opts.FFmpeg, func(bin, dir, in string) (err error) {
		v, err = read(ctx, bin, dir, in, opts)
		return err
	})
	return v, err
}

// ReadFile is [Read] of a video file (an upload streamed to disk: a large video is never held
// in memory).
func ReadFile(ctx context.Context, path string, opts Options) (Video, error) {
	if st, err := os.Stat(path); err != nil {
		return Video{}, fmt.Errorf("video: %w", err)
	} else if st.Size() == 0 {
		return Video{}, errors.New("video: empty file")
	}
	var v Video
	err := withWorkDir(opts.FFmpeg, func(bin, dir string) (err error) {
		v, err = read(ctx, bin, dir, path, opts)
		return err
	})
	return v, err
}

func read(ctx context.Context, bin, dir, in string, opts Options) (Video, error) {
	var v Video
	var err error
	if v.Frames, err = keyframes(ctx, bin, dir, in, opts); err != nil {
		return Video{}, err
	}
	v.Sound, v.SoundErr = sound(ctx, bin, dir, in)
	return v, nil
}

// withInput finds ffmpeg (ffmpeg: its name, "" for "ffmpeg" on PATH) and writes data to a file
// in a new temporary directory (a file: MP4's index may sit at its end), which fn works in and
// which is removed afterwards.
func withInput(data []byte, ffmpeg string, fn func(bin, dir, in string) error) error {
	if len(data) == 0 {
		return errors.New("video: empty file")
	}
	return withWorkDir(ffmpeg, func(bin, dir string) error {
		in := filepath.Join(dir, "in")
		if err := os.WriteFile(in, data, 0o600); err != nil {
			return err
		}
		return fn(bin, dir, in)
	})
}

// withWorkDir finds ffmpeg and runs fn in a new temporary directory, removed afterwards.
func withWorkDir(ffmpeg string, fn func(bin, dir string) error) error {
	if ffmpeg == "" {
		ffmpeg = "ffmpeg"
	}
	bin, err := exec.LookPath(ffmpeg)
	if err != nil {
		return ErrNoFFmpeg
	}
	dir, err := os.MkdirTemp("", "hologram-video-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return fn(bin, dir)
}

// run runs ffmpeg with args and returns its messages; what, in the error, names what it read.
// A file without the stream it asked for is noStream.
func run(ctx context.Context, bin, what string, noStream error, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"-hide_banner", "-nostdin"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if bytes.Contains(stderr.Bytes(), []byte("does not contain any stream")) {
			return nil, noStream
		}
		return nil, fmt.Errorf("video: ffmpeg cannot read %s: %v: %s", what, err, tail(stderr.Bytes(), 400))
	}
	return stderr.Bytes(), nil
}

func keyframes(ctx context.Context, bin, dir, in string, opts Options) ([]Frame, error) {
	if opts.Scene <= 0 {
		opts.Scene = DefaultScene
	}
	if opts.MinGap <= 0 {
		opts.MinGap = DefaultMinGap
	}
	if opts.MaxFrames <= 0 {
		opts.MaxFrames = DefaultMaxFrames
	}
	if opts.MaxWidth <= 0 {
		opts.MaxWidth = DefaultMaxWidth
	}
	// The first frame, then frames that change the picture by more than the threshold and come
	// at least MinGap after the last one kept; showinfo logs the kept frames' times.
	sel := fmt.Sprintf("select='eq(n\\,0)+gt(scene\\,%g)*gte(t-prev_selected_t\\,%g)'", opts.Scene, opts.MinGap.Seconds())
	vf := sel + fmt.Sprintf(",scale='min(%d\\,iw)':-2", opts.MaxWidth) + ",showinfo"
	log, err := run(ctx, bin, "it", ErrNoPicture, "-loglevel", "info", "-i", in,
		"-an", "-sn", "-dn", "-vf", vf, "-fps_mode", "vfr", "-frames:v", strconv.Itoa(opts.MaxFrames),
		"-f", "image2", filepath.Join(dir, "k%03d.png"))
	if err != nil {
		return nil, err
	}
	var times []time.Duration
	for _, m := range ptsTime.FindAllSubmatch(log, -1) {
		if s, err := strconv.ParseFloat(string(m[1]), 64); err == nil {
			times = append(times, time.Duration(s*float64(time.Second)))
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "k*.png"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, ErrNoPicture
	}
	frames := make([]Frame, 0, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fr := Frame{PNG: b}
		if i < len(times) {
			fr.Time = times[i]
		}
		frames = append(frames, fr)
	}
	return frames, nil
}

// ErrNoSound is returned by [Sound] for a video without an audio stream.
var ErrNoSound = errors.New("video: no sound in it")

// MaxSound bounds the sound kept of one video: its first hour (at 32 kbit/s, about 15 MB).
const MaxSound = time.Hour

func sound(ctx context.Context, bin, dir, in string) ([]byte, error) {
	out := filepath.Join(dir, "sound.ogg")
	if _, err := run(ctx, bin, "its sound", ErrNoSound, "-loglevel", "error", "-i", in,
		"-vn", "-sn", "-dn", "-t", strconv.Itoa(int(MaxSound/time.Second)), "-ac", "1", "-ar", "24000",
		"-c:a", "libopus", "-b:a", "32k", "-application", "voip", "-f", "ogg", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// tail is the end of ffmpeg's messages (its reason comes last).
func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
