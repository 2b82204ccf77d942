package stt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hologramagent/hologram/memory/vad"
)

// byteLevel writes bs as a GPT-2 byte-level token.
func byteLevel(bs []byte) string {
	inv := map[byte]rune{}
	for r, b := range runeByte {
		inv[b] = r
	}
	var s strings.Builder
	for _, b := range bs {
		s.WriteRune(inv[b])
	}
	return s.String()
}

func tokenizerJSON(t *testing.T, vocab map[string]int, added map[int]string) []byte {
	t.Helper()
	type tok struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	}
	f := map[string]any{"model": map[string]any{"type": "BPE", "vocab": vocab}}
	var as []tok
	for id, c := range added {
		as = append(as, tok{id, c})
	}
	f["added_tokens"] = as
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var whisperSpecials = map[int]string{10: "<|endoftext|>", 11: "<|startoftranscript|>", 12: "<|en|>", 13: "<|zh|>",
	14: "<|yue|>", 15: "<|transcribe|>", 16: "<|translate|>", 17: "<|notimestamps|>", 18: "<|nocaptions|>", 19: "<|0.00|>"}

func TestTokens(t *testing.T) {
	ni := []byte("你") // three bytes, split between two tokens
	vocab := map[string]int{"Hello": 0, byteLevel([]byte(",")): 1, byteLevel([]byte(" world")): 2,
		byteLevel(ni[:2]): 3, byteLevel(append(ni[2:], []byte("好")...)): 4, byteLevel([]byte{0xff}): 5}
	tok, err := ParseTokens(tokenizerJSON(t, vocab, whisperSpecials))
	if err != nil {
		t.Fatal(err)
	}
	if tok.EndOfText != 10 || tok.StartOfTranscript != 11 || tok.Transcribe != 15 || tok.NoTimestamps != 17 {
		t.Fatalf("specials: %+v", tok)
	}
	if len(tok.Languages) != 3 || tok.Languages["yue"] != 14 || tok.Language(13) != "zh" || tok.Language(2) != "" {
		t.Fatalf("languages %v", tok.Languages)
	}
	for _, c := range []struct {
		ids  []int
		want string
	}{
		{[]int{0, 1, 2}, "Hello, world"},
		{[]int{11, 12, 15, 17, 0, 2, 10}, "Hello world"}, // specials left out
		{[]int{3, 4}, "你好"},                              // 你 whole again across tokens
		{[]int{3}, "\uFFFD"},                             // a cut character
		{[]int{0, 5}, "Hello\uFFFD"},                     // an invalid byte
		{[]int{0, 99, -1}, "Hello"},                      // ids outside the vocabulary
	} {
		if got := tok.Text(c.ids); got != c.want {
			t.Errorf("Text(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}

func TestTokensRefused(t *testing.T) {
	some := map[int]string{10: "<|endoftext|>", 11: "<|startoftranscript|>"}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not json", []byte("{"), "tokenizer"},
		{"wordpiece", []byte(`{"model":{"type":"WordPiece","vocab":{}}}`), "byte-level BPE"},
		{"not whisper", tokenizerJSON(t, map[string]int{"a": 0}, some), "no <|notimestamps|>, <|transcribe|>, language tokens"},
		{"huge id", []byte(`{"model":{"type":"BPE","vocab":{"a":99999999}}}`), "outside"},
		{"negative id", []byte(`{"model":{"type":"BPE","vocab":{"a":-1}}}`), "outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTokens(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestMelFilters(t *testing.T) {
	for _, n := range []int{80, 128} {
		w := melFilters(n)
		if len(w) != n || len(w[0]) != nFFT/2+1 {
			t.Fatalf("%d filters of %d bins", len(w), len(w[0]))
		}
		peak := 0
		for m, f := range w {
			var sum float64
			top := 0
			for k, v := range f {
				if v < 0 {
					t.Fatalf("filter %d bin %d: %v", m, k, v)
				}
				sum += v
				if v > f[top] {
					top = k
				}
			}
			if sum == 0 && m > 2 { // the lowest filters may fall between two bins at 40 Hz each
				t.Fatalf("filter %d is empty", m)
			}
			if top < peak {
				t.Fatalf("filter %d peaks at bin %d, below the previous one's %d", m, top, peak)
			}
			peak = top
		}
	}
}

func TestLogMelShapeAndSilence(t *testing.T) {
	f := LogMel(nil, 80)
	if len(f) != 80*Frames {
		t.Fatalf("%d features", len(f))
	}
	for _, v := range f {
		if v != -1.5 { // log10(1e-10) = −10, (−10 + 4) / 4
			t.Fatalf("silence gives %v", v)
		}
	}
	tone := make([]float32, SampleRate)
	for i := range tone {
		tone[i] = float32(0.5 * math.Sin(2*math.Pi*1000*float64(i)/SampleRate))
	}
	f = LogMel(tone, 80)
	var top float32 = -10
	for _, v := range f {
		top = max(top, v)
	}
	if top < 0 || top > 3 {
		t.Fatalf("a −6 dBFS tone peaks at %v", top)
	}
	// The 1 kHz filter is loudest in the middle of the tone; the padding is clamped 8 below.
	row := func(mel int) []float32 { return f[mel*Frames : (mel+1)*Frames] }
	best := 0
	for m := range 80 {
		if row(m)[50] > row(best)[50] {
			best = m
		}
	}
	if hz := 1000.0; best < 25 || best > 35 {
		t.Errorf("a %v Hz tone is loudest in mel bin %d", hz, best)
	}
	if got := row(best)[2000]; math.Abs(float64(got-(top-2))) > 1e-5 {
		t.Errorf("padding at %v, want the peak − 2 (8 in log10 / 4): %v", got, top-2)
	}
}

// wav writes 16-bit PCM WAV.
func wav(rate, channels int, frames [][]int16) []byte {
	var data bytes.Buffer
	for _, fr := range frames {
		for _, s := range fr {
			binary.Write(&data, binary.LittleEndian, s)
		}
	}
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+data.Len()))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(channels), uint32(rate), uint32(rate * channels * 2), uint16(channels * 2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(data.Len()))
	b.Write(data.Bytes())
	return b.Bytes()
}

func TestDecodeWAVWithoutFFmpeg(t *testing.T) {
	frames := make([][]int16, 22050) // 1 s of stereo at 22,050 Hz: left 0.5, right −0.25
	for i := range frames {
		frames[i] = []int16{16384, -8192}
	}
	opts := DecodeOptions{FFmpeg: "/nonexistent/ffmpeg"}
	got, err := Decode(context.Background(), wav(22050, 2, frames), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != SampleRate {
		t.Fatalf("%d samples, want %d", len(got), SampleRate)
	}
	if math.Abs(float64(got[100])-0.125) > 1e-4 {
		t.Fatalf("mixed down to %v, want 0.125", got[100])
	}
	opts.MaxDuration = 500 * time.Millisecond
	if got, _ := Decode(context.Background(), wav(22050, 2, frames), opts); len(got) != SampleRate/2 {
		t.Fatalf("cut to %d samples, want %d", len(got), SampleRate/2)
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"ogg", []byte("OggS\x00\x02 not really"), ErrNoFFmpeg, ""},
		{"empty", nil, nil, "empty audio"},
		{"no data chunk", wav(16000, 1, nil)[:36], nil, "no data chunk"},
		{"no frames", wav(16000, 1, nil), nil, "no audio"},
	} {
		_, err := Decode(context.Background(), c.data, opts)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestSpeechChunks(t *testing.T) {
	s := make([]float32, 80*SampleRate)
	sec := func(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }
	seg := func(a, b float64) vad.Segment { return vad.Segment{Start: sec(a), End: sec(b)} }
	segs := []vad.Segment{seg(1, 5), seg(10, 20), seg(25, 70)}
	var lens []float64
	for _, c := range speechChunks(s, segs) {
		lens = append(lens, float64(len(c))/SampleRate)
	}
	// 1–20 s fits one chunk (19 s of audio, the pause kept); 25–70 s is cut at 30 s.
	want := []float64{19, 30, 15}
	if len(lens) != len(want) {
		t.Fatalf("chunks %v, want %v", lens, want)
	}
	for i := range want {
		if math.Abs(lens[i]-want[i]) > 0.01 {
			t.Fatalf("chunks %v, want %v", lens, want)
		}
	}
	if got := speechChunks(s, nil); len(got) != 0 {
		t.Fatalf("no speech gives %d chunks", len(got))
	}
}

func TestJoinAndLoop(t *testing.T) {
	if got := joinParts([]string{"你好", "世界", "and then", "再见"}); got != "你好世界 and then 再见" {
		t.Errorf("joined %q", got)
	}
	same := []int{7, 7, 7, 7, 7, 7, 7, 7, 7}
	if !looping(same, 7) || looping(same, 8) || looping(same[1:], 7) {
		t.Error("looping")
	}
}
