package vad

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestSegments: probabilities per 32 ms window to segments — hysteresis, the minimum silence
// that ends speech, the minimum speech kept, pads that merge.
func TestSegments(t *testing.T) {
	w := func(n int, p float32) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = p
		}
		return out
	}
	cat := func(parts ...[]float32) []float32 {
		var out []float32
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	ms := func(windows int) time.Duration { return time.Duration(windows*window) * time.Second / SampleRate }
	pad := 30 * time.Millisecond
	for _, tc := range []struct {
		name  string
		probs []float32
		want  []Segment
	}{
		{"silence", w(50, 0.01), nil},
		{"speech throughout", w(20, 0.9), []Segment{{0, ms(20)}}},
		{"one stretch", cat(w(10, 0.1), w(20, 0.9), w(10, 0.1)), []Segment{{ms(10) - pad, ms(30) + pad}}},
		// 0.4 is above the end threshold (0.35): speech goes on through it.
		{"a dip that is not silence", cat(w(10, 0.1), w(10, 0.9), w(8, 0.4), w(10, 0.9), w(10, 0.1)), []Segment{{ms(10) - pad, ms(38) + pad}}},
		// Two windows (64 ms) of silence are under MinSilence (100 ms): still one segment.
		{"a short pause", cat(w(10, 0.1), w(10, 0.9), w(2, 0.05), w(10, 0.9), w(10, 0.1)), []Segment{{ms(10) - pad, ms(32) + pad}}},
		{"two utterances", cat(w(10, 0.1), w(10, 0.9), w(20, 0.05), w(10, 0.9), w(10, 0.1)),
			[]Segment{{ms(10) - pad, ms(20) + pad}, {ms(40) - pad, ms(50) + pad}}},
		// 5 windows = 160 ms < MinSpeech (250 ms): a click, not speech.
		{"too short", cat(w(10, 0.1), w(5, 0.9), w(10, 0.1)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := segments(tc.probs, len(tc.probs)*window, Options{}.withDefaults())
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("segments = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMissingModel: without the model New says where it looked and how to get it.
func TestMissingModel(t *testing.T) {
	_, err := ResolveModelDir(t.TempDir()+"/none", os.Getenv, "")
	if err == nil || !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("ResolveModelDir(missing) = %v, want ErrModelNotFound", err)
	}
	if _, err := New(nil, "", Options{}); err == nil {
		t.Fatal("New without a runtime: no error")
	}
}
