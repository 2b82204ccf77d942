package stt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNoFFmpeg is wrapped by [Decode]'s error when a format needs ffmpeg and it is missing.
var ErrNoFFmpeg = errors.New("ffmpeg is not installed (apt-get install ffmpeg)")

// DecodeOptions bound a decoding.
type DecodeOptions struct {
	// MaxDuration cuts the audio (≤ 0: [DefaultMaxDuration]).
	MaxDuration time.Duration
	// FFmpeg is the ffmpeg command ("" looks up "ffmpeg" on PATH).
	FFmpeg string
}

// DefaultMaxDuration is how much of a recording is transcribed: 15 minutes, 58 MB of samples.
const DefaultMaxDuration = 15 * time.Minute

// Decode turns an encoded recording (WAV, Ogg/Opus, MP3, M4A, WebM… anything ffmpeg reads)
// into 16 kHz mono samples in [-1, 1], cut at opts.MaxDuration. ffmpeg decodes and resamples;
// without it, 16-bit or float WAV is still read (resampled linearly) and other formats fail
// with [ErrNoFFmpeg].
func Decode(ctx context.Context, data []byte, opts DecodeOptions) ([]float32, error) {
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = DefaultMaxDuration
	}
	if len(data) == 0 {
		return nil, errors.New("stt: empty audio")
	}
	bin := opts.FFmpeg
	if bin == "" {
		bin = "ffmpeg"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		if isWAV(data) {
			return decodeWAV(data, opts.MaxDuration)
		}
		return nil, fmt.Errorf("stt: decode audio: %w", ErrNoFFmpeg)
	}
	return ffmpegDecode(ctx, path, data, opts.MaxDuration)
}

// ffmpegDecode runs ffmpeg over data written to a temporary file (MP4's index may sit at the
// end, so the input must be seekable) and reads raw float samples from its output.
func ffmpegDecode(ctx context.Context, bin string, data []byte, maxDur time.Duration) ([]float32, error) {
	f, err := os.CreateTemp("", "hologram-audio-*")
	if err != nil {
		return nil, fmt.Errorf("stt: decode audio: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("stt: decode audio: %w", err)
	}
	secs := strconv.FormatFloat(maxDur.Seconds(), 'f', 3, 64)
	cmd := exec.CommandContext(ctx, bin, "-nostdin", "-hide_banner", "-loglevel", "error",
		"-i", f.Name(), "-t", secs, "-vn", "-ac", "1", "-ar", strconv.Itoa(SampleRate), "-f", "f32le", "pipe:1")
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stt: ffmpeg: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stt: ffmpeg: %w", err)
	}
	limit := int64(maxDur.Seconds()*SampleRate+SampleRate) * 4
	raw, rerr := io.ReadAll(io.LimitReader(out, limit))
	_, _ = io.Copy(io.Discard, out) // let ffmpeg finish writing past the limit
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if werr != nil || rerr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = fmt.Sprint(errors.Join(werr, rerr))
		}
		return nil, fmt.Errorf("stt: ffmpeg cannot decode the audio: %s", msg)
	}
	if len(raw) < 4 {
		return nil, errors.New("stt: the recording holds no audio")
	}
	samples := make([]float32, len(raw)/4)
	for i := range samples {
		samples[i] = clamp(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return samples, nil
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}

func clamp(v float32) float32 {
	switch {
	case v != v: // NaN
		return 0
	case v > 1:
		return 1
	case v < -1:
		return -1
	}
	return v
}

func isWAV(data []byte) bool {
	return len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE"
}

// decodeWAV reads PCM (8, 16, 24 or 32-bit integer) or IEEE float WAV, mixes the channels
// down and resamples linearly to 16 kHz.
func decodeWAV(data []byte, maxDur time.Duration) ([]float32, error) {
	bad := func(why string) error { return fmt.Errorf("stt: unreadable WAV: %s", why) }
	var (
		format, channels, bits int
		rate                   int
		pcm                    []byte
	)
	for off := 12; off+8 <= len(data); {
		id, size := string(data[off:off+4]), int(binary.LittleEndian.Uint32(data[off+4:]))
		body := data[off+8:]
		if size < 0 || size > len(body) {
			size = len(body) // streamed WAVs leave the data size unset
		}
		switch id {
		case "fmt ":
			if size < 16 {
				return nil, bad("short fmt chunk")
			}
			format = int(binary.LittleEndian.Uint16(body))
			channels = int(binary.LittleEndian.Uint16(body[2:]))
			rate = int(binary.LittleEndian.Uint32(body[4:]))
			bits = int(binary.LittleEndian.Uint16(body[14:]))
			if format == 0xFFFE && size >= 26 { // WAVE_FORMAT_EXTENSIBLE: the sub-format's first two bytes
				format = int(binary.LittleEndian.Uint16(body[24:]))
			}
		case "data":
			pcm = body[:size]
		}
		off += 8 + size + size%2
	}
	switch {
	case channels <= 0 || rate <= 0:
		return nil, bad("no fmt chunk")
	case pcm == nil:
		return nil, bad("no data chunk")
	case format != 1 && format != 3:
		return nil, bad(fmt.Sprintf("encoding %d is not PCM or float (install ffmpeg to read it)", format))
	case format == 1 && bits != 8 && bits != 16 && bits != 24 && bits != 32, format == 3 && bits != 32:
		return nil, bad(fmt.Sprintf("%d-bit samples", bits))
	}
	width := bits / 8
	frames := len(pcm) / (width * channels)
	frames = min(frames, int(maxDur.Seconds()*float64(rate)))
	mono := make([]float32, frames)
	for i := range frames {
		var sum float64
		for c := range channels {
			p := pcm[(i*channels+c)*width:]
			var v float64
			switch {
			case format == 3:
				v = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
			case bits == 8:
				v = (float64(p[0]) - 128) / 128
			case bits == 16:
				v = float64(int16(binary.LittleEndian.Uint16(p))) / 32768
			case bits == 24:
				v = float64(int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24)>>8) / (1 << 23)
			default:
				v = float64(int32(binary.LittleEndian.Uint32(p))) / (1 << 31)
			}
			sum += v
		}
		mono[i] = clamp(float32(sum / float64(channels)))
	}
	if len(mono) == 0 {
		return nil, errors.New("stt: the recording holds no audio")
	}
	return resample(mono, rate), nil
}

// resample converts samples at rate to [SampleRate] by linear interpolation.
func resample(x []float32, rate int) []float32 {
	if rate == SampleRate {
		return x
	}
	n := int(int64(len(x)) * SampleRate / int64(rate))
	out := make([]float32, n)
	step := float64(rate) / SampleRate
	for i := range out {
		pos := float64(i) * step
		j := int(pos)
		frac := float32(pos - float64(j))
		a := x[min(j, len(x)-1)]
		b := x[min(j+1, len(x)-1)]
		out[i] = a + (b-a)*frac
	}
	return out
}
